"""Record what Extra-P reads from a Cube study, as the reference tests/test_cube_reader.py checks against.

Run with Extra-P's own interpreter (it pins numpy<2, so it lives in its own virtualenv):

    /tmp/extrap-venv/bin/python tests/cube_reference/record_extrap.py \
        ../shared/data/cube/extrap-mm-single > tests/cube_reference/extrap-mm-single.json
"""

import json
import sys
import warnings

from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2


def record(path: str) -> dict:
    out: dict = {"extrap_version": __import__("extrap").__version__, "scalings": {}}
    for scaling in ("weak", "strong"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exp = CubeFileReader2().read_cube_file(path, scaling)
        out["parameters"] = [str(p) for p in exp.parameters]
        out["points"] = [list(c.as_tuple()) for c in exp.coordinates]
        out["callpaths"] = [str(c) for c in exp.callpaths]
        out["metrics"] = [str(m) for m in exp.metrics]
        values = {}
        for (callpath, metric), measurements in exp.measurements.items():
            for m in measurements:
                key = f"{callpath}|{metric}|{','.join(repr(float(v)) for v in m.coordinate.as_tuple())}"
                values[key] = {"mean": float(m.mean), "median": float(m.median),
                               "minimum": float(m.minimum), "maximum": float(m.maximum)}
        out["scalings"][scaling] = values
    return out


if __name__ == "__main__":
    json.dump(record(sys.argv[1]), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
