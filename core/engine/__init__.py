"""What runs TensorFlow: datasets, models, execution modes, training, sweeps and the device's measurements.

TensorFlow is imported on first use (tf_setup.tf()); nothing here imports streamlit.
"""
