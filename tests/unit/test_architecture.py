"""The package's import structure (.importlinter): layers that import only downward, experiments
that do not import each other, no import circle. import-linter checks the package as it is,
and a copy with one upward import shows that the check can fail. Each experiment's spec imports
nothing heavy (a copy with one heavy import shows that check can fail too)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from throughput import REPO
from throughput.experiments import SPECS

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(package_parent: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if package_parent is not None:  # a copy of the package, found before the installed one
        env["PYTHONPATH"] = f"{package_parent}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--config", str(REPO / ".importlinter")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_the_package_keeps_its_layers_and_has_no_import_circle():
    result = _lint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers(tmp_path):
    copy = tmp_path / "throughput"
    shutil.copytree(REPO / "src" / "throughput", copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "core" / "results.py", "a") as stream:  # storage reaching up to the paper's tables
        stream.write("\nfrom ..report import paper  # noqa\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "throughput.core.results -> throughput.report.paper" in result.stdout


@pytest.mark.parametrize("module, line, arrow", [
    # two rooms of one layer are independent (`|`): the inputs do not reach into the report
    ("inputs/checksums.py", "from ..report import paper", "throughput.inputs.checksums -> throughput.report.paper"),
    # nor does one experiment into another (every experiment found by the contract's wildcard)
    ("experiments/memory_bandwidth/analysis.py", "from ..writing import spec",
     "throughput.experiments.memory_bandwidth.analysis -> throughput.experiments.writing"),
])
def test_siblings_that_import_each_other_break_their_contract(tmp_path, module, line, arrow):
    copy = tmp_path / "throughput"
    shutil.copytree(REPO / "src" / "throughput", copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / module, "a") as stream:
        stream.write(f"\n{line}  # noqa\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert arrow in " ".join(result.stdout.split())  # the report wraps long lines


# --- each experiment's spec is cheap to import (what Snakemake and throughput.configuration take) ---------

HEAVY = ("ROOT", "numba", "cupy", "awkward", "uproot", "matplotlib", "pandas", "numpy")
_HEAVY_LOADED = ("import importlib, json, sys; importlib.import_module(sys.argv[1]); "
                 f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")


def _heavy_loaded(module: str, package_parent: Path | None = None) -> list[str]:
    """The heavy modules a fresh interpreter has loaded once it imported `module` alone."""
    env = dict(os.environ)
    if package_parent is not None:  # a copy of the package, found before the installed one
        env["PYTHONPATH"] = f"{package_parent}{os.pathsep}{env.get('PYTHONPATH', '')}"
    run = subprocess.run([sys.executable, "-c", _HEAVY_LOADED, module], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_an_experiments_spec_imports_nothing_heavy(name):
    assert _heavy_loaded(f"throughput.experiments.{name}.spec") == []


def test_a_python_reader_process_starts_with_only_what_it_reads_with():
    """`python -m throughput.experiments.reader_comparison read` starts every uproot and Numpy
    reader process of every round: it loads numpy and numba (the checksum), uproot when it reads
    with uproot, but not pandas, matplotlib or ROOT (the other commands' and the report's)."""
    assert _heavy_loaded("throughput.experiments.reader_comparison.command_line") == ["numba", "numpy"]


def test_a_heavy_import_in_a_spec_is_found(tmp_path):
    copy = tmp_path / "throughput"
    shutil.copytree(REPO / "src" / "throughput", copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "experiments" / "writing" / "spec.py", "a") as stream:
        stream.write("\nimport numpy  # noqa\n")
    assert _heavy_loaded("throughput.experiments.writing.spec", tmp_path) == ["numpy"]


def test_an_experiment_package_imports_its_measured_code_on_first_use():
    from throughput.experiments import writing

    assert writing.measure_runs.__module__ == "throughput.experiments.writing.measuring"
    assert writing.measure.__module__ == "throughput.experiments.writing.entry"
    assert writing.check_config.__module__ == "throughput.experiments.writing.spec"
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        writing.no_such_name  # noqa: B018


# A script for a fresh interpreter: import argv[1] as argv[2] says ("import": the submodule alone;
# "from": `from package import name`; "attribute": the package, then `package.name`), then print
# the modules loaded (this package's and the heavy ones) and, for "from", the module of the
# package's lazy name argv[3].
_FROM_IMPORT = """
import importlib, json, sys
module, how = sys.argv[1], sys.argv[2]
package, name = module.rsplit(".", 1)
if how == "import":
    importlib.import_module(module)
elif how == "attribute":
    assert getattr(importlib.import_module(package), name) is sys.modules[module]
else:
    exec(f"from {package} import {name} as loaded")
    assert loaded is sys.modules[module], loaded
loaded = sorted(m for m in sys.modules if m.startswith("throughput") or m.split(".")[0] in HEAVY)
lazy = getattr(sys.modules[package], sys.argv[3]).__module__ if how == "from" else None
print(json.dumps([loaded, lazy]))
"""


def _loaded(module: str, how: str, lazy: str = "") -> tuple[list[str], str | None]:
    run = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}" + _FROM_IMPORT, module, how, lazy], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return tuple(json.loads(run.stdout))


@pytest.mark.parametrize("module, lazy, lazy_module", [
    ("throughput.experiments.writing.measuring", "summary", "throughput.experiments.writing.analysis"),
    ("throughput.experiments.memory_bandwidth.vocabulary", "measure_runs", "throughput.experiments.memory_bandwidth.measuring"),
    ("throughput.experiments.gpu_bandwidth.configuration", "paper_macros", "throughput.experiments.gpu_bandwidth.report"),
])
def test_from_an_experiment_package_a_submodule_is_imported_alone(module, lazy, lazy_module):
    """`from package import submodule` asks the package's __getattr__ first (setup.spec.submodule_first):
    it loads no more than importing the submodule itself does, not the package's lazy names (their
    modules, ROOT, numba...); the lazy names still load on first use."""
    alone, _ = _loaded(module, "import")
    from_package, loaded_lazy = _loaded(module, "from", lazy)
    assert from_package == alone
    assert _loaded(module, "attribute")[0] == alone  # `package.submodule`, no lazy name used before
    assert lazy_module not in alone and loaded_lazy == lazy_module


def test_no_lazy_name_of_an_experiment_package_is_a_submodule_name():
    # submodule_first answers every submodule's name: a lazy name of the same would never load
    import ast

    for name in SPECS:
        package = REPO / "src" / "throughput" / "experiments" / name
        submodules = {p.stem for p in package.glob("*.py")} | {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
        tree = ast.parse((package / "__init__.py").read_text())
        names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 for alias in node.names}
        assert not names & submodules, f"{name}: lazy names that are submodules: {sorted(names & submodules)}"


def test_the_configuration_reaches_no_module_by_name():
    # Each section's check is handed to setup/config.py by throughput.configuration, which imports it.
    assert "importlib" not in (REPO / "src" / "throughput" / "setup" / "config.py").read_text()
