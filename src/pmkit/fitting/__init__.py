"""Batched numeric kernels shared by the modelers: design matrices, least squares, error tables."""
