"""The workflow from configuration to PDF: plan, config errors, a full tiny run, an interrupted run."""
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
from throughput.machines import archive
from throughput.report import paper_check
from throughput.setup import paths
from throughput.core import provenance
from throughput.experiments import memory_bandwidth

SEED_ROWS = {"inplace, seed": ["87.8", "27.2", "27.1", "25.6"], "immutable, seed": ["91.2", "38.7", "39.2", "39.2"]}


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


def _table_rows(tex: str) -> dict[str, list[str]]:
    body = tex.split(r"\midrule")[1].split(r"\bottomrule")[0]
    rows = [line.rstrip("\\ ").split("&") for line in body.strip().splitlines()]
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows}


@pytest.mark.slow
def test_tiny_run_produces_the_paper_with_the_memory_bandwidth_table(tiny_study):
    # The session's one run of the tiny study (tests/conftest.py: through the Slurm profile
    # where Slurm runs here); what follows plans and runs in its folder.
    workdir, result = tiny_study.workdir, tiny_study.result
    assert result.returncode == 0, result.stderr[-3000:]

    rows = _table_rows((workdir / "paper/generated/memory_bandwidth/opt_table.tex").read_text())
    assert list(rows) == ["inplace, seed", "inplace, this run", "immutable, seed", "immutable, this run"]
    for label, cells in rows.items():
        # a figure that stayed noisy carries the mark (throughput.report.paper.NOISY_MARK)
        # this run's cells carry their 95% interval (throughput.report.paper.with_interval)
        numbers = [re.fullmatch(r"\\num\{([0-9.e+-]+)\}(?:\\,\$\\pm\$\\,[0-9.e+]+\\%)?(?:\\textsuperscript\{\\dag\})?",
                                c).group(1) for c in cells]
        assert len(numbers) == 4 and all(float(n) > 0 for n in numbers)
        if label in SEED_ROWS:
            assert numbers == SEED_ROWS[label]

    pdf = workdir / "paper/build/paper.pdf"
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert "Memory bandwidth" in text
    # (one round here: no interval; five in the default config print each cell +- its interval)
    assert re.search(r"inplace, this run(\s+[0-9.]+(\s*±\s*[0-9.]+%)?†?){4}", text), "opt table not in the PDF"
    # the machine tables: this machine's row, its CPU as its runs recorded it, and its memory-bandwidth row
    assert re.search(r"this machine\s+" + re.escape(provenance.cpu_model()[:15]), text), "machine table not in the PDF"
    assert re.search(r"this machine\s+[0-9]+(\s+[0-9.]+(\s*±\s*[0-9.]+%)?†?){8}", text), \
        "memory bandwidth's machine row not in the PDF"
    assert "??" not in text, "unresolved reference or macro in the PDF"
    assert paper_check.problems(workdir) == []  # what CI checks after `make paper`

    executed = workdir / "results/memory_bandwidth/memory_bandwidth.ipynb"
    assert executed.exists() and len(list((workdir / "results/memory_bandwidth/raw").glob("*.parquet"))) > 10

    # A second run has nothing to do.
    again = snakemake(workdir, "-n", "--cores", "2", "--configfile", str(TINY_CONFIG))
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr

    # An edit to one experiment's kernel re-runs that experiment and the paper,
    # nothing else; an edit to a dataset generator re-makes its datasets and
    # what reads them. (Each edit is undone after.)
    for source, expected in _EDITS.items():
        assert _would_run_after_editing(workdir, source) == expected, source

    # A changed config re-runs exactly the experiments it feeds, and what reads their outputs:
    # one key of one section in the config file itself, then a second config file over it
    # (what `make paper CONFIG=...` passes after the default).
    settings = yaml.safe_load(TINY_CONFIG.read_text())
    settings["memory_bandwidth"]["n_values"] += 1000
    changed = workdir / "changed.yaml"
    changed.write_text(yaml.safe_dump(settings))
    assert _planned(workdir, changed) == {"memory_bandwidth": 1, **_AFTER_AN_EXPERIMENT}
    over = workdir / "over.yaml"
    over.write_text(yaml.safe_dump({"writing": {"random_mb": 0.6}}))
    assert _planned(workdir, TINY_CONFIG, over) == {"writing": 1, **_AFTER_AN_EXPERIMENT}

    # This run's results, archived as another machine and named in the config, round-trip
    # into every machine table: the archived column holds exactly this machine's figures.
    archive.pack("earlier-run", workdir / "results", workdir / "archived" / "earlier-run")
    with_archive = workdir / "with_archive.yaml"
    with_archive.write_text(yaml.safe_dump({"machines": {"archived": ["earlier-run"],
                                                         "archive_dir": str(workdir / "archived")}}))
    shown = snakemake(workdir, "--cores", "2", "--configfile", str(TINY_CONFIG), str(with_archive))
    assert shown.returncode == 0, shown.stderr[-3000:]
    generated = workdir / "paper/generated"
    for experiment in ("memory_bandwidth", "rdataframe"):  # a row per machine
        rows = _table_rows((generated / experiment / "machine_table.tex").read_text())
        assert list(rows) == ["this machine", "earlier-run"] and rows["this machine"] == rows["earlier-run"], rows
    for experiment, per_machine in (("writing", 1), ("reader_comparison", 2)):  # columns per machine
        tex = (generated / experiment / "machine_table.tex").read_text()
        assert "earlier-run" in tex.split(r"\midrule")[0], experiment
        body = tex.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
        for cells in ([c.strip() for c in line.rstrip("\\ ").split("&")] for line in body):
            assert cells[-2 * per_machine:-per_machine] == cells[-per_machine:], (experiment, cells)
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert re.search(r"earlier-run\s+" + re.escape(provenance.cpu_model()[:15]), text), "no archived row in the PDF"
    assert "Archived machines with memory bandwidth runs: earlier-run." in " ".join(text.split())
    assert paper_check.problems(workdir) == []


REPO_KERNELS = REPO / "kernels"
# study_noise (the method section's sentence on how quiet the machine was) and
# study_machines (its machine table) read every experiment's stored runs, so they
# follow any experiment that re-runs.
_AFTER_AN_EXPERIMENT = {"study_noise": 1, "study_machines": 1, "paper": 1, "all": 1}
# An edit to what an experiment's notebook runs (its kernels, its Python) re-runs its standalone run
# too (rules/standalone.smk: its time goes in the method section); a config change does not.
_STANDALONE = {"standalone_notebook": 1, "study_standalone": 1}
_EDITS = {
    "memory_bandwidth/add_constant.cpp": {"kernel": 4, "memory_bandwidth": 1, **_STANDALONE, **_AFTER_AN_EXPERIMENT},
    "reader_comparison/read_branch.cpp": {"kernel": 1, "reader_comparison": 1, **_STANDALONE, **_AFTER_AN_EXPERIMENT},
    "datasets/make_aod_like.cpp":
        # the flat AOD-like file and the split-object one, each with its RNTuple and Numpy copies;
        # the writing experiment builds its data products from the flat one; the reader comparison's
        # standalone run generates its own with it
        {"kernel": 1, "aod_like": 1, "aod_like_objects": 1, "rntuple_copy": 2,
         "reader_comparison_numpy": 2, "reader_comparison": 1, "writing": 1, **_STANDALONE, **_AFTER_AN_EXPERIMENT},
    # an experiment's Python re-runs its notebook; a shared room's, every notebook
    "../src/throughput/experiments/memory_bandwidth/report.py":
        {"memory_bandwidth": 1, **_STANDALONE, **_AFTER_AN_EXPERIMENT},
    "../src/throughput/core/intervals.py":
        {**dict.fromkeys(("memory_bandwidth", "gpu_bandwidth", "reader_comparison", "writing", "rdataframe"), 1),
         **_STANDALONE, "standalone_notebook": 5, **_AFTER_AN_EXPERIMENT},
}


def _planned(workdir: Path, *configs: Path) -> dict[str, int]:
    """Jobs per rule that `snakemake -n` plans in `workdir` with `configs` ({} for none)."""
    plan = snakemake(workdir, "-n", "--cores", "2", "--configfile", *map(str, configs))
    assert plan.returncode == 0, plan.stderr[-2000:]
    output = plan.stdout + plan.stderr
    if "Nothing to be done" in output:
        return {}
    assert "Job stats:" in output, output[-2000:]
    stats = output.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", stats, re.MULTILINE)}


def _would_run_after_editing(workdir: Path, source: str) -> dict[str, int]:
    """Jobs per rule that `snakemake -n` plans once `source` is edited.

    The edit is a real one (a comment appended, then the file put back byte for
    byte with its modification time): Snakemake ignores a newer modification
    time when the content's checksum it recorded did not change.
    """
    path = REPO_KERNELS / source
    before, content = path.stat(), path.read_bytes()
    try:
        comment = b"#" if path.suffix == ".py" else b"//"
        path.write_bytes(content + b"\n" + comment + b" edited by tests/workflow/test_workflow.py\n")
        return _planned(workdir, TINY_CONFIG)
    finally:
        path.write_bytes(content)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


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
    # own: arrays of 160 MB keep the group after the first one long enough to be
    # interrupted, which throughput.core.notebook does at once (it kills the kernel). Two -O
    # levels and no numba keep the rest short: the table and the reuse are what is tested.
    config = tmp_path / "slow.yaml"
    settings = yaml.safe_load(TINY_CONFIG.read_text())
    settings.update({"repetitions": 4, "warmup": 1, "memory_bandwidth": {
        "n_values": 20_000_000, "opt_levels": ["O2", "O3"], "python_methods": ["numpy"]}})
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
