"""Rich rendering of experiments, models and findings; renders to a Console passed in, never models."""
