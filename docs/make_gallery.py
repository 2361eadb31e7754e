"""Write the output samples of README.md and docs/gallery.md from real runs of pmkit.

    python docs/make_gallery.py            # rewrite the samples in README.md and docs/gallery.md
    python docs/make_gallery.py --check    # exit 1 if a sample differs from what pmkit prints now

A sample is a fenced block between ``<!-- sample: NAME -->`` and ``<!-- /sample -->``; :data:`SAMPLES`
says which command prints it.  The commands run in this process, at 80 columns unless a sample says
otherwise, on studies generated here (the example study, its optimised and strong-scaling variants, the
C++ study, the Perf-Taint study of ``bench/taint_prior.py`` and the PAPI study of
:mod:`pmkit.testing.papi_study`)
and, for one sample, on the shared Extra-P test study (``$PMKIT_SHARED_DATA`` or ``../shared/data``;
left as it is when absent).  Built-in plugins
only, no colour, trailing spaces removed.  ``tests/test_gallery.py`` runs the same commands and
fails when a committed sample no longer matches, so the documentation shows what pmkit prints.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FILES = (ROOT / "README.md", ROOT / "docs" / "gallery.md")
BLOCK = re.compile(r"(?P<head><!-- sample: (?P<name>[\w-]+) -->\n```\w*\n)(?P<body>.*?)(?P<tail>```\n<!-- /sample -->)",
                   re.S)
SHARED = "shared"
"""A sample's ``where`` for the shared data folder (its ``cube`` subfolder)."""


@dataclass(frozen=True)
class Sample:
    """One sample: the ``pmkit`` arguments, run in ``where`` (the generated studies' folder, or
    :data:`SHARED`) at ``columns``; ``keep`` shortens the output (and the sample says so)."""

    name: str
    args: tuple[str, ...]
    columns: int = 80
    where: str = "studies"
    keep: Callable[[str], str] | None = None


def first_lines(count: int) -> Callable[[str], str]:
    """Keep the first ``count`` lines and mark the cut with ``…``."""
    def keep(text: str) -> str:
        lines = text.splitlines()
        return "\n".join(lines[:count] + (["…"] if len(lines) > count else [])) + "\n"
    return keep


def json_excerpt(text: str) -> str:
    """``pmkit show --json``: the ``show`` entry and the MPI_Gather model with its prediction, numbers
    to six significant digits; ``"..."`` marks what is left out."""
    document = json.loads(text)
    gather = next(m for m in document["models"] if m["callpath"].endswith("->MPI_Gather"))
    keys = ("callpath", "metric", "text", "pretty", "prediction")
    excerpt = {"schema": document["schema"], "show": document["show"],
               "models": ["...", {k: gather[k] for k in keys}, "..."]}
    return json.dumps(_rounded(excerpt), indent=2, ensure_ascii=False) + "\n"


def strong_json_excerpt(text: str) -> str:
    """``pmkit show strong-study --json``: the ``show`` entry (speed-ups, strong-scaling view) and the halo
    exchange's MPI_Waitall with its prediction and behaviour, numbers to six significant digits."""
    document = json.loads(text)
    waitall = next(m for m in document["models"] if m["callpath"].endswith("->MPI_Waitall"))
    excerpt = {"schema": document["schema"], "show": document["show"],
               "models": ["...", {k: waitall[k] for k in ("callpath", "pretty", "prediction")}, "..."]}
    return json.dumps(_rounded(excerpt), indent=2, ensure_ascii=False) + "\n"


def until(marker: str) -> Callable[[str], str]:
    """Keep the lines before the first one starting with ``marker`` and mark the cut with ``…``."""
    def keep(text: str) -> str:
        lines = text.splitlines()
        end = next((i for i, line in enumerate(lines) if line.startswith(marker)), len(lines))
        return "\n".join(lines[:end] + (["…"] if end < len(lines) else [])) + "\n"
    return keep


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def apmt_excerpt(text: str) -> str:
    """``pmkit show --modeler apmt``: the header (down to the speed-up), the per-kernel table at the target and
    the validation."""
    lines = text.splitlines()
    table = next(i for i, line in enumerate(lines) if line.startswith("APMT kernels at") and "(target)" in line)
    end = next(i for i in range(table, len(lines)) if lines[i].startswith("total "))
    check = next(i for i, line in enumerate(lines) if line.startswith("APMT closed-loop validation"))
    last = next(i for i in range(check, len(lines)) if lines[i].startswith("mean error"))
    header = next(i for i, line in enumerate(lines) if line.startswith("speed-up "))
    return "\n".join([*lines[:header + 1], "…", *lines[table:end + 1], "…", *lines[check:last + 1]]) + "\n"


SAMPLES: tuple[Sample, ...] = (
    Sample("readme-show", ("show", "example-study", "--depth", "3", "--top", "3", "--detector", "imbalance",
                           "-D", "threshold=1")),
    Sample("show", ("show", "example-study")),
    Sample("show-depth", ("show", "example-study", "--at", "p=32768", "--depth", "3", "-D", "threshold=1")),
    Sample("show-detail", ("show", "example-study", "--at", "p=32768", "--callpath", "MPI_Gather")),
    Sample("show-cxx", ("show", "lulesh-cxx", "-D", "threshold=1")),
    Sample("show-cxx-120", ("show", "lulesh-cxx", "--depth", "7", "--top", "3", "-D", "threshold=1"), columns=120),
    Sample("model-cxx", ("model", "lulesh-cxx", "--metric", "time"), keep=first_lines(16)),
    Sample("show-real", ("show", "extrap-mm-single"), where=SHARED),
    Sample("show-taint", ("show", "taint-study", "--prior", "taint.json")),
    Sample("compare", ("compare", "example-study", "example-optimised")),
    Sample("markdown", ("show", "example-study", "--markdown", "--top", "3", "--depth", "2")),
    Sample("json", ("show", "example-study", "--json", "--at", "p=65536"), keep=json_excerpt),
    Sample("show-apmt", ("show", "papi-study", "--modeler", "apmt", "--at", "p=256"), keep=apmt_excerpt),
    Sample("readme-strong", ("show", "strong-study", "--top", "3"), keep=until("╭─ Findings")),
    Sample("show-strong", ("show", "strong-study", "--top", "5", "--detector", "imbalance")),
    Sample("show-strong-negative", ("show", "strong-study", "-O", "falling=false", "--at", "p=1024", "--top", "3",
                                    "--detector", "imbalance"), columns=100, keep=until("Limiting the speed-up")),
    Sample("show-strong-detail", ("show", "strong-study", "--callpath", "MPI_Waitall", "--detector", "imbalance"),
           keep=until("Measured")),
    Sample("show-strong-markdown", ("show", "strong-study", "--markdown", "--top", "3", "--detector", "imbalance"),
           keep=until("### Call tree")),
    Sample("json-strong", ("show", "strong-study", "--json", "--detector", "imbalance"), keep=strong_json_excerpt),
)


def make_studies(folder: Path) -> None:
    """Write the studies the samples read into ``folder``."""
    from pmkit.testing import cxx_study, example_study, papi_study

    example_study.generate(folder / "example-study")
    example_study.generate_strong(folder / "strong-study")
    papi_study.write_study(folder / "papi-study")
    example_study.generate(folder / "example-optimised", optimised=True)
    cxx_study.generate(folder / "lulesh-cxx")
    taint = _load(ROOT / "bench" / "taint_prior.py")
    taint.study(1, ("p",), 0.05, folder)
    (folder / "seed1").rename(folder / "taint-study")
    (folder / "taint.json").write_text(json.dumps(taint.taint_json()), encoding="utf-8")


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shared_data() -> Path | None:
    """The shared data folder, or None where it is absent."""
    path = Path(os.environ.get("PMKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
    return path if path.is_dir() else None


@contextlib.contextmanager
def _session(cwd: Path, columns: int) -> Iterator[None]:
    """Run in ``cwd`` with ``COLUMNS`` set, no colour forced, built-in plugins only."""
    from pmkit.plugins import build_registry
    from pmkit.testing.plugins import using_registry

    saved = {name: os.environ.get(name) for name in ("COLUMNS", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE")}
    here = Path.cwd()
    os.environ["COLUMNS"] = str(columns)
    for name in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE"):
        os.environ.pop(name, None)
    os.chdir(cwd)
    try:
        with using_registry(build_registry(entry_points=False)):
            yield
    finally:
        os.chdir(here)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run(sample: Sample, studies: Path, shared: Path | None) -> str | None:
    """What ``pmkit`` prints for ``sample`` (None when its data is absent)."""
    from pmkit.cli import main

    where = studies if sample.where == "studies" else (shared / "cube" if shared is not None else None)
    if where is None:
        return None
    out = io.StringIO()
    with _session(where, sample.columns), contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(sample.args))
    if code != 0:
        raise RuntimeError(f"pmkit {' '.join(sample.args)} exited with {code}")
    text = "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"
    return sample.keep(text) if sample.keep is not None else text


def outputs(studies: Path, shared: Path | None) -> dict[str, str]:
    """Every sample's output by name, the studies generated into ``studies`` (samples without data left out)."""
    make_studies(studies)
    found = {}
    for sample in SAMPLES:
        text = run(sample, studies, shared)
        if text is not None:
            found[sample.name] = text
    return found


def blocks(text: str) -> dict[str, str]:
    """The samples of a Markdown file by name."""
    return {m.group("name"): m.group("body") for m in BLOCK.finditer(text)}


def fill(text: str, found: dict[str, str]) -> str:
    """``text`` with each sample it has replaced by its output (samples not found stay as they are)."""
    return BLOCK.sub(lambda m: m.group("head") + found.get(m.group("name"), m.group("body")) + m.group("tail"), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a sample is stale, writing nothing")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        found = outputs(Path(folder), shared_data())
    stale = []
    for file in FILES:
        text = file.read_text(encoding="utf-8")
        new = fill(text, found)
        if new != text:
            stale.append(file.name)
            if not args.check:
                file.write_text(new, encoding="utf-8")
    named = {name for file in FILES for name in blocks(file.read_text(encoding="utf-8"))}
    missing = [s.name for s in SAMPLES if s.name not in named]
    if missing:
        print(f"samples without a place in README.md or docs/gallery.md: {', '.join(missing)}", file=sys.stderr)
        return 1
    if stale:
        print(("stale: " if args.check else "rewrote: ") + ", ".join(stale), file=sys.stderr)
        return 1 if args.check else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
