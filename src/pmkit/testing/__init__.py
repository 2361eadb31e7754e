"""Helpers for tests and examples: a small Cube writer and the generator of the example study."""
