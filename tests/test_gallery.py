"""The samples in README.md and docs/gallery.md are what pmkit prints: docs/make_gallery.py runs every
sample's command on freshly generated studies and each committed sample must match its output.  The
sample read from the shared Extra-P data is compared where that data is present."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def gallery() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("make_gallery", ROOT / "docs" / "make_gallery.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _committed(module: types.ModuleType) -> dict[str, str]:
    found: dict[str, str] = {}
    for file in module.FILES:
        found.update(module.blocks(file.read_text(encoding="utf-8")))
    return found


def test_every_sample_matches_a_real_run(tmp_path):
    module = gallery()
    found = module.outputs(tmp_path, None)
    committed = _committed(module)
    assert set(committed) == {s.name for s in module.SAMPLES}, "every sample has one place in the docs"
    assert set(found) == {s.name for s in module.SAMPLES if s.where != module.SHARED}
    stale = [name for name, text in found.items() if committed[name] != text]
    assert not stale, f"stale samples {stale}: run `python docs/make_gallery.py` and commit the result"


def test_the_sample_of_real_data_matches(shared_data, tmp_path):
    module = gallery()
    committed = _committed(module)
    for sample in module.SAMPLES:
        if sample.where == module.SHARED:
            assert committed[sample.name] == module.run(sample, tmp_path, shared_data), sample.name


def test_fill_replaces_only_the_samples():
    module = gallery()
    text = "intro\n<!-- sample: a -->\n```text\nold\n```\n<!-- /sample -->\nend <!-- sample: b -->\n"
    assert module.fill(text, {"a": "new\nlines\n"}) == text.replace("old\n", "new\nlines\n")
    assert module.blocks(text) == {"a": "old\n"}
