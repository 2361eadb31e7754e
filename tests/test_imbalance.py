"""The load-imbalance detector on per-location values: the example study's planted imbalance."""

from __future__ import annotations

import numpy as np
import pytest

import pmkit
from pmkit.detectors.imbalance import ImbalanceDetector
from pmkit.experiment import ExperimentBuilder
from pmkit.testing.example_study import IMBALANCED, generate
from pmkit.ui.quantities import format_value


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("imbalance") / "study"
    generate(folder, processes=(8, 27, 64), repetitions=2)
    experiment = pmkit.read(folder)
    return experiment, pmkit.model(experiment, metrics=["time"])


def test_planted_imbalance_is_found_and_ranked_first(study):
    experiment, models = study
    findings = ImbalanceDetector().detect(experiment, models)
    by_path = {f.callpath: f for f in findings}
    # output written by rank 0 alone: everyone else waits for it (max/mean = p at p = 64)
    assert findings[0].callpath == "main->VerifyAndWriteFinalOutput->write_output"
    assert findings[0].evidence["slowest_locations"][0] == 0
    assert findings[0].evidence["imbalance"] == pytest.approx(63, rel=0.01)
    # every fourth rank does 60 % more work: max/mean = 1.6 / (1 + 0.6 / 4) at p = 64, ±2 % noise
    planted = by_path[IMBALANCED]
    assert planted.evidence["imbalance"] == pytest.approx(1.6 / 1.15 - 1, abs=0.05)
    assert all(k % 4 == 0 for k in planted.evidence["slowest_locations"])
    assert set(planted.evidence["imbalance_by_point"]) == {"p=8", "p=27", "p=64"}
    assert [f.severity for f in findings] == sorted((f.severity for f in findings), reverse=True)
    # the wait in the units the severity column shows ("34.6 ms"), not "0.0346 sec" beside it
    assert findings[0].message.startswith(f"others wait {format_value(findings[0].severity, 's')} at p=64 (")
    assert " sec " not in findings[0].message
    balanced = {f.callpath for f in findings}
    assert "main->MPI_Init" not in balanced and "main->Domain::Domain->BuildMesh" not in balanced


def test_thresholds_and_inputs_without_locations(study):
    experiment, models = study
    assert IMBALANCED not in {f.callpath for f in ImbalanceDetector().detect(experiment, models, threshold=0.6)}
    assert ImbalanceDetector().detect(experiment, models, threshold=100) == []
    b = ExperimentBuilder(["p"])
    for p in (2, 4, 8):
        b.add_values("main", "time", [p], [1.0])
    flat = b.build()
    assert ImbalanceDetector().detect(flat, pmkit.model(flat)) == []


def test_registered_and_run_by_detect(study):
    experiment, models = study
    findings = pmkit.detect(experiment, models, ["imbalance"], threshold=0.3)
    assert findings and findings[0].detector == "imbalance"
    assert all(np.isfinite(f.severity) for f in findings)
