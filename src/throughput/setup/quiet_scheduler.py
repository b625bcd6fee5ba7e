"""Snakemake's scheduler, quiet while a benchmark runs (issue 44).

After every scheduling round that leaves a job waiting (a measuring job holds every core, the
next one waits), Snakemake 9's job scheduler arms a timer that wakes it one rate-limiter span
later (`JobScheduler._schedule_reevalutation`, the span of `--max-jobs-per-timespan`, 1 s by
default), and each wake arms the next. Every finished job adds one more such chain of timers
without ending any, so that after the 50-odd jobs of `make paper` the scheduler woke about 55
times a second, each time re-reading the inputs of every waiting job: a quarter of a core on a
2-core machine, measured through every benchmark of the study (12,800 `newfstatat` calls a second).

No setting turns the chains off: a longer span thins them but holds Snakemake's exit for the
span (its timers are not daemon threads), and the rate limiter cannot be unset from a profile.
So this keeps at most one timer pending: a wake already armed re-evaluates the waiting jobs as
any second one would, so what Snakemake schedules, and when, is unchanged (the rate limit still
holds), while the scheduler wakes once a span instead of once per finished job; the workflow's
profiles set the span to 10 s (at Snakemake's rate of 100 jobs a second), since each wake costs
about 10 ms. The timer is a daemon thread, so a finished run exits at once. The Snakefile applies
it; tests/workflow/test_quiet_orchestrator.py measures Snakemake's CPU while a job holds every core.
"""
from __future__ import annotations

import threading
import warnings

_PENDING_LOCK = threading.Lock()


def keep_one_reevaluation_timer() -> bool:
    """Patch Snakemake's job scheduler so that at most one re-evaluation timer is pending. Returns
    whether it could (False, with a warning, where this Snakemake has no such method: the
    scheduler is then as Snakemake made it, and the test above says how busy)."""
    try:
        from snakemake.scheduling.job_scheduler import JobScheduler
    except ImportError:
        return False
    original = getattr(JobScheduler, "_schedule_reevalutation", None)
    if original is None:
        warnings.warn("throughput.setup.quiet_scheduler: this Snakemake has no "
                      "JobScheduler._schedule_reevalutation; its scheduler may stay busy while a job measures")
        return False
    if getattr(original, "keeps_one_timer", False):
        return True

    def schedule_one_reevaluation(self, delay) -> None:
        with _PENDING_LOCK:
            if getattr(self, "_throughput_reevaluation_pending", False):
                return  # the pending wake re-evaluates every waiting job anyway
            self._throughput_reevaluation_pending = True

        def wake() -> None:
            with _PENDING_LOCK:
                self._throughput_reevaluation_pending = False
            self._open_jobs.release()

        timer = threading.Timer(delay, wake)
        timer.daemon = True  # a finished run does not wait for a wake nobody needs
        timer.start()

    schedule_one_reevaluation.keeps_one_timer = True
    JobScheduler._schedule_reevalutation = schedule_one_reevaluation
    return True
