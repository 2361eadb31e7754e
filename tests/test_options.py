"""Declared plugin options: parsing from the command line and checking from the SDK."""

from __future__ import annotations

import pytest

from pmkit.errors import UsageError
from pmkit.options import Option, parse_assignments, resolve_options

DECLARED = (
    Option("threshold", float, 1.5, "acceptance threshold"),
    Option("fast", bool, False, "skip refinement"),
    Option("measure", str, "mean", "reduction", choices=("mean", "median")),
)


def test_defaults_and_parsed_strings():
    values = resolve_options(DECLARED, {"threshold": "2", "fast": "yes"}, "modeler x")
    assert values == {"threshold": 2.0, "fast": True, "measure": "mean"}


def test_unknown_option_lists_known_ones():
    with pytest.raises(UsageError, match="modeler x has no option speed; its options: fast, measure, threshold"):
        resolve_options(DECLARED, {"speed": "1"}, "modeler x")


def test_bad_values_are_usage_errors():
    with pytest.raises(UsageError, match="not a valid float"):
        resolve_options(DECLARED, {"threshold": "high"}, "m")
    with pytest.raises(UsageError, match="not one of"):
        resolve_options(DECLARED, {"measure": "mode"}, "m")
    with pytest.raises(UsageError, match="must be bool"):
        resolve_options(DECLARED, {"fast": 3}, "m")


def test_parse_assignments():
    assert parse_assignments(["a=1", " b = x=y "]) == {"a": "1", "b": "x=y"}
    with pytest.raises(UsageError, match="name=value"):
        parse_assignments(["novalue"])
