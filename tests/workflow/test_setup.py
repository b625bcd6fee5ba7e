"""The set-up that `make paper` and `make test` share is done once and then reused."""
from __future__ import annotations

import subprocess

import pytest

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


def test_the_java_readers_are_built_with_the_kernels_where_the_reader_comparison_looks():
    # `make test` and `make paper` build them beside the kernels (the Makefile's `builds`: Maven's
    # downloads overlap the C++ compile); a second `make java` finds both jars newer than their
    # sources, in the folders the reader comparison runs them from, and builds nothing.
    from throughput.experiments.reader_comparison import processes, spec

    reason = spec.java_available()
    if reason:
        pytest.skip(f"no Java readers here: {reason}")
    jars = {processes.java_dir() / "laurelin-reader.jar": spec.LAURELIN_SOURCES,
            processes.root4j_dir() / "root4j-reader.jar": spec.ROOT4J_SOURCES}
    dry = subprocess.run(["make", "-n", "java"], cwd=REPO, capture_output=True, text=True, env=command_env())
    for command, folder in (("build-java", processes.java_dir()), ("build-root4j", processes.root4j_dir())):
        assert f"{command} {folder.relative_to(REPO)} " in dry.stdout, dry.stdout  # where the experiment looks
    before = {jar: jar.stat().st_mtime_ns if jar.exists() else None for jar in jars}
    made = subprocess.run(["make", "--no-print-directory", "java"], cwd=REPO, capture_output=True, text=True,
                          env=command_env(), timeout=900)
    assert made.returncode == 0 and "not built" not in made.stderr, made.stdout + made.stderr
    for jar, sources in jars.items():
        assert processes._built_after_sources(jar, sources), f"{jar} missing or older than {sources}"
        if before[jar] is not None:
            assert jar.stat().st_mtime_ns == before[jar], f"{jar} was built again"
