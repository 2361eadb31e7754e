"""Declared plugin options: parsing from the command line and checking from the SDK."""

from __future__ import annotations

import pytest

from pmkit.errors import UsageError
from pmkit.options import Option, parse_assignments, parse_pairs, resolve_options, route_options, with_defaults

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


def test_parse_assignments_names_the_flag():
    assert parse_assignments(["a=1", " b = x=y "]) == {"a": "1", "b": "x=y"}
    with pytest.raises(UsageError, match="-O expects NAME=VALUE, got 'novalue'"):
        parse_assignments(["novalue"])
    for flag in ("-R", "-P", "-D", "--prior-map"):
        with pytest.raises(UsageError, match=f"^{flag} expects NAME=VALUE"):
            parse_assignments(["=x"], flag)


def test_dict_options_parse_pairs_and_take_mappings():
    mapping = Option("map", dict, {}, "renames")
    assert parse_pairs(" size=n, p = ranks ,") == {"size": "n", "p": "ranks"}
    assert resolve_options([mapping], {"map": "size=n,p=ranks"}, "prior x") == {"map": {"size": "n", "p": "ranks"}}
    assert resolve_options([mapping], {"map": {"a": "b"}}, "prior x") == {"map": {"a": "b"}}
    assert resolve_options([mapping], {}, "prior x") == {"map": {}}
    with pytest.raises(UsageError, match="'size' is not a list of NAME=VALUE pairs"):
        resolve_options([mapping], {"map": "size"}, "prior x")
    with pytest.raises(UsageError, match="must map names to names"):
        resolve_options([mapping], {"map": {"a": 1}}, "prior x")
    with pytest.raises(UsageError, match="must be dict"):
        resolve_options([mapping], {"map": ["a"]}, "prior x")


def test_with_defaults_fills_what_a_direct_caller_leaves_out():
    assert with_defaults(DECLARED, {"fast": True}, "m") == {"threshold": 1.5, "fast": True, "measure": "mean"}
    with pytest.raises(UsageError, match="modeler x has no option speed; its options: fast, measure, threshold"):
        with_defaults(DECLARED, {"speed": 1}, "modeler x")


DETECTORS = {"kluge": (Option("reference", str, "", "reference run"), Option("q", float, 0.9, "quantile")),
             "imbalance": (Option("threshold", float, 0.2, "imbalance"), Option("q", float, 0.5, "other q"))}


def test_detector_options_reach_every_detector_declaring_them():
    routed = route_options(DETECTORS, {"reference": "ref.json", "q": "0.8"}, "detector")
    assert routed == {"kluge": {"reference": "ref.json", "q": "0.8"}, "imbalance": {"q": "0.8"}}


def test_a_dotted_option_reaches_one_detector_only():
    routed = route_options(DETECTORS, {"kluge.q": "0.99", "threshold": "0.3"}, "detector")
    assert routed == {"kluge": {"q": "0.99"}, "imbalance": {"threshold": "0.3"}}


def test_an_option_no_detector_declares_is_refused():
    with pytest.raises(UsageError, match=r"no detector that runs has an option speed; their options: "
                                         r"imbalance\.q, imbalance\.threshold, kluge\.q, kluge\.reference"):
        route_options(DETECTORS, {"speed": "1"}, "detector")
    with pytest.raises(UsageError, match=r"option nope.q: no detector named 'nope' runs \(running: kluge\)"):
        route_options({"kluge": DETECTORS["kluge"]}, {"nope.q": "1"}, "detector")
    with pytest.raises(UsageError, match="no detector that runs has an option reference; their options: none"):
        route_options({}, {"reference": "x"}, "detector")
