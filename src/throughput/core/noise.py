"""How quiet the machine was while a run measured, and whether its timings are.

The study runs on shared machines: another process can take a core or the
memory bus for seconds, and the same binary then measures half its rate. Two
things make that visible instead of printing it as a result:

* `LoadMonitor` records, for every run, what the rest of the machine did
  meanwhile: the load average, the CPU time the hypervisor stole, the CPU time
  of the processes this one descends from (the orchestrator: the notebook
  runner, Snakemake, make; counted apart, since the study's own harness must
  stay quiet while it measures) and the CPU time used by every other process
  but this one and its children (from /proc/stat and /proc/loadavg: psutil
  does not give machine-wide steal or other processes' time in one reading);
  and what delayed the pass itself:
  the share of its wall time in which some runnable task waited for a CPU
  (the kernel's pressure stall information, /proc/pressure/cpu "some") and
  the involuntary context switches of this process and its children. With
  `Settings.max_retakes` above 0 (none by default, see there), a pass whose
  stall share exceeds `max_stall_share` is taken again (throughput.core.experiment). A
  process's own run delay (/proc/<pid>/schedstat) cannot be read here: the
  kernel's process has exited by the time its pass is judged; the kernels and
  Python methods that sample (bench::Sampler, harness.time_python, the readers)
  take it themselves, per sample (`run_delay_s`), take a sample again while it
  exceeds `max_run_delay_share` of the sample (`sample_retakes`, at most
  `max_sample_retakes`: harness.Retakes), and throughput.report.noise_sentences reports both;
* `interval_half_width` and `Settings` decide whether a run's figure is too
  uncertain to be printed as clean: its 95% interval across processes
  (throughput.core.intervals) wider than `max_half_width` either side (the generic
  loop in throughput.core.experiment re-measures such a group, then flags it).
  `coefficient_of_variation` stays as a description of the passes' spread: from
  five passes it is too uncertain itself to judge by (a sample CV of 10% puts
  the true one anywhere from 6.5 to 24%).
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import resource
import statistics
import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import psutil

from . import harness, intervals

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# Columns of the "cpu" line of /proc/stat, in order (proc(5)); guest time is
# already counted in user and nice.
_STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
_IDLE = ("idle", "iowait")


def _cpu_seconds() -> dict[str, float] | None:
    """Machine-wide CPU seconds by kind since boot, None where /proc/stat is missing."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    values = [int(v) for v in fields[1:1 + len(_STAT_FIELDS)]]
    values += [0] * (len(_STAT_FIELDS) - len(values))
    return {name: value / CLOCK_TICKS for name, value in zip(_STAT_FIELDS, values)}


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _cpu_stall_seconds() -> float | None:
    """Seconds since boot in which some runnable task waited for a CPU (/proc/pressure/cpu's
    "some" total, in microseconds); None where the kernel gives no pressure information."""
    try:
        with open("/proc/pressure/cpu") as pressure:
            some = pressure.readline().split()
    except OSError:
        return None
    fields = dict(field.split("=") for field in some[1:])
    return int(fields["total"]) / 1e6 if some[:1] == ["some"] and "total" in fields else None


def _involuntary_switches() -> int:
    """Involuntary context switches of this process and of its children that have been waited for."""
    return sum(resource.getrusage(who).ru_nivcsw for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


def _own_cpu_seconds() -> float:
    """CPU time of this process and of its children that have been waited for, and of its live
    descendants with theirs: multiprocessing's fork server, whose children are the Python
    methods' rounds (harness.in_fresh_process), waits for them itself, so without it a round's
    CPU time counted as other work's (0.9 to 1.5 cores beside the GPU section's CPU cases)."""
    me = psutil.Process()
    total = 0.0
    for process in (me, *me.children(recursive=True)):
        try:
            times = process.cpu_times()
        except psutil.Error:  # exited meanwhile: its parent's children times hold it once waited for
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def _orchestrator_cpu_seconds() -> float:
    """CPU time of the processes this one descends from (their own, not their children's), init
    (pid 1) left out: the notebook runner, Snakemake and whatever started them. NaN where none
    can be read (no /proc)."""
    try:
        ancestors = [p for p in psutil.Process().parents() if p.pid > 1]
    except psutil.Error:
        return math.nan
    total = 0.0
    for process in ancestors:
        try:
            times = process.cpu_times()
        except psutil.Error:  # exited meanwhile: its time can no longer be told apart
            continue
        total += times.user + times.system
    return total


@dataclass
class Load:
    """What the machine did during one measurement (NaN where the OS does not say)."""

    wall_s: float
    load_avg_1min: float         # at the end of the measurement
    others_cpu_s: float          # CPU time of every process but this one, its children and its orchestrator
    steal_s: float               # CPU time the hypervisor gave to other guests
    cores: int
    stall_s: float = math.nan    # wall time in which some runnable task waited for a CPU
    involuntary_switches: int = 0  # of this process and its children
    orchestrator_cpu_s: float = math.nan  # CPU time of the processes this one descends from

    @property
    def stall_share(self) -> float:
        """Share of the wall time in which some runnable task waited for a CPU (NaN: unknown)."""
        return self.stall_s / self.wall_s if self.wall_s > 0 else math.nan

    @property
    def others_cores(self) -> float:
        """Cores kept busy by other work, on average over the measurement."""
        return self.others_cpu_s / self.wall_s if self.wall_s > 0 else math.nan

    @property
    def orchestrator_cores(self) -> float:
        """Cores kept busy by the study's own orchestrator (Snakemake, the notebook runner), on
        average over the measurement."""
        return self.orchestrator_cpu_s / self.wall_s if self.wall_s > 0 else math.nan

    @property
    def steal_fraction(self) -> float:
        """Share of the machine's CPU time stolen by the hypervisor."""
        return self.steal_s / (self.wall_s * self.cores) if self.wall_s > 0 else math.nan

    def as_columns(self) -> dict[str, float]:
        """The load as columns stored beside a run's timings."""
        return {"load_avg_1min": self.load_avg_1min, "others_cores": self.others_cores,
                "orchestrator_cores": self.orchestrator_cores,
                "steal_fraction": self.steal_fraction, "cpu_stall_share": self.stall_share,
                "involuntary_switches": self.involuntary_switches}


class LoadMonitor:
    """Context manager: `with LoadMonitor() as monitor: ...`, then `monitor.load`."""

    def __enter__(self) -> "LoadMonitor":
        self._wall0 = time.monotonic()
        self._machine0 = _cpu_seconds()
        self._own0, self._orchestrator0 = _own_cpu_seconds(), _orchestrator_cpu_seconds()
        self._stall0, self._switches0 = _cpu_stall_seconds(), _involuntary_switches()
        self.load: Load | None = None
        return self

    def __exit__(self, *exc: Any) -> None:
        wall = time.monotonic() - self._wall0
        machine1, own1, orchestrator1 = _cpu_seconds(), _own_cpu_seconds(), _orchestrator_cpu_seconds()
        # NaN where the ancestors cannot be read; 0 where one exited meanwhile and took its time along
        orchestrator = max(0.0, orchestrator1 - self._orchestrator0) if math.isfinite(orchestrator1) else math.nan
        counted = own1 - self._own0 + (orchestrator if math.isfinite(orchestrator) else 0.0)
        if self._machine0 is None or machine1 is None:
            others = steal = math.nan
        else:
            delta = {k: machine1[k] - self._machine0[k] for k in _STAT_FIELDS}
            busy = sum(v for k, v in delta.items() if k not in _IDLE)
            steal = delta["steal"]
            # Steal is time this VM did not run at all, not work of its processes.
            others = max(0.0, busy - steal - counted)
        load_avg = _load_average()
        stall1 = _cpu_stall_seconds()
        stall = math.nan if self._stall0 is None or stall1 is None else stall1 - self._stall0
        self.load = Load(wall_s=wall, load_avg_1min=math.nan if load_avg is None else load_avg,
                         others_cpu_s=others, steal_s=steal, cores=os.cpu_count() or 1, stall_s=stall,
                         involuntary_switches=_involuntary_switches() - self._switches0,
                         orchestrator_cpu_s=orchestrator)


def interval_half_width(per_process: Iterable[float]) -> float:
    """Relative half-width of the 95% interval of a run's figure from one value per process
    (throughput.core.intervals.across_processes: 0.05 for +-5%); NaN for fewer than two positive
    values (no interval known). A NaN, zero or negative value (a pass too short for its tool
    to time) is left out."""
    return intervals.across_timed(per_process).relative_half_width


def coefficient_of_variation(values: Iterable[float]) -> float:
    """Sample standard deviation over mean; NaN for fewer than two values (spread
    unknown). A NaN value (a pass too short for its tool to time) is left out."""
    values = [float(v) for v in values if not math.isnan(float(v))]
    if len(values) < 2:
        return math.nan
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean else math.nan


@dataclass(frozen=True)
class RoundDrift:
    """How a group's figures moved between its rounds, split in two (standard deviations of
    the per-round logarithms, so 0.05 is about 5%): `common`, the part all figures of the group
    shared in a round (the machine's speed at that time, which a ratio paired by round cancels),
    and `own`, what each figure moved apart from that (the median over figures)."""

    common: float
    own: float
    figures: int
    rounds: int


def round_drift(per_round: pd.Series, min_figures: int = 3) -> RoundDrift | None:
    """`per_round`: one positive value per figure and round, indexed by the figure's keys and a
    last level "round". None where it cannot be split: fewer than `min_figures` figures measured
    in every one of at least three rounds (with few figures, their own noise passes for common)."""
    logs = np.log(per_round.where(per_round > 0)).unstack("round").dropna()
    if len(logs) < min_figures or logs.shape[1] < 3:
        return None
    centred = logs.sub(logs.mean(axis=1), axis=0)
    common = centred.mean(axis=0)
    own = centred.sub(common, axis=1).std(axis=1, ddof=1)
    return RoundDrift(common=float(common.std(ddof=1)), own=float(own.median()),
                      figures=len(logs), rounds=logs.shape[1])


@dataclass(frozen=True)
class Settings:
    """The `noise` section of the configuration."""

    max_half_width: float = 0.10  # a figure whose 95% interval is wider than +-10% is noisy
    max_remeasures: int = 2
    # Most that one measuring call's re-measures may cost together, in seconds of passes (None: no
    # limit): a group is measured again only where its last rounds' cost fits what is left. Measured
    # here (ci16, default config, a slower and noisier day): re-measures took 244 s of the memory-
    # bandwidth section's 397 s of passes and 289 s of the GPU section's 510 s.
    remeasure_budget_s: float | None = 60.0
    # Within each process (round): this many timed samples, each repeating the work until it
    # lasts min_sample_s (pyperf's floor per value), where the experiment's kernel calibrates.
    # Why 2 by default, 3 at medium and full: the key's description in the noise schema.
    samples_per_process: int = 2
    min_sample_s: float = 0.1
    # No sample planned to cost more than this in all, where a reader's opening dwarfs its reading
    # (uproot opens a NanoAOD-like file in about 1 s and reads its pT in 10 ms): it falls short, and
    # the method section says so. Measured here on the reader comparison's default config (median
    # half-width of its series; the rule's time): one pass per process +-24% (about 9 min), this cap
    # +-19% (12.4 min), 1 s +-15% (14.7 min). A reader's thread waited for a CPU during a median
    # 0.05% of a sample: what is left is how its processes differ, which only more rounds narrow.
    max_sample_s: float = 0.3
    order_seed: int = 0  # the rounds' orders (round_order); part of every run's reuse key
    max_stall_share: float = 0.02  # a pass stalled longer than this share of its wall time is retaken
    # Per pass; none by default: on a 2-core host the pressure counts this study's own threads
    # waiting for each other too (measured with nothing else running: a median 1.8% of each
    # memory-bandwidth pass, 6% of each writing pass, so a 2% rule retook every writing pass).
    max_retakes: int = 0
    # Per sample, where the kernel or Python method samples (bench::Sampler, harness.time_python,
    # the readers): a sample during which its process waited for a CPU longer than this share of
    # its wall time (its own run delay, /proc/self/task/*/schedstat, so not this study's other
    # processes' waiting) is taken again, at most max_sample_retakes times (harness.Retakes).
    max_run_delay_share: float = 0.02
    max_sample_retakes: int = 3

    @classmethod
    def from_config(cls, section: dict[str, Any] | None) -> "Settings":
        section = section or {}
        budget = section.get("remeasure_budget_s", cls.remeasure_budget_s)
        return cls(max_half_width=float(section.get("max_half_width", cls.max_half_width)),
                   max_remeasures=int(section.get("max_remeasures", cls.max_remeasures)),
                   remeasure_budget_s=None if budget is None else float(budget),
                   samples_per_process=int(section.get("samples_per_process", cls.samples_per_process)),
                   min_sample_s=float(section.get("min_sample_s", cls.min_sample_s)),
                   max_sample_s=float(section.get("max_sample_s", cls.max_sample_s)),
                   order_seed=int(section.get("order_seed", cls.order_seed)),
                   max_stall_share=float(section.get("max_stall_share", cls.max_stall_share)),
                   max_retakes=int(section.get("max_retakes", cls.max_retakes)),
                   max_run_delay_share=float(section.get("max_run_delay_share", cls.max_run_delay_share)),
                   max_sample_retakes=int(section.get("max_sample_retakes", cls.max_sample_retakes)))

    @property
    def sample_retakes(self) -> harness.Retakes:
        """The per-sample retake rule that kernels and Python methods are given."""
        return harness.Retakes(self.max_run_delay_share, self.max_sample_retakes)

    def calibration_kernel_args(self) -> dict[str, float]:
        """The options a calibrating kernel (kernels/common/bench.hpp's Calibration) is given:
        how long a sample lasts at least, and how long it may be planned to cost at most."""
        return {"min-sample-s": self.min_sample_s, "max-sample-s": self.max_sample_s}

    @classmethod
    def for_experiment(cls, section: dict[str, Any], noise_section: dict[str, Any] | None) -> "Settings":
        """The noise section, without re-measures for an experiment whose config
        `section` leaves `remeasure_noisy` off (its schema says why); a noisy
        figure is flagged either way."""
        settings = cls.from_config(noise_section)
        return settings if section.get("remeasure_noisy", True) else dataclasses.replace(settings, max_remeasures=0)

    def is_disturbed(self, load: Load) -> bool:
        """Whether some runnable task waited for a CPU during more than max_stall_share of the pass
        (an unknown stall, without pressure information, is not called disturbed)."""
        return not math.isnan(load.stall_share) and load.stall_share > self.max_stall_share

    def is_noisy(self, half_width: float) -> bool:
        """Too uncertain to print as clean: a 95% interval wider than max_half_width either side
        (an unknown interval, from one process, is not flagged; the paper says none is known)."""
        return not math.isnan(half_width) and half_width > self.max_half_width


def round_order(items: Sequence[Any], round_index: int, seed: int) -> list[Any]:
    """`items` in a fresh random order for round `round_index`: a permutation drawn from
    (`seed`, `round_index`), so a run is neither always first nor always right after the same
    neighbour (a rotation would keep each run's successor, and with it whatever one run leaves
    behind: evicted caches, dirty pages, freshly backed pages), and the same seed gives the
    same orders again."""
    permutation = np.random.default_rng([seed, round_index]).permutation(len(items))
    return [items[i] for i in permutation]
