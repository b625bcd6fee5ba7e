"""binder/ is derived from envs/, and a fresh environment built from it alone runs every notebook."""
from __future__ import annotations

import subprocess

import pytest

from conftest import REPO, command_env


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
    result = subprocess.run(["bash", str(REPO / "binder/check_fresh_env.sh"), str(tmp_path)],
                            capture_output=True, text=True, env=command_env(), timeout=1800)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    for notebook in (REPO / "notebooks").glob("*.ipynb"):
        assert (tmp_path / "executed" / notebook.name).exists()
    assert list((tmp_path / "figures").rglob("*.pdf")), "the notebooks made no figures"
