"""The workflow from configuration to PDF: plan, config errors, a path from the config, an interrupted run (the\ntiny study's own run is read in test_tiny_study.py)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, TINY_CONFIG, command_env, snakemake
from throughput.setup import config as study_config
from throughput.setup import paths
from throughput.experiments import memory_bandwidth


def test_dry_run_lists_the_plan_even_with_more_cores_than_the_machine(tmp_path):
    result = snakemake(tmp_path, "-n", "--cores", "64")
    assert result.returncode == 0, result.stderr
    for rule in ("kernel", "memory_bandwidth", "study_macros", "paper"):
        assert re.search(rf"\b{rule}\b", result.stdout), f"rule {rule} missing from the plan"
    # a kernel job builds with the jobs it asked for (on Slurm, its cpus_per_task), not every core
    levels = set(re.findall(r"CMAKE_BUILD_PARALLEL_LEVEL=(\d+) ", result.stdout))
    assert levels == {"4"} and re.search(r"rule kernel:(?:\n    .*)*\n    threads: 4\n", result.stdout), levels
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("bad, key, value", [
    ({"memory_bandwidth": {"max_threads": 0}}, "memory_bandwidth.max_threads", "0"),
    ({"repetitions": 0}, "repetitions", "0"),
    ({"memory_bandwidth": {"opt_levels": ["O3", "O4"]}}, "memory_bandwidth.opt_levels[1]", "O4"),
    ({"memory_bandwidth": {"n_valeus": 1000}}, "memory_bandwidth.n_valeus", "n_valeus"),
    ({"repetitons": 3}, "repetitons", "repetitons"),
    ({"memory_bandwidth": {"n_values": 10**13}}, "memory_bandwidth.n_values", str(10**13)),
    ({"datasets": {"compression": "BROTLI"}}, "datasets.compression", "BROTLI"),
    ({"datasets": {"levels": {"ZSTD": 12}}}, "datasets.levels.ZSTD", "12"),
])
def test_bad_config_stops_before_any_job_and_names_key_and_value(tmp_path, bad, key, value):
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump(bad))
    result = snakemake(tmp_path, "--cores", "2", "--configfile", str(config))
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert f"'{key}'" in output and value in output, output[-2000:]
    assert not (tmp_path / "results").exists() and not (tmp_path / "build").exists()


def test_a_path_from_the_config_reaches_a_shell_as_a_name_only(tmp_path):
    # datasets.source reaches shell commands as a path (the real files' copies: make-numpy and
    # make-rntuple). A folder whose name holds a space, quotes and backticks is a name, never
    # code, in a working directory whose name holds a space too; one with '$' (ROOT expands
    # $VAR and $(VAR) in file names) stops the run before any job, naming the key.
    def run_with_source(name: str) -> tuple[subprocess.CompletedProcess, Path]:
        source = tmp_path / name
        source.mkdir()
        for real in (paths.SHARED / "data").glob("*.root"):
            (source / real.name).symlink_to(real)
        config = tmp_path / f"{len(name)}.yaml"
        config.write_text(yaml.safe_dump({"datasets": {"source": str(source)}}))
        workdir = tmp_path / f"work dir {len(name)}"
        (workdir / "build").mkdir(parents=True)
        (workdir / "build/kernels").symlink_to(REPO / "build/kernels")  # built by `make test`
        return snakemake(workdir, *copies, "--cores", "2", "--configfile", str(TINY_CONFIG), str(config)), workdir

    copies = ["data/reader_comparison/real/uproot-HZZ-zstd.npz", "data/reader_comparison/real/uproot-HZZ-zstd.ntuple.root"]
    result, workdir = run_with_source("""real 'files" `touch INJECTED`; touch INJECTED2""")
    assert result.returncode == 0, result.stderr[-3000:]
    assert all((workdir / copy).stat().st_size > 0 for copy in copies)
    result, workdir = run_with_source("real $(touch INJECTED3)")
    assert result.returncode != 0 and "config key 'datasets.source'" in result.stderr, result.stderr[-3000:]
    assert "ROOT expands" in result.stderr and not (workdir / "data").exists()
    # a shell that ran a name would have touched the files in its working directory
    assert not [*tmp_path.rglob("INJECTED*"), *REPO.glob("INJECTED*")], "a shell ran the folder's name"


@pytest.mark.slow
def test_interrupted_run_leaves_no_false_output_and_finishes_when_run_again(tmp_path):
    # Only the memory-bandwidth notebook (and its kernels, built here by the workflow's
    # kernel rule) are asked for: the interruption lands in the middle of its measurements.
    # Its runs are stored a group (a thread count) at a time, each pass a process of its
    # own: arrays of 160 MB, in two rounds, keep the group after the first one long enough to be
    # interrupted, which throughput.core.notebook does at once (it kills the kernel). Two -O
    # levels, no numba and no cache-and-disk runs keep the rest short: the table and the reuse
    # are what is tested.
    config = tmp_path / "slow.yaml"
    settings = yaml.safe_load(TINY_CONFIG.read_text())
    settings.update({"repetitions": 2, "warmup": 1, "memory_bandwidth": {
        "n_values": 20_000_000, "opt_levels": ["O2", "O3"], "python_methods": ["numpy"], "hierarchy": False}})
    config.write_text(yaml.safe_dump(settings))
    target = "results/memory_bandwidth/memory_bandwidth.ipynb"
    argv = ["snakemake", "--snakefile", str(REPO / "workflow/Snakefile"),
            "--directory", str(tmp_path), target, "--cores", "2", "--configfile", str(config)]
    proc = subprocess.Popen(argv, env=command_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    raw = tmp_path / "results/memory_bandwidth/raw"
    # The first group's runs are written one file after another once it is measured; only a
    # group with all its files stored is reused, so wait for all of them before interrupting.
    section = study_config.validate(settings, check_resources=False)["memory_bandwidth"]
    section["max_threads"] = section["max_threads"] or study_config.usable_cores()
    params = {**section, "repetitions": settings["repetitions"], "warmup": settings["warmup"]}
    first_group = {f"{run['name']}.parquet" for run in memory_bandwidth.groups(params)[0].runs}
    deadline = time.monotonic() + 600
    while not (raw.exists() and first_group <= {p.name for p in raw.glob("*.parquet")}):
        assert proc.poll() is None and time.monotonic() < deadline, "workflow ended before the notebook ran"
        time.sleep(0.2)
    # What Ctrl-C does, pressed again until the run stops: Snakemake swallows a
    # SIGINT that lands while it writes a log line.
    for _ in range(120):
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=1)
            break
        except subprocess.TimeoutExpired:
            pass
    proc.wait(timeout=120)
    assert proc.returncode != 0, "the run finished: the interruption came too late to test anything"

    assert not (tmp_path / target).exists()
    assert not (tmp_path / "paper/generated/memory_bandwidth/macros.tex").exists()
    survived = {name: (raw / name).stat().st_mtime_ns for name in first_group if (raw / name).exists()}
    assert survived, "measurements finished before the interruption were lost"

    result = snakemake(tmp_path, target, "--cores", "2", "--configfile", str(config))
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / target).exists() and (tmp_path / "paper/generated/memory_bandwidth/macros.tex").exists()
    # Runs finished before the interruption were reused, not measured again.
    assert {p: (raw / p).stat().st_mtime_ns for p in survived} == survived
