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


def test_a_choice_of_true_and_false_reads_bools_and_their_words():
    mode = Option("mode", str, "auto", "auto, or forced on or off", choices=("auto", "true", "false"))
    for given, found in ((True, "true"), (False, "false"), ("yes", "true"), ("OFF", "false"), ("auto", "auto")):
        assert resolve_options((mode,), {"mode": given}, "m") == {"mode": found}
    assert mode.parse("1") == "true" and mode.text(mode.parse("no")) == "false"
    with pytest.raises(UsageError, match=r"^option mode of m must be one of auto, true, false, got 3$"):
        resolve_options((mode,), {"mode": 3}, "m")
    # choices without both words read a bool as any str option does: refused
    with pytest.raises(UsageError, match=r"^option measure of m must be one of mean, median, got True$"):
        resolve_options(DECLARED, {"measure": True}, "m")
    assert DECLARED[2].parse("mean") == "mean"


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


BOUNDED = (
    Option("factor", float, 1.5, "a factor", minimum=1.0),
    Option("share", float, 0.1, "a share", minimum=0.0, maximum=1.0),
    Option("jobs", int, 0, "workers", minimum=0),
    Option("shift", float, 0.0, "any finite number"),
)


@pytest.mark.parametrize(("given", "message"), [
    ({"factor": "nan"}, "option factor: nan is not a finite number; give a number of at least 1"),
    ({"factor": "inf"}, "option factor: inf is not a finite number"),
    ({"factor": "-1e999"}, "option factor: -inf is not a finite number"),
    ({"factor": "0.5"}, "option factor: 0.5 is out of range; give a number of at least 1"),
    ({"factor": float("nan")}, "not a finite number"),
    ({"share": 1.5}, "option share: 1.5 is out of range; give a number from 0 to 1"),
    ({"jobs": "-2"}, "option jobs: -2 is out of range; give a number of at least 0"),
    ({"shift": "-inf"}, "option shift: -inf is not a finite number$"),
])
def test_out_of_range_values_are_usage_errors(given, message):
    with pytest.raises(UsageError, match=message):
        resolve_options(BOUNDED, given, "modeler x")


def test_in_range_values_pass():
    values = resolve_options(BOUNDED, {"factor": "1", "share": 1, "jobs": 3, "shift": "-7.5"}, "m")
    assert values == {"factor": 1.0, "share": 1.0, "jobs": 3, "shift": -7.5}


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0.5"])
def test_modeler_options_refuse_nan_negative_and_infinite(value):
    """The built-in modelers' factors are at least 1 and finite (issue 19 §5)."""
    from pmkit.modelers.search_inputs import OPTIONS

    for name in ("acceptance", "termination", "nonconstancy"):
        with pytest.raises(UsageError, match=f"option {name}: "):
            resolve_options(OPTIONS, {name: value}, "modeler refining")
