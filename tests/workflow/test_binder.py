"""binder/ is derived from envs/, and the environment it makes (the project's own, when it holds
exactly binder's pinned packages, else a fresh one) passes binder/postBuild. A notebook run with its
own defaults by the tiny study's rule standalone_notebook in that environment is held to a Binder
host's means in test_tiny_study.py (every notebook, by `make paper`'s check)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, command_env
from throughput.core import harness
from throughput.experiments.reader_comparison.processes import java_dir, root4j_dir



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


def _normalized(requirements: list[str]) -> list[str]:
    """NAME==VERSION lines with each name as PEP 503 normalizes it, sorted: how
    binder/check_fresh_env.sh compares an environment with binder/requirements.txt."""
    def line(requirement: str) -> str:
        name, _, version = requirement.partition("==")
        return f"{re.sub(r'[-_.]+', '-', name.lower())}=={version}"
    return sorted(line(r) for r in requirements)


def _frozen(python_env: Path) -> list[str]:
    out = subprocess.run([str(python_env / "bin" / "pip"), "freeze", "--exclude-editable", "--disable-pip-version-check"],
                         capture_output=True, text=True, check=True).stdout
    return _normalized([line for line in out.splitlines() if line.strip()])


@pytest.mark.slow
def test_binder_environment_passes_postbuild(tmp_path):
    # The environment `make` built from envs/requirements.txt is the one binder/requirements.txt makes
    # (the same file, test_binder_requirements_match_envs) when it holds exactly those packages: then the
    # check uses it (building it again took 100 s and checked nothing new), and postBuild builds the
    # kernels into the project's build (a no-op after `make`, as it is on Binder after its own build).
    env = command_env()
    # The Java readers' jars that `make test`'s set-up built (`make java`) are postBuild's too:
    # building them again here would check nothing new (postBuild still calls both builds, which
    # find them).
    if (java_dir() / "laurelin-reader.jar").is_file() and (root4j_dir() / "root4j-reader.jar").is_file():
        env["THROUGHPUT_JAVA_DIR"] = str(java_dir())
    python_env = Path(sys.prefix)
    reuse = _frozen(python_env) == _normalized(_packages(REPO / "binder/requirements.txt"))
    argv = ["bash", str(REPO / "binder/check_fresh_env.sh"), str(tmp_path), "--no-notebooks"]
    if reuse:
        argv += ["--python-env", str(python_env), "--kernels", str(harness.kernels_dir().parent)]
    result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    assert ("used as the fresh environment" in result.stdout) == reuse, result.stdout[-2000:]
    if not reuse:
        print(f"{python_env} differs from binder/requirements.txt: a fresh environment was built")


def test_the_binder_check_refuses_an_environment_of_other_packages(tmp_path):
    fake = tmp_path / "env" / "bin"
    fake.mkdir(parents=True)
    (fake / "pip").write_text("#!/bin/sh\necho 'numpy==0.0.1'\n")
    (fake / "pip").chmod(0o755)
    result = subprocess.run(["bash", str(REPO / "binder/check_fresh_env.sh"), str(tmp_path / "work"),
                             "--python-env", str(tmp_path / "env"), "--no-notebooks"],
                            capture_output=True, text=True, env=command_env(), timeout=60)
    assert result.returncode == 1
    assert "does not hold exactly binder/requirements.txt's packages" in result.stderr
    assert "> numpy==0.0.1" in result.stderr


def test_the_binder_check_takes_an_environment_whose_names_pip_spells_otherwise(tmp_path):
    # pip freeze writes some names as their wheels do (hepdata_lib, Markdown for markdown):
    # the same packages, which a fresh environment from CI's `make` holds (it was rebuilt for that)
    pinned = [line.partition("==") for line in _packages(REPO / "binder/requirements.txt")]
    respelled = [f"{name.replace('-', '_').upper() if i % 3 == 0 else name}=={version}"
                 for i, (name, _, version) in enumerate(pinned)]
    fake = tmp_path / "env" / "bin"
    fake.mkdir(parents=True)
    (fake / "pip").write_text("#!/bin/sh\ncat <<'EOF'\n" + "\n".join(respelled) + "\nEOF\n")
    (fake / "pip").chmod(0o755)
    (fake / "python").write_text("#!/bin/sh\nexit 3\n")  # postBuild's first step stops it, installing nothing
    (fake / "python").chmod(0o755)
    result = subprocess.run(["bash", str(REPO / "binder/check_fresh_env.sh"), str(tmp_path / "work"),
                             "--python-env", str(tmp_path / "env"), "--no-notebooks"],
                            capture_output=True, text=True, env={**command_env(), "PATH": f"{fake}:/usr/bin:/bin"},
                            timeout=60)
    assert "used as the fresh environment" in result.stdout, result.stderr[-2000:]
    assert result.returncode == 3  # stopped at postBuild's fake python, past the comparison
    assert _normalized(respelled) == _normalized(_packages(REPO / "binder/requirements.txt"))
