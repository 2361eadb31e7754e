"""The Perf-Taint prior on generated twins of Perf-Taint's test programs: no shared data needed.

Each twin (``pmkit.testing.taint_files``) describes what Perf-Taint's run of one of its unit-test
programs saw (``shared/data/perf-taint``: ``mpi_simple.cpp``, ``matmul.c``, ``function_call.cpp``,
``nested_loop.cpp``, ``struct.cpp``, ``cpp_class.cpp``, ``cf_branches.cpp``) and is written raw and
processed; reading either must give the dependency sets derived by hand from the program's
source, as ``test_taint.py`` asserts for the real files.  The malformed files Perf-Taint's test
data holds (a static-pass statistics file, a names-only file, call stacks beyond the name table)
and recursion are twinned too.  Constraints, the Score-P filter and the CLI run on the twins.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from pmkit.constraints import Constraint
from pmkit.errors import InputError
from pmkit.experiment import ExperimentBuilder
from pmkit.plugins import build_registry
from pmkit.priors.taint import load, maximal, score_p_filter
from pmkit.priors.taint_json import CONSTANT, PARAMETRIC, PRUNED, UNIMPORTANT, read_taint, tree_groups
from pmkit.sdk import load_prior
from pmkit.testing.taint_files import Behaviour, Call, Loop, SourceFunction, TaintProgram, mpi


def fn(mangled: str, demangled: str | None = None, *behaviours: tuple, **options) -> SourceFunction:
    """A function of a twin: each behaviour a body (a tuple of loops and calls)."""
    return SourceFunction(mangled, demangled, demangled.split("(")[0].split("::")[-1] if demangled else None,
                          behaviours=[b if isinstance(b, Behaviour) else Behaviour(b) for b in behaviours], **options)


MPI_SIMPLE = TaintProgram(("size", "ranks", "p"), [
    fn("main", "main", Behaviour((Call("MPI_Barrier"), Call("_Z1fPdm"), Call("_Z16h_multiple_loopsPdm"),
                                  Call("_Z8h_nestedPdm")), (None,))),
    fn("_Z1fPdm", "f(double*, unsigned long)", (Loop(("size", "ranks")),)),
    fn("_Z16h_multiple_loopsPdm", "h_multiple_loops(double*, unsigned long)",
       (Loop(("size", "ranks")), Call("MPI_Reduce"))),
    fn("_Z8h_nestedPdm", "h_nested(double*, unsigned long)", (Loop(("size", "ranks"), (Call("_Z1hPd"),)),)),
    fn("_Z1hPd", "h(double*)", Behaviour((Call("MPI_Reduce"),), (("main", "_Z8h_nestedPdm"),))),
    mpi("MPI_Reduce"), mpi("MPI_Barrier"), SourceFunction("atoi", file=None, line=None)])

MATMUL = TaintProgram(("m", "n", "k"), [
    SourceFunction("create_matrix", file="matmul.c", behaviours=[Behaviour((Loop(("m", "n")),)),
                                                                  Behaviour((Loop(("n", "k")),))]),
    SourceFunction("mat_mul", file="matmul.c", behaviours=[Behaviour((Loop(("m",), (Loop(("k",), (
        Loop(("n",)),)),)),))]),
    SourceFunction("main", file="matmul.c"), SourceFunction("atoi", file=None, line=None)])

FUNCTION_CALL = TaintProgram(("x1", "x2", "global"), [
    fn("_Z1fii", "f(int, int)", (Loop(("x1", "global")),)),
    fn("_Z1hi", "h(int)", Behaviour((Loop(("global",)),), (("main", "_Z1gi"),)), (Loop(("x2",)),)),
    fn("_Z1iiii", "i(int, int, int)", (Loop(("x1", "x2")),)),
    fn("main", "main"), fn("atoi", "atoi"), fn("_Z1gi", "g(int)")])

NESTED_LOOP = TaintProgram(("x1", "x2"), [
    fn("_Z17perf_nest_unknownii", "perf_nest_unknown(int, int)", unimportant=True),
    fn("_Z15perf_nest_constii", "perf_nest_const(int, int)", (Loop(("x1",)),)),
    fn("_Z16perf_nest_linearii", "perf_nest_linear(int, int)", (Loop(("x1",)),), (Loop(("x2",)),)),
    fn("_Z15perf_nest_quadrii", "perf_nest_quadr(int, int)", (Loop(("x1",), (Loop(("x2",)),)),),
       (Loop(("x2",), (Loop(("x1",)),)),)),
    fn("_Z24perf_nest_multiple_quadrii", "perf_nest_multiple_quadr(int, int)",
       (Loop(("x1", "x2"), (Loop(("x2",)),)),)),
    fn("main", "main"), fn("atoi", "atoi")])

STRUCT = TaintProgram(("params.ranks", "params.problem_size", "global_params.ranks"), [
    fn("_Z12print_paramsP6Params", "print_params(Params*)", (Loop(("params.ranks", "params.problem_size")),)),
    fn("_Z6do_sthii", "do_sth(int, int)", (Loop(("params.problem_size", "global_params.ranks")),),
       (Loop(("params.ranks", "params.problem_size")),)),
    fn("_Z7do_sth2di", "do_sth2(double, int)", unimportant=True),
    fn("main", "main"), fn("atof", "atof")], unused_parameters=("global_params.problem_size",))

CPP_CLASS = TaintProgram(("size_x", "size_y"), [
    fn("_ZN4Grid11update_gridEd", "Grid::update_grid(double)", Behaviour((Loop(("size_x", "size_y")),))),
    fn("_ZN4Grid15update_constantEd", "Grid::update_constant(double)", unimportant=True),
    fn("_ZN4Grid11update_dataEd", "Grid::update_data(double)", unimportant=True),
    fn("_ZN4Grid8update_zEd", "Grid::update_z(double)", unimportant=True),
    fn("main", "main"), fn("atoi", "atoi"), fn("_ZN4GridC2Eiii", "Grid::Grid(int, int, int)"),
    fn("_ZN4GridD2Ev", "Grid::~Grid()")])

CF_BRANCHES = TaintProgram(("x1", "x2"), [
    fn("_Z1fiii", "f(int, int, int)", (Loop(("x2",)), Loop(("x1", "x2"), branches=("x1",)), Loop(("x1",)))),
    fn("_Z1giii", "g(int, int, int)", (Loop(("x1", "x2"), (Loop(("x1",), branches=("x1",)),), branches=("x2",)),)),
    fn("main", "main")])

TWINS = {"mpi/mpi_simple.cpp": MPI_SIMPLE, "dataflow/matmul.c": MATMUL, "dataflow/function_call.cpp": FUNCTION_CALL,
         "dataflow/nested_loop.cpp": NESTED_LOOP, "dataflow/struct.cpp": STRUCT, "dataflow/cpp_class.cpp": CPP_CLASS,
         "dataflow/cf_branches.cpp": CF_BRANCHES}


@pytest.fixture(scope="module")
def twins(tmp_path_factory) -> Path:
    """Perf-Taint's layout: ``X.json`` (raw) and ``X.processed.json`` for every twin."""
    folder = tmp_path_factory.mktemp("perf-taint")
    for name, program in TWINS.items():
        program.write(folder / f"{name}.json")
        program.write(folder / f"{name}.processed.json", "processed")
    return folder


def sets(*groups: str) -> set[frozenset[str]]:
    return {frozenset(g.split()) for g in groups}


# what each program's source says, by hand: (file, function) → status or dependency sets
EXPECTED = {
    ("mpi/mpi_simple.cpp", "_Z1fPdm"): sets("size ranks"),  # size /= ranks
    ("mpi/mpi_simple.cpp", "MPI_Reduce"): sets("p"),  # the implicit p
    ("mpi/mpi_simple.cpp", "_Z16h_multiple_loopsPdm"): sets("size ranks", "p"),
    ("mpi/mpi_simple.cpp", "main"): PARAMETRIC,
    ("mpi/mpi_simple.cpp", "atoi"): PRUNED,
    ("dataflow/matmul.c", "mat_mul"): sets("m n k"),  # three nested loops
    ("dataflow/matmul.c", "create_matrix"): sets("m n", "n k"),  # rows × cols of two matrices
    ("dataflow/matmul.c", "main"): PARAMETRIC,  # it calls both
    ("dataflow/matmul.c", "atoi"): PRUNED,
    ("dataflow/function_call.cpp", "_Z1fii"): sets("global x1"),
    ("dataflow/function_call.cpp", "_Z1hi"): sets("x2", "global"),
    ("dataflow/function_call.cpp", "_Z1iiii"): sets("x1 x2"),
    ("dataflow/nested_loop.cpp", "_Z17perf_nest_unknownii"): UNIMPORTANT,
    ("dataflow/nested_loop.cpp", "_Z15perf_nest_constii"): sets("x1"),
    ("dataflow/nested_loop.cpp", "_Z16perf_nest_linearii"): sets("x1", "x2"),
    ("dataflow/nested_loop.cpp", "_Z15perf_nest_quadrii"): sets("x1 x2"),
    ("dataflow/nested_loop.cpp", "_Z24perf_nest_multiple_quadrii"): sets("x1 x2"),
    ("dataflow/struct.cpp", "_Z12print_paramsP6Params"): sets("params.ranks params.problem_size"),
    ("dataflow/struct.cpp", "_Z6do_sthii"): sets("params.problem_size global_params.ranks",
                                                 "params.ranks params.problem_size"),
    ("dataflow/struct.cpp", "_Z7do_sth2di"): UNIMPORTANT,
    ("dataflow/cpp_class.cpp", "_ZN4Grid11update_gridEd"): sets("size_x size_y"),
    ("dataflow/cpp_class.cpp", "_ZN4Grid8update_zEd"): UNIMPORTANT,
    ("dataflow/cpp_class.cpp", "_ZN4GridC2Eiii"): PRUNED,
}
RAW_ONLY = {  # raw files keep complete call stacks: callers inherit their callees' sets
    ("mpi/mpi_simple.cpp", "_Z8h_nestedPdm"): sets("size ranks p"),  # loop × MPI_Reduce through h
    ("dataflow/function_call.cpp", "_Z1gi"): sets("global"),  # no loop; calls h with global
}


@pytest.mark.parametrize("flavour", ["json", "processed.json"])
@pytest.mark.parametrize("program,function", sorted(EXPECTED))
def test_dependencies_follow_the_source(twins, program, function, flavour):
    analysis = read_taint(twins / f"{program}.{flavour}")
    expected = EXPECTED[(program, function)]
    got = analysis.functions[function]
    if expected == UNIMPORTANT and flavour == "processed.json":
        expected = PRUNED  # the converter leaves the list of unimportant functions out
    if isinstance(expected, str):
        assert got.status == expected
    else:
        assert got.status == PARAMETRIC and maximal(got.groups) == maximal(expected)


@pytest.mark.parametrize("program,function", sorted(RAW_ONLY))
def test_raw_call_stacks_reach_callers(twins, program, function):
    assert maximal(read_taint(twins / f"{program}.json").functions[function].groups) == RAW_ONLY[(program, function)]


def test_every_twin_parses_with_consistent_statuses(twins):
    for path in sorted(twins.rglob("*.json")):
        analysis = read_taint(path)
        data = json.loads(path.read_text())
        assert set(data["functions_mangled_names"]) <= set(analysis.functions)
        assert analysis.flavours == {"processed" if ".processed" in path.name else "raw"}
        for function in analysis.functions.values():
            assert function.status in (PARAMETRIC, CONSTANT, PRUNED, UNIMPORTANT)
            assert (function.status == PARAMETRIC) == bool(function.groups)
            assert function.parameters <= set(analysis.known_parameters)


def test_processed_deps_agree_with_their_data_trees(twins):
    checked = 0
    for path in twins.rglob("*.processed.json"):
        for name, entry in json.loads(path.read_text())["functions"].items():
            for loop in entry["loops"]:
                assert tree_groups(loop["data"]) == {frozenset(d) for d in loop["deps"]}, (path, name)
                checked += 1
    assert checked >= 20


def test_raw_and_processed_agree(twins):
    for program in TWINS:
        raw, processed = read_taint(twins / f"{program}.json"), read_taint(twins / f"{program}.processed.json")
        for name, entry in processed.functions.items():
            if entry.groups:
                assert maximal(raw.functions[name].groups) == maximal(entry.groups), (program, name)


def test_mpi_details(twins):
    analysis = read_taint(twins / "mpi/mpi_simple.cpp.json")
    assert analysis.parameters == ("size", "ranks", "p")
    assert analysis.functions["MPI_Reduce"].file is None
    assert analysis.functions["_Z1hPd"].own_groups == sets("p")  # its MPI call counts as its own
    assert analysis.functions["_Z1fPdm"].file == "app.cpp" and analysis.callers_complete
    assert not read_taint(twins / "mpi/mpi_simple.cpp.processed.json").callers_complete


def test_unused_parameters_and_branches(twins):
    assert read_taint(twins / "dataflow/struct.cpp.json").unused_parameters == ("global_params.problem_size",)
    analysis = read_taint(twins / "dataflow/cf_branches.cpp.json")
    assert analysis.functions["_Z1fiii"].branch_parameters == {"x1"}
    assert analysis.functions["_Z1giii"].branch_parameters == {"x1", "x2"}


def test_deps_left_out_are_derived_from_the_data_tree(tmp_path):
    path = tmp_path / "matmul.processed.json"
    path.write_text(json.dumps(MATMUL.processed(deps=False)))
    assert read_taint(path).functions["create_matrix"].groups == sets("m n", "n k")


def test_call_stacks_beyond_the_name_table_are_noted(tmp_path):
    """dataflow/bug_static_functions/main.c.experimental.json: duplicate removal left stale indices."""
    program = TaintProgram(("x1", "x2"), [SourceFunction("f", behaviours=[Behaviour((Loop(("x1",)),)),
                                                                          Behaviour((Loop(("x2",)),))]),
                                          SourceFunction("main"), SourceFunction("g")])
    data = program.raw()
    data["functions"]["f"]["loops"][1]["callstacks"] = [[1, 9]]
    path = tmp_path / "main.c.experimental.json"
    path.write_text(json.dumps(data))
    analysis = read_taint(path)
    assert any("beyond the 3 function names" in note for note in analysis.notes)
    assert analysis.functions["f"].groups == sets("x1", "x2")


def test_recursion_is_cut_and_noted(tmp_path):
    program = TaintProgram(("n",), [SourceFunction("main", behaviours=[Behaviour((Call("walk"),), (None,))]),
                                    SourceFunction("walk", behaviours=[Behaviour((Loop(("n",), (Call("walk"),)),))])])
    raw = read_taint(program.write(tmp_path / "rec.json"))
    assert any("recursive calls through walk" in note for note in raw.notes)
    assert raw.functions["walk"].groups == sets("n")
    assert read_taint(program.write(tmp_path / "rec.processed.json", "processed")).functions["walk"].groups == sets("n")


@pytest.mark.parametrize("document,problem", [
    ({"functions": {"f": {"instrumented": ["loops"], "loops": {"count": 2}}}, "statistics": {"loops": 2}},
     "static pass"),  # dataflow/scev.cpp.pass.json
    ({"functions_demangled_names": ["main"], "functions_mangled_names": ["main"], "functions_names": ["main"]},
     "holds no analysis"),  # dataflow/empty.cpp.json
])
def test_files_that_are_not_an_analysis(tmp_path, document, problem):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=problem) as info:
        read_taint(path)
    assert str(path) in str(info.value)


def test_per_rank_files_merge(tmp_path):
    """What a two-rank run writes: rank 1's f also depended on p; a function seen on rank 1 only."""
    MPI_SIMPLE.write(tmp_path / "app_0.json")
    rank1 = TaintProgram(MPI_SIMPLE.parameters, [
        *(f if f.mangled != "_Z1fPdm" else fn("_Z1fPdm", "f(double*, unsigned long)", (Loop(("size", "p")),))
          for f in MPI_SIMPLE.functions), fn("only_on_rank_1", unimportant=True)])
    rank1.write(tmp_path / "app_1.json")
    merged = read_taint(tmp_path)
    assert len(merged.sources) == 2
    assert merged.functions["_Z1fPdm"].groups == sets("size ranks", "size p")
    assert merged.functions["only_on_rank_1"].status == UNIMPORTANT
    assert merged.functions["atoi"].status == PRUNED
    MATMUL.write(tmp_path / "other_0.json")
    with pytest.raises(InputError, match="several programs"):
        read_taint(tmp_path)


# -- constraints, mapping, the Score-P filter ---------------------------------------------------------

def experiment(regions, parameters=("p", "size"), mangled=None, inclusive=False):
    builder = ExperimentBuilder(parameters)
    builder.add_metric("time", "s", inclusive)
    for region in regions:
        builder.callpaths.add(region, (mangled or {}).get(region))
        for point in itertools.product((2, 4, 8), repeat=len(parameters)):
            builder.add_values(region, "time", point, [1.0, 1.02])
    return builder.build()


H = "main->h_nested(double*, unsigned long)->h(double*)"


def test_constraints_from_the_mpi_twin(twins):
    knowledge = load(twins / "mpi/mpi_simple.cpp.json", map={"ranks": "p"})
    regions = ["main", "main->f(double*, unsigned long)", H, f"{H}->MPI_Reduce", "main->atoi", "main->MPI_Init",
               "main->h_multiple_loops"]
    exp = experiment(regions)
    constraints = knowledge.constraints(exp)
    assert constraints[H] == Constraint(allowed=frozenset({"p"}), groups=(frozenset({"p"}),), source="taint",
                                        reason="Perf-Taint: p")
    assert constraints["main->atoi"].constant
    assert "main->MPI_Init" not in constraints and knowledge.unmatched == ["MPI_Init"]
    assert "main->f(double*, unsigned long)" not in constraints
    assert "nothing to restrict" in knowledge.notes["main->f(double*, unsigned long)"]
    assert "qualified name" in knowledge.notes["main->h_multiple_loops"]
    assert knowledge.matches[H] == ("_Z1hPd",) and knowledge.unmeasured == ["MPI_Barrier"]
    free = load(twins / "mpi/mpi_simple.cpp.json").constraints(exp)
    assert free["main->f(double*, unsigned long)"].allowed == frozenset({"size"})


def test_groups_limit_products_and_unknown_parameters_stay_free(twins):
    knowledge = load(twins / "dataflow/matmul.c.json")
    constraints = knowledge.constraints(experiment(["main", "main->create_matrix", "main->mat_mul", "main->renamed"],
                                                   ("m", "n", "k"), mangled={"main->renamed": "mat_mul"}))
    create = constraints["main->create_matrix"]
    assert create.may_multiply("m", "n") and create.may_multiply("n", "k") and not create.may_multiply("m", "k")
    assert "main->mat_mul" not in constraints and knowledge.matches["main->renamed"] == ("mat_mul",)
    other = load(twins / "dataflow/matmul.c.json").constraints(
        experiment(["main->atoi", "main->create_matrix"], ("m", "k", "r")))
    assert other["main->atoi"].allowed == frozenset({"r"})
    assert other["main->create_matrix"].allowed == frozenset({"m", "k", "r"})
    assert "r unknown to Perf-Taint" in other["main->create_matrix"].reason


def test_unimportant_and_pruned_functions(twins):
    regions = ["main->Grid::update_z(double)", "main->Grid::Grid(int, int, int)"]
    knowledge = load(twins / "dataflow/cpp_class.cpp.json")
    constraints = knowledge.constraints(experiment(regions, ("size_x", "size_y")))
    assert regions[0] not in constraints and "never executed" in knowledge.notes[regions[0]]
    assert constraints[regions[1]].constant
    asked = load(twins / "dataflow/cpp_class.cpp.json", unimportant="constant")
    assert asked.constraints(experiment(regions, ("size_x", "size_y")))[regions[0]].constant
    processed = load(twins / "dataflow/cpp_class.cpp.processed.json")
    assert processed.constraints(experiment(regions[1:], ("size_x", "size_y")))[regions[1]].constant
    assert regions[1] not in processed.constraints(experiment(regions[1:], ("size_x", "size_y"), inclusive=True))


def test_prior_through_the_registry(twins):
    registry = build_registry(entry_points=False)
    loaded = load_prior(twins / "dataflow/matmul.c.json", registry=registry, map={"m": "rows"})
    assert loaded.name == "taint" and loaded.knowledge.mapping["m"] == "rows" and loaded.checks_contradictions


def test_score_p_filter_of_the_twins(twins):
    lines = [line.strip() for line in score_p_filter(load(twins / "mpi/mpi_simple.cpp.json")).splitlines()
             if not line.startswith("#")]
    assert lines[:2] == ["SCOREP_REGION_NAMES_BEGIN", "EXCLUDE *"] and lines[-1] == "SCOREP_REGION_NAMES_END"
    assert {"INCLUDE MANGLED _Z1fPdm", "INCLUDE MPI_Reduce", "INCLUDE main"} <= set(lines)
    assert not any("atoi" in line for line in lines)
    grid = score_p_filter(load(twins / "dataflow/cpp_class.cpp.json"))
    assert "INCLUDE MANGLED _ZN4Grid11update_gridEd" in grid and "_ZN4Grid8update_zEd" not in grid
    calls = load(twins / "dataflow/function_call.cpp.json")
    assert "_Z1gi" not in score_p_filter(calls)
    assert "INCLUDE MANGLED _Z1gi" in score_p_filter(calls, include_callers=True)


# -- the command line --------------------------------------------------------------------------------

def test_taint_filter_command(twins, pmkit_cli, tmp_path):
    out = tmp_path / "scorep.filter"
    result = pmkit_cli("taint-filter", twins / "dataflow/matmul.c.json", "--out", out)
    assert result.returncode == 0, result.stderr
    lines = [line.strip() for line in out.read_text().splitlines() if line.strip().startswith("INCLUDE")]
    assert sorted(lines) == ["INCLUDE create_matrix", "INCLUDE main", "INCLUDE mat_mul"]


def test_model_with_the_taint_prior(twins, pmkit_cli, tmp_path):
    from pmkit.testing.extrap_inputs import Measurements, write_text

    ms = [(4,), (8,), (16,), (32,), (64,)]
    m = Measurements.from_laws(("m",), ms, {("mat_mul", "time"): lambda m: 0.01 * m ** 3,
                                            ("atoi", "time"): lambda m: 1 + 0.5 * m}, repetitions=3, noise=0.001)
    path = write_text(tmp_path / "matmul.txt", m)
    result = pmkit_cli("model", path, "--prior", twins / "dataflow/matmul.c.json", "--json")
    assert result.returncode == 0, result.stderr
    models = {entry["callpath"]: entry for entry in json.loads(result.stdout)["models"]}
    assert models["atoi"]["function"]["terms"] == []  # Perf-Taint: no parameter reaches atoi
    assert models["mat_mul"]["function"]["terms"][0]["factors"][0]["exponent"] == "3"


# -- the twins against Perf-Taint's own files (when the shared data is there) --------------------------

FAITHFUL = ["mpi/mpi_simple.cpp", "dataflow/matmul.c", "dataflow/function_call.cpp", "dataflow/nested_loop.cpp",
            "dataflow/cpp_class.cpp"]
"""Twins that reproduce Perf-Taint's files entry for entry (the others leave some functions out)."""


def _without_locations(value):
    if isinstance(value, dict):
        return {k: _without_locations(v) for k, v in value.items() if k not in ("file", "line", "not_found_params")}
    if isinstance(value, list):
        return [_without_locations(v) for v in value]
    return value


@pytest.mark.parametrize("flavour", ["json", "processed.json"])
@pytest.mark.parametrize("program", FAITHFUL)
def test_twin_is_what_perf_taint_writes(shared_data, program, flavour):
    """Every table, call stack, instance tree, data tree and deps list equals Perf-Taint's (source
    locations aside, and deps in any order)."""
    real = json.loads((shared_data / "perf-taint" / f"{program}.{flavour}").read_text())
    twin = TWINS[program].raw() if flavour == "json" else TWINS[program].processed()
    for document in (real, twin):
        for entry in document["functions"].values():
            for loop in entry["loops"]:
                if "deps" in loop:
                    loop["deps"] = sorted(sorted(d) for d in loop["deps"])
    assert _without_locations(twin) == _without_locations(real)


def test_parameter_map_either_way_round_and_wrong(twins):
    source = twins / "dataflow/matmul.c.json"
    assert load(source, map={"rows": "m"}).mapping["m"] == "rows"  # EXPERIMENT=TAINT, unambiguous
    assert load(source, map={"m": "rows"}).mapping["m"] == "rows"
    from pmkit.errors import UsageError

    with pytest.raises(UsageError, match=r"parameter map a=b: neither is a parameter .* m, n, k"):
        load(source, map={"a": "b"})
    with pytest.raises(UsageError, match="option map: 'size' is not a list of NAME=VALUE pairs"):
        load_prior(source, "taint", registry=build_registry(entry_points=False), map="size")


def test_loops_without_parameters_pass_their_inner_loops_on(tmp_path):
    """A loop no parameter reaches, around one that a parameter does: the inner loop's set."""
    program = TaintProgram(("n", "m"), [SourceFunction("main"), SourceFunction(
        "f", behaviours=[Behaviour((Loop((), (Loop(("n",)), Loop(("m",), (Loop(("n",)),)))),))])])
    for flavour in ("raw", "processed"):
        assert read_taint(program.write(tmp_path / f"f.{flavour}.json", flavour)).functions["f"].groups == \
            sets("n", "m n")


def test_functions_listed_without_loops(tmp_path):
    """A raw file whose functions have no loop entries: read as raw, every function constant."""
    data = MATMUL.raw()
    data["functions"] = {name: {"func_idx": entry["func_idx"]} for name, entry in data["functions"].items()}
    path = tmp_path / "noloops.json"
    path.write_text(json.dumps(data))
    analysis = read_taint(path)
    assert analysis.flavours == {"raw"}
    assert {name: f.status for name, f in analysis.functions.items()} == {
        "create_matrix": CONSTANT, "mat_mul": CONSTANT, "main": PRUNED, "atoi": PRUNED}
