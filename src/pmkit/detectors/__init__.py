"""Built-in detectors."""
