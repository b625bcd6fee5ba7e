"""Committed notebooks: no outputs, a tagged parameters cell with the shared conventions and the config
section as one parameter (the schema its only list of keys); the tool that
measures a notebook's execution (tests/workflow/test_binder.py holds every notebook's defaults to a Binder host's means)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import nbformat

from conftest import REPO, command_env

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebook_has_no_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name}: outputs committed"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_has_its_own_id(path):
    """nbformat 4.5 requires a cell id (a missing one is a warning today, an error in nbformat's
    future versions): read from the file itself, which nbformat.read would mend on the fly."""
    raw = json.loads(path.read_text())
    ids = [cell.get("id") for cell in raw["cells"]]
    assert None not in ids, f"{path.name}: cell {ids.index(None)} has no id"
    assert len(set(ids)) == len(ids), f"{path.name}: two cells share an id"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_parameters_cell_names_the_output_folders(path):
    notebook = nbformat.read(path, as_version=4)
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
    for name in ("results_dir", "figures_dir", "paper_dir", "repetitions", "warmup", "noise"):
        assert f"{name} =" in tagged[0].source, f"{path.name}: parameter {name} missing"


# ---- throughput.core.standalone: what the workflow and the Binder check measure each notebook with ----

def _probe_notebook(folder, body: str):
    """A notebook with the shared parameters cell and one cell running `body`."""
    notebook = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell('results_dir = "../results/probe"\nfigures_dir = "../figures/probe"\n'
                                           'paper_dir = "../paper/probe"\nrepetitions = 1\nwarmup = 0')
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [parameters, nbformat.v4.new_code_cell(body)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "notebooks" / "probe.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    return path


def _measure(notebook, work):
    return subprocess.run([sys.executable, "-m", "throughput.core.standalone", str(notebook), str(work)],
                          capture_output=True, text=True, env=command_env(), timeout=300)


def test_measure_notebook_counts_the_children_of_the_kernel(tmp_path):
    # A child of the kernel holds 300 MiB of written pages for 2 s: the tree's peak must include them,
    # and the output folders must be the work directory's.
    notebook = _probe_notebook(tmp_path, (
        "import pathlib, subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', 'import time; block = b\"x\" * (300 * 2**20); time.sleep(2)'], check=True)\n"
        "pathlib.Path(results_dir).mkdir(parents=True)\n"
        "pathlib.Path(results_dir, 'done').write_text('done')"))
    result = _measure(notebook, tmp_path / "work")
    assert result.returncode == 0, result.stdout + result.stderr
    measured = json.loads((tmp_path / "work" / "executed" / "probe.json").read_text())
    assert measured["returncode"] == 0
    assert measured["peak_pss_bytes"] >= 300 * 2**20, measured
    assert measured["peak_rss_sum_bytes"] >= measured["peak_pss_bytes"], measured
    assert len(measured["processes_at_peak"]) >= 3, measured  # papermill, the kernel, its child
    assert measured["wall_s"] >= 2, measured
    assert (tmp_path / "work" / "results" / "probe" / "done").read_text() == "done"
    assert (tmp_path / "work" / "executed" / "probe.ipynb").exists()
    # a second run starts as a reviewer's first: what the first stored is gone before it runs (the
    # probe's mkdir, without exist_ok, fails otherwise)
    again = _measure(notebook, tmp_path / "work")
    assert again.returncode == 0, again.stdout + again.stderr


def test_measure_notebook_fails_with_the_notebook(tmp_path):
    notebook = _probe_notebook(tmp_path, "raise RuntimeError('probe failure')")
    result = _measure(notebook, tmp_path / "work")
    assert result.returncode != 0
    assert json.loads((tmp_path / "work" / "executed" / "probe.json").read_text())["returncode"] != 0
    assert "probe failure" in (tmp_path / "work" / "executed" / "probe.log").read_text()


# ---- config declared once: the schema is the only list of an experiment's keys -------------------

def _parameters_cell(name: str) -> str:
    notebook = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    (cell,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    return cell.source


def _experiments():
    from throughput.experiments import SPECS

    return sorted(SPECS)


@pytest.mark.parametrize("name", _experiments())
def test_the_notebook_takes_its_config_section_whole(name):
    """One parameter named after the section, holding only what differs from the schema's
    defaults; no key of the section copied as a parameter of its own."""
    from throughput.setup import config

    defaults = config.fill_defaults({}, config.load_schema())[name]
    namespace: dict = {}
    exec(_parameters_cell(name), namespace)
    section = namespace.get(name)
    assert isinstance(section, dict), f"{name}.ipynb: no parameter '{name}' holding its config section"
    copied = sorted(set(namespace) & set(defaults))
    assert not copied, f"{name}.ipynb: keys of the section given as parameters of their own: {copied}"
    same = sorted(k for k, v in section.items() if v == defaults.get(k))
    assert not same, f"{name}.ipynb: keys given their schema default (leave them out): {same}"
    config.validate({name: section}, check_resources=False)  # every key known, every value valid
    setup = "\n".join(c.source for c in nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4).cells
                      if c.cell_type == "code" and "configuration.session(" in c.source)
    assert f'"{name}": {name}' in setup, f"{name}.ipynb: does not validate its section as given"


def test_every_parameter_the_workflow_passes_is_a_notebook_parameter(tmp_path):
    """The notebook rules' --parameters (from a dry run of the tiny config) name only parameters
    the notebooks define, and give each its whole config section."""
    import shlex

    from conftest import TINY_CONFIG, snakemake
    from throughput.setup import config

    result = snakemake(tmp_path, "-n", "-p", "--cores", "2", "--configfile", str(TINY_CONFIG))
    assert result.returncode == 0, result.stderr
    passed = {}
    for line in result.stdout.splitlines():
        if "python -m throughput.core.notebook" in line:
            argv = shlex.split(line.split("Shell command:", 1)[-1] if "Shell command:" in line else line)
            notebook = argv[argv.index("throughput.core.notebook") + 1]
            passed[notebook.rsplit("/", 1)[-1].removesuffix(".ipynb")] = json.loads(argv[argv.index("--parameters") + 1])
    assert set(passed) == set(_experiments())
    tiny = config.validate(config.read(TINY_CONFIG), check_resources=False)
    for name, parameters in passed.items():
        namespace: dict = {}
        exec(_parameters_cell(name), namespace)
        unknown = sorted(set(parameters) - set(namespace))
        assert not unknown, f"the workflow passes {name}.ipynb parameters it does not define: {unknown}"
        assert set(parameters[name]) == set(tiny[name]), f"{name}: the section is not passed whole"


def _study_names(code: str) -> dict[str, str]:
    """Local name -> the throughput module it was imported as, from a notebook's code."""
    import ast

    names = {}
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("throughput"):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            names.update({a.asname: a.name for a in node.names if a.name.startswith("throughput") and a.asname})
    return names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_study_name_a_notebook_uses_exists(path):
    """Each `module.name` a notebook reaches through a throughput module it imported exists (a name
    that moved between modules fails here, in seconds, not at the end of a notebook's run)."""
    import ast
    import importlib

    code = "\n".join(_without_magics(cell.source) for cell in nbformat.read(path, as_version=4).cells
                     if cell.cell_type == "code")
    modules = {}
    for local, dotted in _study_names(code).items():
        try:
            modules[local] = importlib.import_module(dotted)
        except ModuleNotFoundError:
            continue  # a function or class imported by name: the import itself checks it
    missing = sorted({f"{node.value.id}.{node.attr}" for node in ast.walk(ast.parse(code))
                      if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                      and node.value.id in modules and not hasattr(modules[node.value.id], node.attr)})
    assert not missing, f"{path.name} uses names its modules do not have: {missing}"


def _without_magics(source: str) -> str:
    """A cell's source without IPython's magics and shell escapes (not Python)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
