"""Enables pmkit's pytest plugin for plugin authors: fixtures pmkit_registry, pmkit_sample_experiment, ..."""

pytest_plugins = ["pmkit.testing.plugins"]
