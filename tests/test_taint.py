"""The Perf-Taint prior: parsing both JSON flavours, matching, mapping, constraints, filter, findings.

Expected dependency sets are derived by hand from the test programs beside the JSON files in
``shared/data/perf-taint`` (Perf-Taint's own unit tests).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from pmkit.constraints import Constraint
from pmkit.errors import InputError, UsageError
from pmkit.experiment import ExperimentBuilder
from pmkit.models import Model, ModelSet
from pmkit.plugins import build_registry
from pmkit.pmnf import Factor, Function, Term
from pmkit.priors.taint import (
    TaintPrior,
    contradictions,
    load,
    maximal,
    score_p_filter,
)
from pmkit.priors.taint_json import (
    CONSTANT,
    PARAMETRIC,
    PRUNED,
    UNIMPORTANT,
    read_taint,
    read_taint_file,
    tree_groups,
)
from pmkit.sdk import load_prior


def sets(*groups: str) -> set[frozenset[str]]:
    """``sets("m n k", "n")`` → {{m, n, k}, {n}}."""
    return {frozenset(g.split()) for g in groups}


@pytest.fixture(scope="module")
def taint_dir(shared_data: Path) -> Path:
    path = shared_data / "perf-taint"
    if not path.is_dir():
        pytest.skip(f"{path} is absent")
    return path


def all_json(taint_dir: Path) -> list[Path]:
    return sorted(taint_dir.rglob("*.json"))


def test_every_file_parses_or_is_rejected_by_name(taint_dir):
    parsed = 0
    for path in all_json(taint_dir):
        if path.name.endswith(".pass.json"):
            with pytest.raises(InputError, match="static pass") as err:
                read_taint_file(path)
            assert str(path) in str(err.value)
            continue
        if path.name == "empty.cpp.json":  # only a table of function names: no analysis to use
            with pytest.raises(InputError, match="holds no analysis"):
                read_taint_file(path)
            continue
        analysis = read_taint_file(path)
        parsed += 1
        data = json.loads(path.read_text())
        assert set(data["functions_mangled_names"]) <= set(analysis.functions)
        for fn in analysis.functions.values():
            assert fn.status in (PARAMETRIC, CONSTANT, PRUNED, UNIMPORTANT)
            assert (fn.status == PARAMETRIC) == bool(fn.groups)
            assert fn.parameters <= set(analysis.known_parameters)
    assert parsed >= 60


def test_processed_deps_agree_with_their_data_trees(taint_dir):
    checked = 0
    for path in taint_dir.rglob("*.processed*.json"):
        for name, entry in (json.loads(path.read_text()).get("functions") or {}).items():
            for loop in entry["loops"]:
                assert tree_groups(loop["data"]) == {frozenset(d) for d in loop["deps"]}, (path, name)
                checked += 1
    assert checked > 50


def test_raw_files_give_the_same_dependencies_as_perf_taints_converter(taint_dir):
    """Reading the raw file reproduces the processed file's deps (up to sets implied by larger ones)."""
    compared = 0
    for processed in taint_dir.rglob("*.processed.json"):
        raw = processed.with_name(processed.name.replace(".processed.json", ".json"))
        ours = read_taint(raw)
        for name, entry in (json.loads(processed.read_text()).get("functions") or {}).items():
            theirs = {frozenset(d) for loop in entry["loops"] for d in loop["deps"]}
            assert maximal(ours.functions[name].groups) == maximal(theirs), (processed, name)
            compared += 1
    assert compared > 80


def test_matmul_dependencies_follow_the_source(taint_dir):
    for name in ("matmul.c.json", "matmul.c.processed.json"):
        a = read_taint(taint_dir / "dataflow" / name)
        assert a.parameters == ("m", "n", "k")
        assert a.functions["mat_mul"].groups == sets("m n k")  # three nested loops over m, k, n
        assert a.functions["create_matrix"].groups == sets("m n", "n k")  # rows*cols for m×n and n×k
        assert a.functions["main"].status == PARAMETRIC  # inclusive: it calls both
        assert a.functions["atoi"].status == PRUNED


def test_hand_derived_sets_of_several_programs(taint_dir):
    df = taint_dir / "dataflow"
    fc = read_taint(df / "function_call.cpp.json")
    assert fc.functions["_Z1fii"].groups == sets("global x1")  # f(global, x1): loop x..y
    assert fc.functions["_Z1hi"].groups == sets("x2", "global")  # h(x2) and g → h(global³)
    assert fc.functions["_Z1iiii"].groups == sets("x1 x2")  # i(y + x2, x1, 15)
    assert fc.functions["_Z1gi"].groups == sets("global")  # no loop, but calls h with global
    nl = read_taint(df / "nested_loop.cpp.json")
    assert nl.functions["_Z17perf_nest_unknownii"].status == UNIMPORTANT  # only unregistered x3
    assert nl.functions["_Z15perf_nest_constii"].groups == sets("x1")  # inner loop constant
    assert nl.functions["_Z16perf_nest_linearii"].groups == sets("x1", "x2")  # two calls, add
    assert nl.functions["_Z15perf_nest_quadrii"].groups == sets("x1 x2")  # nest multiplies
    st = read_taint(df / "struct.cpp.json")
    assert st.unused_parameters == ("global_params.problem_size",)
    assert st.functions["_Z12print_paramsP6Params"].groups == sets("params.ranks params.problem_size")
    assert st.functions["_Z6do_sthii"].groups == sets("params.problem_size global_params.ranks",
                                                     "params.ranks params.problem_size")
    assert st.functions["_Z7do_sth2di"].status == UNIMPORTANT  # driven by atof'd tolerance
    cc = read_taint(df / "cpp_class.cpp.json")
    assert cc.functions["_ZN4Grid11update_gridEd"].groups == sets("size_x size_y")  # x*y
    assert cc.functions["_ZN4Grid8update_zEd"].status == UNIMPORTANT  # z is not registered
    mpi = read_taint(taint_dir / "mpi" / "mpi_simple.cpp.json")
    assert mpi.parameters == ("size", "ranks", "p")
    assert mpi.functions["_Z1fPdm"].groups == sets("size ranks")  # size /= ranks
    assert mpi.functions["MPI_Reduce"].groups == sets("p")  # implicit p, no source location
    assert mpi.functions["MPI_Reduce"].file is None
    assert maximal(mpi.functions["_Z8h_nestedPdm"].groups) == sets("size ranks p")  # loop × reduce
    assert mpi.functions["_Z1hPd"].own_groups == sets("p")  # its MPI call counts as its own


def test_branch_parameters_are_kept_apart(taint_dir):
    a = read_taint(taint_dir / "dataflow" / "cf_branches.cpp.json")
    assert a.functions["_Z1fiii"].branch_parameters == {"x1"}


def test_per_rank_files_merge(tmp_path, taint_dir):
    data = json.loads((taint_dir / "mpi" / "mpi_simple.cpp.json").read_text())
    (tmp_path / "app_0.json").write_text(json.dumps(data))
    rank1 = json.loads(json.dumps(data))
    # on rank 1, f's loop also depended on p (as if rank 1 did extra work per rank)
    rank1["functions"]["_Z1fPdm"]["loops"][0]["instance"]["0"]["params"] = [["size", "p"]]
    for table in ("functions_mangled_names", "functions_demangled_names", "functions_names"):
        rank1[table].append("only_on_rank_1")
    rank1["unimportant_functions"] = {"only_on_rank_1": {"func_idx": 8}}
    (tmp_path / "app_1.json").write_text(json.dumps(rank1))
    merged = read_taint(tmp_path)
    assert len(merged.sources) == 2
    assert merged.functions["_Z1fPdm"].groups == sets("size ranks", "size p")
    assert merged.functions["_Z1hPd"].groups == sets("p")
    assert merged.functions["only_on_rank_1"].status == UNIMPORTANT
    assert merged.functions["atoi"].status == PRUNED
    assert read_taint([tmp_path / "app_0.json", tmp_path / "app_1.json"]).functions["_Z1fPdm"].groups == \
        merged.functions["_Z1fPdm"].groups
    (tmp_path / "other_0.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="several programs"):
        read_taint(tmp_path)


@pytest.mark.parametrize("text, problem", [
    ("{", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"functions": {}}', "functions_mangled_names"),
    ('{"functions_mangled_names": ["f"], "functions": {"f": {"loops": [{"callstacks": [[0]], '
     '"instance": {"0": [{"function_idx": 9, "entry_id": 0}]}}]}}}', "function_idx 9"),
    ('{"functions_mangled_names": ["f"], "functions": {"f": {"loops": [{"callstack": [[0]], '
     '"deps": [["a"]], "data": [{"dependency": "maybe", "operands": []}]}]}}}', None),
    ('{"functions_mangled_names": ["f"], "functions": {"f": {"loops": [{"callstacks": [[0]], '
     '"instance": {"0": {"level": 0, "params": [[1]]}}}]}}}', "parameter names"),
])
def test_bad_files_raise_input_error_naming_the_file(tmp_path, text, problem):
    path = tmp_path / "bad.json"
    path.write_text(text)
    if problem is None:  # deps given: the data tree is not needed, so the file is usable
        assert read_taint(path).functions["f"].groups == sets("a")
        return
    with pytest.raises(InputError, match=problem) as err:
        read_taint(path)
    assert str(path) in str(err.value)


def test_out_of_range_call_stacks_are_noted_not_fatal(taint_dir):
    a = read_taint(taint_dir / "dataflow" / "bug_static_functions" / "main.c.experimental.json")
    assert any("beyond the 6 function names" in n for n in a.notes)
    assert a.functions["f"].groups == sets("x1", "x2")


def experiment(regions, parameters=("p", "size"), mangled=None, inclusive=False):
    b = ExperimentBuilder(parameters)
    for region in regions:
        cp = b.callpaths.add(region, (mangled or {}).get(region))
        assert cp >= 0
        b.add_metric("time", "s", inclusive)
        for point in itertools.product((2, 4, 8), repeat=len(parameters)):
            b.add_values(region, "time", point, [1.0, 1.02])
    return b.build()


def test_matching_mapping_and_constraints(taint_dir):
    k = load(taint_dir / "mpi" / "mpi_simple.cpp.json", map={"ranks": "p"})
    regions = ["main", "main->f(double*, unsigned long)", "main->h_nested(double*, unsigned long)->h(double*)",
               "main->h_nested(double*, unsigned long)->h(double*)->MPI_Reduce", "main->atoi", "main->MPI_Init",
               "main->h_multiple_loops"]
    exp = experiment(regions)
    c = k.constraints(exp)
    # h: only the implicit p reaches it (through MPI_Reduce)
    assert c["main->h_nested(double*, unsigned long)->h(double*)"] == Constraint(
        allowed=frozenset({"p"}), groups=(frozenset({"p"}),), source="taint", reason="Perf-Taint: p")
    assert c["main->atoi"].constant
    assert "main->MPI_Init" not in c and k.unmatched == ["MPI_Init"]
    # f depends on size/ranks; with ranks=p both experiment parameters reach it and may multiply
    assert "main->f(double*, unsigned long)" not in c
    assert "nothing to restrict" in k.notes["main->f(double*, unsigned long)"]
    assert "qualified name" in k.notes["main->h_multiple_loops"]
    assert k.matches["main->h_nested(double*, unsigned long)->h(double*)"] == ("_Z1hPd",)
    assert k.unmeasured == ["MPI_Barrier"]
    # without the map, ranks is not an experiment parameter: f is a function of size alone
    c2 = load(taint_dir / "mpi" / "mpi_simple.cpp.json").constraints(exp)
    assert c2["main->f(double*, unsigned long)"].allowed == frozenset({"size"})


def test_mangled_names_win_and_groups_limit_products(taint_dir):
    k = load(taint_dir / "dataflow" / "matmul.c.json")
    exp = experiment(["main", "main->create_matrix", "main->mat_mul", "main->renamed"], parameters=("m", "n", "k"),
                     mangled={"main->renamed": "mat_mul"})
    c = k.constraints(exp)
    create = c["main->create_matrix"]
    assert create.may_multiply("m", "n") and create.may_multiply("n", "k") and not create.may_multiply("m", "k")
    assert "main->mat_mul" not in c  # m·n·k: everything may multiply, nothing to restrict
    assert k.matches["main->renamed"] == ("mat_mul",)


def test_unknown_experiment_parameters_stay_free(taint_dir):
    k = load(taint_dir / "dataflow" / "matmul.c.json")
    c = k.constraints(experiment(["main->atoi", "main->create_matrix"], parameters=("m", "k", "r")))
    assert c["main->atoi"].allowed == frozenset({"r"}) and not c["main->atoi"].constant
    create = c["main->create_matrix"]  # m·n + n·k with n held fixed: m + k, and r anywhere
    assert create.allowed == frozenset({"m", "k", "r"})
    assert create.may_multiply("m", "r") and create.may_multiply("k", "r") and not create.may_multiply("m", "k")
    assert "r unknown to Perf-Taint" in create.reason


def test_unimportant_functions_are_left_to_the_data_unless_asked(taint_dir):
    path = taint_dir / "dataflow" / "cpp_class.cpp.json"
    exp = experiment(["main->Grid::update_z(double)", "main->Grid::Grid(int, int, int)"],
                     parameters=("size_x", "size_y"))
    k = load(path)
    c = k.constraints(exp)
    assert "main->Grid::update_z(double)" not in c
    assert "never executed" in k.notes["main->Grid::update_z(double)"]
    assert c["main->Grid::Grid(int, int, int)"].constant
    assert load(path, unimportant="constant").constraints(exp)["main->Grid::update_z(double)"].constant


def test_pruned_functions_in_processed_files_are_not_trusted_for_inclusive_metrics(taint_dir):
    k = load(taint_dir / "dataflow" / "cpp_class.cpp.processed.json")
    region = "main->Grid::Grid(int, int, int)"
    assert k.constraints(experiment([region], ("size_x", "size_y")))[region].constant
    assert region not in k.constraints(experiment([region], ("size_x", "size_y"), inclusive=True))


def test_map_option_parsing_and_errors(taint_dir):
    registry = build_registry(entry_points=False)
    source = taint_dir / "dataflow" / "matmul.c.json"
    assert load_prior(source, "taint", registry=registry, map="m = rows, ").knowledge.mapping["m"] == "rows"
    with pytest.raises(UsageError, match="option map: 'size' is not a list of NAME=VALUE pairs"):
        load_prior(source, "taint", registry=registry, map="size")
    with pytest.raises(UsageError, match="parameter map a=b: neither"):
        load(source, map={"a": "b"})
    # reversed pairs (EXPERIMENT=TAINT) are accepted when unambiguous
    k = load(source, map={"rows": "m"})
    assert k.mapping["m"] == "rows"


def test_prior_is_registered_and_loads_through_the_plugin(taint_dir):
    registry = build_registry(entry_points=False)
    prior = registry.get("prior", "taint")
    assert isinstance(prior, TaintPrior)
    knowledge = prior.load(taint_dir / "dataflow" / "matmul.c.json", map={"m": "rows"}, unimportant="data")
    assert knowledge.mapping["m"] == "rows"
    loaded = load_prior(taint_dir / "dataflow" / "matmul.c.json", registry=registry, map={"m": "rows"})
    assert loaded.name == "taint" and loaded.knowledge.mapping["m"] == "rows" and loaded.checks_contradictions


def test_score_p_filter_keeps_only_parametric_functions(taint_dir):
    text = score_p_filter(load(taint_dir / "mpi" / "mpi_simple.cpp.json"))
    lines = [line.strip() for line in text.splitlines() if not line.startswith("#")]
    assert lines[0] == "SCOREP_REGION_NAMES_BEGIN" and lines[-1] == "SCOREP_REGION_NAMES_END"
    assert lines[1] == "EXCLUDE *"
    assert "INCLUDE MANGLED _Z1fPdm" in lines and "INCLUDE MPI_Reduce" in lines and "INCLUDE main" in lines
    assert not any("atoi" in line for line in lines)
    cc = score_p_filter(load(taint_dir / "dataflow" / "cpp_class.cpp.json"))
    assert "INCLUDE MANGLED _ZN4Grid11update_gridEd" in cc
    assert "_ZN4Grid8update_zEd" not in cc and "_ZN4GridC2Eiii" not in cc
    # g only calls h: kept only when callers are asked for
    fc = load(taint_dir / "dataflow" / "function_call.cpp.json")
    assert "_Z1gi" not in score_p_filter(fc)
    assert "INCLUDE MANGLED _Z1gi" in score_p_filter(fc, include_callers=True)


def _model(callpath: str, function: Function) -> Model:
    return Model(callpath, "time", function)


def test_contradiction_found_for_growth_the_code_cannot_cause():
    rng = np.random.default_rng(7)
    b = ExperimentBuilder(("p", "size"))
    b.add_metric("time", "s")
    ps, sizes = (2, 4, 8, 16, 32), (10, 20, 30, 40, 50)
    for p in ps:
        for s in sizes:
            contended = 2.0 * (1 + 0.1 * np.log2(p))  # a constant kernel slowed by contention
            b.add_values("main->kernel", "time", [p, s], contended * (1 + 0.01 * rng.standard_normal(4)))
            b.add_values("main->quiet", "time", [p, s], 2.0 * (1 + 0.01 * rng.standard_normal(4)))
    exp = b.build()
    params = exp.parameters
    growth = Function(params, 2.0, (Term(0.2, (Factor("p", 0, 1),)),))
    constrained = ModelSet(params, [_model("main->kernel", Function(params, 2.5)),
                                    _model("main->quiet", Function(params, 2.0))])
    free = ModelSet(params, [_model("main->kernel", growth),
                             _model("main->quiet", Function(params, 2.0, (Term(1e-4, (Factor("p", 1),)),)))])
    rules = {"main->kernel": Constraint(constant=True, source="taint"),
             "main->quiet": Constraint(constant=True, source="taint")}
    found = contradictions(exp, constrained, free, rules)
    assert [f.callpath for f in found] == ["main->kernel"]
    assert "growth in p" in found[0].title
    assert found[0].evidence["smape_constrained"] > found[0].evidence["smape_unconstrained"]
    assert found[0].severity == pytest.approx(abs(2.0 + 0.2 * 5 - 2.5), rel=1e-6)
    # noisy repetitions (CV > 10 %) are not good enough to contradict the code
    b2 = ExperimentBuilder(("p", "size"))
    for p in ps:
        for s in sizes:
            b2.add_values("main->kernel", "time", [p, s], 2.0 * (1 + 0.1 * np.log2(p)) * np.array([0.7, 1.3]))
    assert contradictions(b2.build(), constrained, free, rules) == []
