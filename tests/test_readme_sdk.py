"""The README's SDK example runs as written, on the inputs its own comments generate.

A new user copies the block into a script: it named inputs no generator wrote (``main->solve`` in a
study without it, ``study/`` for two different studies) and put the Dask part in the same script, whose
workers re-ran everything outside the ``__main__`` guard.  The block's comment lines are the commands
that make its inputs; this test runs them, then the block, in an empty folder.
"""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest

from pmkit.cli import main as cli_main

README = Path(__file__).resolve().parents[1] / "README.md"


def sdk_blocks() -> list[str]:
    """The Python blocks of the README's ``## SDK`` section, in order."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## SDK\n"):]
    section = section[:section.index("\n## ", 1)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def run_generators(block: str) -> None:
    """Run the block's leading comment commands (``python -m MODULE ...``, ``pmkit ...``) in-process."""
    for line in block.splitlines():
        if not line.startswith("# "):
            break
        words = shlex.split(line[2:], comments=True)
        if words[:2] == ["python", "-m"]:
            assert importlib.import_module(words[2]).main(words[3:]) == 0, line
        elif words[0] == "pmkit":
            assert cli_main(words[1:]) == 0, line


def test_the_sdk_example_runs_as_written_on_the_inputs_it_names(tmp_path, monkeypatch, builtin_registry):
    pytest.importorskip("otf2")
    monkeypatch.chdir(tmp_path)
    block = sdk_blocks()[0]
    run_generators(block)
    namespace: dict = {"__name__": "readme_sdk"}
    exec(compile(block, "README.md (SDK)", "exec"), namespace)
    # what the block's comments claim
    assert namespace["m"].predict({"p": 65536}).level == 0.9
    assert [s.baseline for s in namespace["strong"].speedups] == [{"p": 32.0}, {"p": 2.0}]
    assert (namespace["b"].kind, namespace["b"].text()) == ("falls", "falls as 1/p")
    assert namespace["gather"] in [r.callpath for r in namespace["comparison"].changed_class()]
    assert len(namespace["findings"]) >= 1 and all(f.detector == "kluge" for f in namespace["findings"])


def test_the_json_example_reads_back_the_law_it_wrote(tmp_path, monkeypatch, builtin_registry):
    monkeypatch.chdir(tmp_path)
    run_generators("# python -m pmkit.testing.example_study example-study\n")
    block = next(b for b in sdk_blocks() if "write_models" in b)
    namespace: dict = {"__name__": "readme_json"}
    exec(compile(block, "README.md (SDK, JSON)", "exec"), namespace)
    assert namespace["document"]["schema"] == "pmkit.models/1"
    assert len(namespace["document"]["models"]) == len(namespace["models"])
    assert namespace["law"] == namespace["models"][0].function


def test_the_dask_example_does_all_its_work_under_the_main_guard():
    dask_block = next(b for b in sdk_blocks() if "open_executor" in b)
    body = dask_block[dask_block.index('if __name__ == "__main__":'):]
    before = dask_block[:dask_block.index('if __name__ == "__main__":')]
    assert [line for line in before.splitlines() if line.strip() and not line.startswith(("import ", "#"))] == []
    assert "pmkit.read(" in body and "pmkit.model(" in body


def test_the_trace_examples_run_on_the_traces_their_page_writes(tmp_path, monkeypatch, builtin_registry):
    pytest.importorskip("otf2")
    monkeypatch.chdir(tmp_path)
    page = (README.parent / "docs" / "traces.md").read_text(encoding="utf-8")
    writing = page[page.index("## Writing test traces"):]
    commands = re.search(r"```sh\n(.*?)```", writing, flags=re.S).group(1)
    run_generators("".join(f"# {line}\n" for line in commands.splitlines() if not line.startswith("pmkit show")))
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 2
    for block in blocks:
        namespace: dict = {"__name__": "traces_example"}
        exec(compile(block, "docs/traces.md", "exec"), namespace)
    assert len(namespace["table"]["t_max"]) == len(namespace["exp"].events)
