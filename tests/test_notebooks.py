"""Committed notebooks: no outputs, a tagged parameters cell with the shared conventions; the tool that
measures a notebook's execution (tests/test_binder.py holds every notebook's defaults to a Binder host's means)."""
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
def test_parameters_cell_names_the_output_folders(path):
    notebook = nbformat.read(path, as_version=4)
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
    for name in ("results_dir", "figures_dir", "paper_dir", "repetitions", "warmup"):
        assert f"{name} =" in tagged[0].source, f"{path.name}: parameter {name} missing"


# ---- binder/measure_notebook.py: what the Binder check measures each notebook with ------------

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
    return subprocess.run([sys.executable, str(REPO / "binder" / "measure_notebook.py"), str(notebook), str(work)],
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


def test_measure_notebook_fails_with_the_notebook(tmp_path):
    notebook = _probe_notebook(tmp_path, "raise RuntimeError('probe failure')")
    result = _measure(notebook, tmp_path / "work")
    assert result.returncode != 0
    assert json.loads((tmp_path / "work" / "executed" / "probe.json").read_text())["returncode"] != 0
    assert "probe failure" in (tmp_path / "work" / "executed" / "probe.log").read_text()
