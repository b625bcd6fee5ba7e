"""The tests that read the session's one tiny study (tiny_study in tests/conftest.py: the tiny
configuration run once to its PDF, through the Slurm profile on a single-node Slurm of this host
where one can run). They are one module so that one pytest-xdist worker runs them, and the study
once (`make test` distributes by file, --dist loadfile: xdist 3.8's groups do not group under
pytest 9, whose node ids it cannot suffix); the other worker runs the other modules meanwhile."""
from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import REPO, TINY_CONFIG, snakemake
from test_slurm import MEASURING_RULES
from throughput.core import provenance, standalone
from throughput.experiments import SPECS
from throughput.machines import archive
from throughput.report import paper_check

TINY_STANDALONE = sorted(yaml.safe_load(TINY_CONFIG.read_text())["standalone_notebooks"])
SEED_ROWS = {"inplace, seed": ["87.8", "27.2", "27.1", "25.6"], "immutable, seed": ["91.2", "38.7", "39.2", "39.2"]}


# What may follow a number in a table cell read back by pdftotext: its interval, the one-process mark
# (a small circle) and the noisy mark, each raised, which -layout may set on a line of its own
MARKS = r"(\s*±\s*[0-9.]+%)?(\s*\u25e6)?(\s*†)?"


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
        # (one round: the value and the one-process mark, throughput.report.paper.NO_INTERVAL_MARK)
        numbers = [re.fullmatch(r"\\num\{([0-9.e+-]+)\}(?:\\,\$\\pm\$\\,[0-9.e+]+\\%)?(?:\\oneprocess\{\})?"
                                r"(?:\\textsuperscript\{\\dag\})?",
                                c).group(1) for c in cells]
        assert len(numbers) == 4 and all(float(n) > 0 for n in numbers)
        if label in SEED_ROWS:
            assert numbers == SEED_ROWS[label]

    pdf = workdir / "paper/build/paper.pdf"
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert "Memory bandwidth" in text
    # (one round here: no interval, each cell marked so with a small circle; five in the default
    # config print each cell +- its interval)
    assert re.search(r"inplace, this run(\s+[0-9.]+" + MARKS + "){4}", text), "opt table not in the PDF"
    # the machine tables: this machine's row, its CPU as its runs recorded it, and its memory-bandwidth row
    assert re.search(r"this machine\s+" + re.escape(provenance.cpu_model()[:15]), text), "machine table not in the PDF"
    assert re.search(r"this machine\s+[0-9]+(\s+[0-9.]+" + MARKS + "){8}", text), \
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
# study_noise (the method section's sentence on how quiet the machine was),
# study_machines (its machine table) and study_ledger (the seeds' claims, from every
# experiment's printed figures) read every experiment's outputs, so they follow any
# experiment that re-runs.
_AFTER_AN_EXPERIMENT = {"study_noise": 1, "study_machines": 1, "study_ledger": 1, "paper": 1, "all": 1}
# An edit to what an experiment's notebook runs (its kernels, its Python) re-runs its standalone run
# too (rules/standalone.smk: its time goes in the method section), where the config runs one (the
# tiny study: the reader comparison's alone); a config change does not.
_STANDALONE = {"standalone_notebook": 1, "study_standalone": 1}
_EDITS = {
    "memory_bandwidth/add_constant.cpp": {"kernel": 4, "memory_bandwidth": 1, **_AFTER_AN_EXPERIMENT},
    "reader_comparison/read_branch.cpp": {"kernel": 1, "reader_comparison": 1, **_STANDALONE, **_AFTER_AN_EXPERIMENT},
    "datasets/make_aod_like.cpp":
        # the flat AOD-like file and the split-object one, each with its RNTuple and Numpy copies;
        # the writing experiment builds its data products from the flat one; the reader comparison's
        # standalone run generates its own with it
        {"kernel": 1, "aod_like": 1, "aod_like_objects": 1, "rntuple_copy": 2,
         "reader_comparison_numpy": 2, "reader_comparison": 1, "writing": 1, **_STANDALONE, **_AFTER_AN_EXPERIMENT},
    # an experiment's Python re-runs its notebook; a shared room's, every notebook
    "../src/throughput/experiments/memory_bandwidth/report.py": {"memory_bandwidth": 1, **_AFTER_AN_EXPERIMENT},
    "../src/throughput/core/intervals.py":
        {**dict.fromkeys(("memory_bandwidth", "gpu_bandwidth", "reader_comparison", "writing", "rdataframe"), 1),
         **_STANDALONE, **_AFTER_AN_EXPERIMENT},
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


# --- the Slurm profile on a real Slurm (tests/slurm_cluster.py) ------------------------------

def _interval(job: dict[str, str]) -> tuple[datetime.datetime, datetime.datetime]:
    return tuple(datetime.datetime.fromisoformat(job[k]) for k in ("StartTime", "EndTime"))


@pytest.mark.slow
def test_the_slurm_profile_runs_the_tiny_study_on_a_real_slurm(tiny_study):
    if tiny_study.without_slurm:
        pytest.skip(tiny_study.without_slurm)
    assert tiny_study.result.returncode == 0, tiny_study.result.stderr[-4000:]
    jobs = [j for j in tiny_study.slurm_jobs if j.get("Comment", "").startswith("rule_")]
    assert jobs and all(j["JobState"] == "COMPLETED" for j in jobs), [(j["Comment"], j["JobState"]) for j in jobs]
    intervals = {j["JobId"]: _interval(j) for j in jobs}
    for name in MEASURING_RULES:  # a job per experiment, and per notebook run standalone
        # the plugin's comment: rule_<name>, and _wildcards_<values> for a rule with wildcards
        mine = [j for j in jobs if re.fullmatch(f"rule_{name}(_wildcards_.*)?", j["Comment"])]
        assert len(mine) == (len(TINY_STANDALONE) if name == "standalone_notebook" else 1), \
            f"{name}: {len(mine)} Slurm jobs"
        for job in mine:
            _alone_on_its_node(name, job, jobs, intervals, tiny_study.slurm_cpus)
    assert {j["Comment"] for j in jobs} >= {"rule_paper", "rule_study_noise", "rule_study_machines"}
    assert (tiny_study.workdir / "paper/build/paper.pdf").is_file()
    assert paper_check.problems(tiny_study.workdir) == []


def _alone_on_its_node(name, job, jobs, intervals, cpus) -> None:
    """`job` of rule `name` had its node to itself: all its cores, and no job of any kind beside it."""
    assert job["OverSubscribe"] == "NO" and int(job["NumCPUs"]) == cpus, job
    start, end = intervals[job["JobId"]]
    beside = [j["Comment"] for j in jobs if j is not job
              and intervals[j["JobId"]][0] < end and intervals[j["JobId"]][1] > start]
    assert not beside, f"{name} shared its node with {beside}"


# --- a notebook run standalone, as on a Binder host (rules/standalone.smk) -----------------------

@pytest.mark.slow
def test_the_standalone_notebook_runs_within_a_binder_hosts_means_and_the_check_says_so(tiny_study):
    """The tiny study's rule standalone_notebook ran its notebook (tiny.yaml's standalone_notebooks;
    `make paper` runs every one) with its own defaults, in the environment checked above: it must
    finish and fit a Binder host's memory, as the paper check holds every run to. Its time is
    reported (the method section, and here), never a pass mark: CI's second pytest worker runs
    beside it, and a fresh clone's run saw the GPU notebook at 2.4 times the 60 s budget under a
    load of 4 (its standalone default is 56 s on an idle machine)."""
    assert tiny_study.result.returncode == 0, tiny_study.result.stderr[-3000:]
    work = tiny_study.workdir / "results" / "standalone"
    assert sorted(p.stem for p in (work / "executed").glob("*.json")) == TINY_STANDALONE
    for name in TINY_STANDALONE:
        measured = json.loads((work / "executed" / f"{name}.json").read_text())
        assert measured["returncode"] == 0 and measured["samples"] > 0 and measured["peak_pss_bytes"] > 0, measured
        assert (work / "executed" / f"{name}.ipynb").is_file()
        print(standalone.describe(measured))
    # finished and within a Binder host's memory: the check `make paper` makes of every notebook
    assert paper_check.standalone_problems(tiny_study.workdir) == []
    assert list((work / "figures").rglob("*.pdf")), "the notebook made no figures"
    macros = (tiny_study.workdir / "paper" / "generated" / "standalone.tex").read_text()
    assert r"\newcommand{\StudyStandaloneState}{measured}" in macros
