"""The engine behind the dashboard: configs, devices, data, models, training, results.

Never imports streamlit; TensorFlow is imported on first use (core.engine.tf_setup.tf()).
"""
