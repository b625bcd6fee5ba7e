"""binder/ is derived from envs/, and a fresh environment built from it alone runs every notebook
within a Binder-like host's means."""
from __future__ import annotations

import importlib.util
import json
import subprocess

import pytest

from conftest import REPO, command_env
from throughput.experiments.reader_comparison.processes import java_dir, root4j_dir

# A reviewer re-executes one notebook with its defaults on a Binder-like host: 2 cores, 2 GB.
WALL_LIMIT_S = 60
MEMORY_LIMIT_BYTES = 2e9


def _measure_notebook():
    """binder/measure_notebook.py (not a package) as a module."""
    spec = importlib.util.spec_from_file_location("measure_notebook", REPO / "binder" / "measure_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _packages(path):
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def test_binder_requirements_match_envs():
    assert _packages(REPO / "binder/requirements.txt") == _packages(REPO / "envs/requirements.txt"), \
        "binder/requirements.txt is out of date: run `make binder`"


def test_binder_apt_packages_match_envs():
    assert _packages(REPO / "binder/apt.txt") == _packages(REPO / "envs/apt.txt"), \
        "binder/apt.txt is out of date: run `make binder`"


def test_requirements_are_pinned():
    for line in _packages(REPO / "envs/requirements.txt"):
        assert "==" in line, f"envs/requirements.txt: '{line}' is not pinned"


@pytest.mark.slow
def test_fresh_binder_environment_executes_every_notebook(tmp_path):
    # The check executes the notebooks one at a time and measures each (binder/measure_notebook.py):
    # this one execution is both the fresh-environment check and the limits' measurement.
    env = command_env()
    # The Java readers' jars this test session built (test_root4j, test_reader_comparison) are
    # postBuild's too: building them again here would take 40 s and check nothing new (postBuild
    # still calls both builds, which find them). The venv and the kernels are built fresh.
    if (java_dir() / "laurelin-reader.jar").is_file() and (root4j_dir() / "root4j-reader.jar").is_file():
        env["THROUGHPUT_JAVA_DIR"] = str(java_dir())
    result = subprocess.run(["bash", str(REPO / "binder/check_fresh_env.sh"), str(tmp_path)],
                            capture_output=True, text=True, env=env, timeout=1800)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    describe = _measure_notebook().describe
    lines, over = [], []
    for notebook in sorted((REPO / "notebooks").glob("*.ipynb")):
        assert (tmp_path / "executed" / notebook.name).exists()
        measured = json.loads((tmp_path / "executed" / f"{notebook.stem}.json").read_text())
        assert measured["returncode"] == 0 and measured["samples"] > 0 and measured["peak_pss_bytes"] > 0, measured
        line = describe(measured)
        lines.append(line)
        if measured["wall_s"] >= WALL_LIMIT_S or measured["peak_pss_bytes"] >= MEMORY_LIMIT_BYTES:
            over.append(line)
    print("\n".join(lines))
    assert not over, (f"over a Binder host's {WALL_LIMIT_S} s or {MEMORY_LIMIT_BYTES / 1e9:.0f} GB with the defaults "
                      "(shrink the notebook's parameters cell):\n" + "\n".join(over) + "\nall:\n" + "\n".join(lines))
    assert list((tmp_path / "figures").rglob("*.pdf")), "the notebooks made no figures"
