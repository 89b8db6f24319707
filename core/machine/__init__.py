"""The machine: what it has (its devices and their backends, checked once), how a device is named, how busy it is."""
