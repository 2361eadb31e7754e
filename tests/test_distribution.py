"""The distribution name (pmkit-hpc) agrees everywhere a user or a plugin installs pmkit from."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from pmkit.distribution import DISTRIBUTION, foreign_pmkit

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [ROOT / "plugins" / "pmkit-amdahl", ROOT / "adapters" / "extrap"]


def _project(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text())["project"]


def test_pyproject_names_the_distribution():
    assert _project(ROOT)["name"] == DISTRIBUTION
    assert _project(ROOT)["scripts"]["pmkit"] == "pmkit.cli:main"


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda p: p.name)
def test_plugins_and_adapters_depend_on_the_distribution(folder):
    deps = [re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0] for d in _project(folder)["dependencies"]]
    assert DISTRIBUTION in deps
    assert "pmkit" not in deps, "the registry's 'pmkit' is an unrelated project"


def test_no_install_instruction_names_the_foreign_package():
    docs = [ROOT / "README.md", *ROOT.glob("docs/*.md"), *(p / "README.md" for p in PACKAGES)]
    for doc in docs:
        for line in doc.read_text().splitlines():
            assert not re.search(r"pip install\s+(-U\s+)?['\"]?pmkit(['\"\s]|$|[<>=])", line), f"{doc.name}: {line}"


def test_foreign_pmkit_is_named(monkeypatch):
    from importlib import metadata

    class Foreign:
        version = "0.1.1"
        metadata: ClassVar[dict[str, str]] = {"Summary": "product management CLI"}

    def distribution(name):
        if name == "pmkit":
            return Foreign()
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", distribution)
    message = foreign_pmkit()
    assert message is not None and "pip uninstall pmkit" in message and DISTRIBUTION in message
    assert "product management CLI" in message


def test_no_foreign_pmkit_here():
    assert foreign_pmkit() is None
