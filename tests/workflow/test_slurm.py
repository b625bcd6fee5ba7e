"""The Slurm profile (workflow/profiles/slurm) on a real Slurm: the tiny study the session runs
through snakemake-executor-plugin-slurm to the PDF on a single-node Slurm of this host
(tests/conftest.py's tiny_study, tests/slurm_cluster.py). What the controller recorded of
every job is checked here: each measuring rule had its node to itself. Without Slurm or
root (slurmd starts jobs as their user) the test is skipped with the reason."""
from __future__ import annotations

import datetime
import re

import pytest
import yaml

from slurm_cluster import PROFILE
from throughput.report import paper_check
from throughput.experiments import SPECS


# The rules that measure: each experiment's notebook, and each notebook's standalone run (its time)
MEASURING_RULES = [*SPECS, "standalone_notebook"]


def test_every_measuring_rule_asks_for_its_node_exclusively():
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    for name in MEASURING_RULES:
        extra = profile["set-resources"].get(name, {}).get("slurm_extra", "")
        assert "--exclusive" in extra, f"the Slurm profile lets {name} share its node"


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
        assert len(mine) == (len(SPECS) if name == "standalone_notebook" else 1), f"{name}: {len(mine)} Slurm jobs"
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
