"""The study's orchestrator sleeps while a measuring job runs: Snakemake, patched as the study's
Snakefile patches it (throughput.setup.quiet_scheduler), uses next to no CPU while a job that holds
every core runs and another waits (issue 44: without it, its scheduler woke once a second per
finished job, a quarter of a core through every measurement of `make paper`)."""
from __future__ import annotations

import subprocess
import sys
import time

import psutil

from conftest import REPO, command_env

QUICK_JOBS = 60   # each finished job started one more chain of scheduler wake-ups before the fix
HOLD_S = 4.0      # how long the job holding every core runs while another waits
# of a core: unpatched, 0.13-0.15 with 60 finished jobs; patched, 0.008-0.012 with a wake a second
# (Snakemake's default rate span) and 0.00-0.01 with the profile's 10 s (measured here)
MAX_SHARE = 0.02
QUIET = "quiet_scheduler.keep_one_reevaluation_timer()"

SNAKEFILE = f"""
from throughput.setup import quiet_scheduler
{QUIET}

rule all:
    input: "held.txt", "waiting.txt"
rule quick:
    output: "quick/{{i}}.txt"
    shell: "touch {{output}}"
rule held:
    input: expand("quick/{{i}}.txt", i=range({QUICK_JOBS}))
    output: "held.txt"
    threads: workflow.cores
    priority: 50  # first, so that the other job waits meanwhile
    shell: "touch started; sleep {HOLD_S}; touch {{output}}"
rule waiting:
    input: expand("quick/{{i}}.txt", i=range({QUICK_JOBS}))
    output: "waiting.txt"
    threads: workflow.cores
    shell: "test -e held.txt && touch {{output}}"  # it did wait
"""


def _cpu_s(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def test_the_study_quiets_its_scheduler():
    assert QUIET in (REPO / "workflow" / "Snakefile").read_text()


def test_snakemake_sleeps_while_a_job_holds_every_core(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    argv = [sys.executable, "-m", "snakemake", "--cores", "2", "--workflow-profile",
            str(REPO / "workflow" / "profiles" / "default")]
    log = tmp_path / "snakemake.log"
    with open(log, "w") as out:
        process = subprocess.Popen(argv, cwd=tmp_path, env=command_env(), stdout=out, stderr=subprocess.STDOUT)
        scheduler = psutil.Process(process.pid)
        deadline = time.monotonic() + 120
        while not (tmp_path / "started").exists():
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.05)
        time.sleep(0.5)  # the scheduling round that started the job is over
        wall0, cpu0 = time.monotonic(), _cpu_s(scheduler)
        time.sleep(HOLD_S - 1.5)
        wall1, cpu1 = time.monotonic(), _cpu_s(scheduler)
        process.wait(timeout=120)
    assert process.returncode == 0, log.read_text()[-3000:]
    share = (cpu1 - cpu0) / (wall1 - wall0)
    assert share < MAX_SHARE, (f"snakemake kept {share:.1%} of a core busy while a job held every core "
                               f"(at most {MAX_SHARE:.0%}): does throughput.setup.quiet_scheduler still patch it?")
