"""Shared fixtures: the repository, and how to run its commands in a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TINY_CONFIG = REPO / "tests" / "data" / "tiny.yaml"


def command_env() -> dict[str, str]:
    """The environment of `make`: the project's venv first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env.setdefault("XDG_CACHE_HOME", str(REPO / ".cache"))
    return env


def snakemake(workdir: Path, *args: str, check: bool = False, **kwargs) -> subprocess.CompletedProcess:
    """Run the study's workflow in `workdir` (sources stay in the repository)."""
    argv = ["snakemake", "--snakefile", str(REPO / "workflow" / "Snakefile"), "--directory", str(workdir), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=command_env(), check=check, **kwargs)


@pytest.fixture
def repo() -> Path:
    return REPO
