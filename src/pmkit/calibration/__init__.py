"""Calibration of the "usual" time of MPI calls (Kluge, Knüpfer, Nagel): samples, fits, the reference.

:mod:`~pmkit.calibration.samples` collects the times of repeated calls per (operation, processes,
bytes); :mod:`~pmkit.calibration.distributions` fits a Poisson and a discrete exponential model to
each sample and finds its ``t_max``; :mod:`~pmkit.calibration.reference` holds the results, the
function ``T_f(p, bytes)`` over them, and their versioned JSON form.
"""
