"""What a person picks: one run's or one sweep's settings (config), a comparison's axis (axes), the preset buttons
(presets) and the device modes the Train view offers on this machine (device_modes)."""
