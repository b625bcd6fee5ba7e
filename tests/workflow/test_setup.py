"""The set-up that `make paper` and `make test` share is done once and then reused."""
from __future__ import annotations

import subprocess

from conftest import REPO, command_env


def test_second_setup_reinstalls_nothing():
    dry = subprocess.run(["make", "-n", "env"], cwd=REPO, capture_output=True, text=True, env=command_env())
    assert dry.returncode == 0, dry.stderr
    assert "pip install" not in dry.stdout and "venv" not in dry.stdout, dry.stdout


def test_kernel_build_is_incremental():
    for _ in range(2):  # the first call finishes any pending build; the second must find nothing to do
        build = subprocess.run(["kernels/build.sh", "build/kernels", "python"], cwd=REPO, capture_output=True,
                               text=True, env=command_env())
        assert build.returncode == 0, build.stderr
    assert "no work to do" in build.stdout or "Nothing to be done" in build.stdout, build.stdout


def test_system_packages_present_after_setup():
    for what in ("build", "tex", "slurm"):
        check = subprocess.run(["envs/install-system.sh", what], cwd=REPO, capture_output=True, text=True)
        assert check.returncode == 0 and "Installing" not in check.stdout, check.stdout + check.stderr


def test_make_paper_takes_another_scale():
    def snakemake_line(*variables):
        dry = subprocess.run(["make", "-n", "paper", *variables], cwd=REPO, capture_output=True, text=True,
                             env=command_env())
        assert dry.returncode == 0, dry.stderr
        return next(line for line in dry.stdout.splitlines() if line.startswith("snakemake "))

    assert "--configfile" not in snakemake_line()
    assert snakemake_line("CONFIG=config/medium.yaml").endswith("--configfile config/medium.yaml")
