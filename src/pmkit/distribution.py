"""Which installed distribution provides pmkit, and whether a different ``pmkit`` shadows it.

The package registry's ``pmkit`` name belongs to an unrelated project, so this one is distributed
as ``pmkit-hpc`` (the import package and the ``pmkit`` command keep their names).  A foreign
``pmkit`` distribution installed beside it owns the same import name; :func:`foreign_pmkit` says so
in words a user can act on.
"""

from __future__ import annotations

from importlib import metadata

DISTRIBUTION = "pmkit-hpc"
"""The name to ``pip install``; plugins depend on it (``pmkit-hpc>=0.2``)."""


def version() -> str:
    """The installed version of pmkit-hpc, or ``dev`` when running from a source tree."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "dev"


def foreign_pmkit() -> str | None:
    """A one-line warning when a distribution named ``pmkit`` (not this one) is installed, else None."""
    try:
        other = metadata.distribution("pmkit")
    except metadata.PackageNotFoundError:
        return None
    summary = (other.metadata.get("Summary") or "").strip()
    what = f" ({summary})" if summary else ""
    return (f"a different package named 'pmkit' {other.version}{what} is installed and shares pmkit-hpc's "
            f"import name; remove it with `pip uninstall pmkit` and reinstall `pip install {DISTRIBUTION}`")
