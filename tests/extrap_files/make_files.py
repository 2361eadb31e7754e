"""Write the ``.extra-p`` test files with the stock Extra-P, and what Extra-P reads back from them.

Run once with the Python of an environment where Extra-P is installed (it pins numpy<2, so not
pmkit's own environment); the files beside this script were produced by:

    /tmp/extrap-venv/bin/python tests/extrap_files/make_files.py ../shared/data tests/extrap_files

Each file is made by Extra-P from real inputs in the shared data folder (or, for the segmented
model, from a text input this script writes), models included, and saved with Extra-P's own
``write_experiment``.  ``reference.json`` then records, for each file as Extra-P's
``read_experiment`` loads it: parameters, call paths, metrics, every measurement's coordinate,
statistics and kept values, and every stored model's function evaluated at the experiment's
points and at extrapolation points.  pmkit's reader tests compare against it without Extra-P.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
from extrap.entities.measurement import Measure
from extrap.fileio.experiment_io import read_experiment, write_experiment
from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator

EXTRAPOLATION_FACTORS = (2.0, 8.0)


def _number(value: float) -> float | str:
    value = float(value)
    return value if math.isfinite(value) else str(value)


def segmented_input(folder: Path) -> Path:
    """A one-parameter text input whose time grows linearly, then flattens: Extra-P's segmented case."""
    xs = [2 ** k for k in range(1, 13)]
    rng = np.random.default_rng(7)
    lines = ["PARAMETER p", ""]
    lines += [f"POINTS ( {x} )" for x in xs]
    lines += ["", "REGION kernel", "METRIC time"]
    for x in xs:
        base = 3.0 + 0.5 * x if x <= 256 else 3.0 + 0.5 * 256
        reps = base * (1 + 0.01 * rng.standard_normal(3))
        lines.append("DATA " + " ".join(repr(float(v)) for v in reps))
    path = folder / "segmented.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def make(data: Path, out: Path) -> dict[str, Path]:
    """Create the experiments with Extra-P and save them; returns file name → path."""
    files = {}

    reader = CubeFileReader2()
    reader.keep_values = True
    cube = reader.read_experiment(str(data / "cube" / "extrap-mm-single"))
    ModelGenerator(cube, name="Extra-P default").model_all()
    files["mm_cube.extra-p"] = cube

    reader = TextFileReader()
    reader.keep_values = True
    text = reader.read_experiment(str(data / "extrap-formats" / "input" / "input_data_2p.txt"))
    ModelGenerator(text, name="mean model").model_all()
    ModelGenerator(text, name="median model", use_measure=Measure.MEDIAN).model_all()
    files["text_2p.extra-p"] = text

    with tempfile.TemporaryDirectory() as tmp:
        reader = TextFileReader()
        reader.keep_values = False
        seg = reader.read_experiment(str(segmented_input(Path(tmp))))
    ModelGenerator(seg, modeler="Segmented", name="segmented").model_all()
    ModelGenerator(seg, name="default").model_all()
    files["segmented.extra-p"] = seg

    paths = {}
    for name, experiment in files.items():
        paths[name] = out / name
        write_experiment(experiment, str(paths[name]))
    return paths


def describe(path: Path) -> dict:
    """What Extra-P reads from ``path``."""
    experiment = read_experiment(str(path))
    parameters = [p.name for p in experiment.parameters]
    coordinates = [tuple(float(v) for v in c) for c in experiment.coordinates]
    extrapolated = [tuple(v * f for v in coordinates[-1]) for f in EXTRAPOLATION_FACTORS]
    measurements = []
    for (callpath, metric), items in experiment.measurements.items():
        for m in items:
            values = None if m.values is None else np.ma.filled(np.ma.asarray(m.values, dtype=float), np.nan)
            measurements.append({
                "callpath": callpath.name, "metric": metric.name,
                "coordinate": [float(v) for v in m.coordinate],
                "mean": _number(m.mean), "median": _number(m.median),
                "minimum": _number(m.minimum), "maximum": _number(m.maximum),
                "values": None if values is None else [_number(v) for v in values.reshape(-1)],
                "values_shape": None if values is None else list(values.shape),
            })
    model_sets = []
    for generator in experiment.modelers:
        models = []
        for (callpath, metric), model in generator.models.items():
            function = model.hypothesis.function
            models.append({
                "callpath": callpath.name, "metric": metric.name,
                "type": type(function).__name__,
                "text": function.to_string(*parameters),
                "at_points": [_number(function.evaluate(c)) for c in coordinates],
                "extrapolated": [_number(function.evaluate(c)) for c in extrapolated],
                "RSS": _number(model.hypothesis.RSS), "SMAPE": _number(model.hypothesis.SMAPE),
            })
        model_sets.append({"name": generator.name, "modeler": type(generator.modeler).__name__,
                           "models": models})
    return {"parameters": parameters, "coordinates": coordinates, "extrapolated": extrapolated,
            "callpaths": [c.name for c in experiment.callpaths], "metrics": [m.name for m in experiment.metrics],
            "measurements": measurements, "model_sets": model_sets}


def main() -> None:
    data, out = Path(sys.argv[1]), Path(sys.argv[2])
    warnings.simplefilter("ignore")
    paths = make(data, out)
    reference = {name: describe(path) for name, path in paths.items()}
    reference["exp_only_mean_median.extra-p"] = describe(data / "extrap-formats" / "input" /
                                                         "exp_only_mean_median.extra-p")
    (out / "reference.json").write_text(json.dumps(reference, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
