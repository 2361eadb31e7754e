"""The example study with the region names a C++ code really has: demangled signatures, namespaces,
templates, overloads and operators, as Score-P records them.

``python -m pmkit.testing.cxx_study DIR`` writes ``DIR/lulesh.p{8..512}.r{1..3}/profile.cubex``: the
call tree and values of :mod:`pmkit.testing.example_study` with every function named by its
signature (``void CalcAccelerationForNodes(Domain&, Index_t)``, ``Domain::Domain(Int_t, Index_t, …)``),
plus a few calls the views must take apart: two overloads of one function under one caller, a
templated operator from a namespace, ``std::vector<double>::operator[]``, a member-function-pointer
parameter and a function template with long arguments.  Two of the added calls grow with ``p``
(``CalcMonotonicQGradientsForElems`` like p^(1/3)·log2(p), the vector ``operator*`` like
log2(p)), so that the ranking shows C++ names too.  The tests render it at 80, 120 and 160 columns.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pmkit.testing import example_study as base

SIGNATURES = {
    "main": "int main(int, char**)",
    "InitMeshDecomp": "void InitMeshDecomp(Int_t, Int_t, Int_t*, Int_t*, Int_t*, Int_t*)",
    "Domain::Domain": "Domain::Domain(Int_t, Index_t, Index_t, Index_t, Index_t, Int_t, Int_t, Int_t, Int_t)",
    "BuildMesh": "void Domain::BuildMesh(Int_t, Int_t, Int_t)",
    "SetupCommBuffers": "void Domain::SetupCommBuffers(Int_t)",
    "TimeIncrement": "void TimeIncrement(Domain&)",
    "LagrangeLeapFrog": "void LagrangeLeapFrog(Domain&)",
    "LagrangeNodal": "void LagrangeNodal(Domain&)",
    "CalcForceForNodes": "void CalcForceForNodes(Domain&)",
    "CommRecv": "void CommRecv(Domain&, Int_t, Index_t, Index_t, Index_t, Index_t, bool, bool)",
    "CommSend": "void CommSend(Domain&, Int_t, Index_t, Real_t& (Domain::**)(Index_t), Index_t, Index_t, "
                "Index_t, bool, bool)",
    "CalcVolumeForceForElems": "void CalcVolumeForceForElems(Domain&)",
    "IntegrateStressForElems": "void IntegrateStressForElems(Domain&, Real_t*, Real_t*, Real_t*, Real_t*, "
                               "Index_t, Index_t)",
    "CalcHourglassControlForElems": "void CalcHourglassControlForElems(Domain&, Real_t*, Real_t)",
    "CommSBN": "void CommSBN(Domain&, Int_t, Real_t& (Domain::**)(Index_t))",
    "CalcAccelerationForNodes": "void CalcAccelerationForNodes(Domain&, Index_t)",
    "CalcVelocityForNodes": "void CalcVelocityForNodes(Domain&, Real_t, Real_t, Real_t, Index_t)",
    "CalcPositionForNodes": "void CalcPositionForNodes(Domain&, Real_t, Index_t)",
    "LagrangeElements": "void LagrangeElements(Domain&, Index_t)",
    "CalcLagrangeElements": "void CalcLagrangeElements(Domain&)",
    "CalcQForElems": "void CalcQForElems(Domain&)",
    "CommMonoQ": "void CommMonoQ(Domain&)",
    "ApplyMaterialPropertiesForElems": "void ApplyMaterialPropertiesForElems(Domain&)",
    "EvalEOSForElems": "void EvalEOSForElems(Domain&, Real_t*, Int_t, Int_t*, Int_t)",
    "CalcTimeConstraintsForElems": "void CalcTimeConstraintsForElems(Domain&)",
    "VerifyAndWriteFinalOutput": "void VerifyAndWriteFinalOutput(Real_t, Domain&, Int_t, Int_t)",
    "write_output": "void lulesh::io::WriteSiloOutput<double>(lulesh::Domain const&, std::__cxx11::basic_string"
                    "<char, std::char_traits<char>, std::allocator<char> > const&)",
}
"""Signatures of the example study's functions (MPI calls and the loop region keep their names)."""

_EOS = (SIGNATURES["main"], "lulesh_loop", SIGNATURES["LagrangeLeapFrog"], SIGNATURES["LagrangeElements"],
        SIGNATURES["ApplyMaterialPropertiesForElems"], SIGNATURES["EvalEOSForElems"])
_Q = (SIGNATURES["main"], "lulesh_loop", SIGNATURES["LagrangeLeapFrog"], SIGNATURES["LagrangeElements"],
      SIGNATURES["CalcQForElems"])
_STRESS = (SIGNATURES["main"], "lulesh_loop", SIGNATURES["LagrangeLeapFrog"], SIGNATURES["LagrangeNodal"],
           SIGNATURES["CalcForceForNodes"], SIGNATURES["CalcVolumeForceForElems"],
           SIGNATURES["IntegrateStressForElems"])

OVERLOAD_A = "void CalcPressureForElems(Real_t*, Real_t*, Real_t*, Real_t*, Index_t)"
OVERLOAD_B = "void CalcPressureForElems(Real_t*, Real_t*, Index_t)"
VECTOR_OP = "lulesh::Vec3<double> lulesh::operator*<double>(lulesh::Vec3<double> const&, double)"
SUBSCRIPT = "std::vector<double, std::allocator<double> >::operator[](unsigned long)"
GRADIENTS = ("void CalcMonotonicQGradientsForElems(Domain&, std::vector<Index_t, std::allocator<Index_t> > "
             "const&)")
VOLUME = "Real_t CalcElemVolume<Real_t>(Real_t const*, Real_t const*, Real_t const*)"

EXTRA = {
    (*_EOS, OVERLOAD_A): lambda p: 4e-4,
    (*_EOS, OVERLOAD_B): lambda p: 1.5e-4,
    (*_EOS, SUBSCRIPT): lambda p: 3e-4,
    (*_STRESS, VOLUME): lambda p: 2e-4,
    (*_STRESS, VECTOR_OP): lambda p: 5e-5 + 4e-5 * np.log2(p),
    (*_Q, GRADIENTS): lambda p: 1e-4 + 2e-5 * p ** (1 / 3) * np.log2(p),
}
"""Calls added to the example study's tree, with their exclusive seconds per rank and time step."""


def callpaths() -> list[tuple[str, ...]]:
    """Every call path as its region names, in the order of the values :func:`run_values` gives."""
    renamed = [tuple(SIGNATURES.get(name, name) for name in path.split("->")) for path in base.CALLPATHS]
    return renamed + list(EXTRA)


def run_values(p: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The example study's values for one run, with rows for the added calls."""
    values = base.run_values(p, rng)
    extra = np.array([[law(p)] * p for law in EXTRA.values()]) * base.ITERATIONS
    extra *= rng.uniform(1 - base.NOISE, 1 + base.NOISE, size=extra.shape)
    visits = np.full(extra.shape, float(base.ITERATIONS))
    return {"time": np.vstack([values["time"], extra]), "visits": np.vstack([values["visits"], visits]),
            "bytes_sent": np.vstack([values["bytes_sent"], np.zeros(extra.shape)])}


def generate(directory: str | Path, processes: Sequence[int] = base.PROCESSES, repetitions: int = base.REPETITIONS,
             seed: int = base.SEED) -> list[Path]:
    """Write the study into ``directory``; returns the files written (the same bytes for the same seed)."""
    return base.write_runs(directory, callpaths(), run_values, processes, repetitions, seed,
                           "pmkit C++ example study (Score-P style)")


def main(argv: Sequence[str] | None = None) -> int:
    return base.command(argv, "pmkit.testing.cxx_study", __doc__, generate)


if __name__ == "__main__":
    sys.exit(main())
