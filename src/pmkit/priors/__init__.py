"""Built-in priors: Perf-Taint."""
