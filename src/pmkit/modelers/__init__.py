"""Built-in modelers: refining PMNF, multi-parameter."""
