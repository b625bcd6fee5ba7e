"""How quiet the machine was while a run measured, and whether its timings are.

The study runs on shared machines: another process can take a core or the
memory bus for seconds, and the same binary then measures half its rate. Two
things make that visible instead of printing it as a result:

* `LoadMonitor` records, for every run, what the rest of the machine did
  meanwhile: the load average, the CPU time the hypervisor stole, and the CPU
  time used by processes other than this one and its children (from
  /proc/stat and /proc/loadavg: psutil does not give machine-wide steal or
  other processes' time in one reading); and what delayed the pass itself:
  the share of its wall time in which some runnable task waited for a CPU
  (the kernel's pressure stall information, /proc/pressure/cpu "some") and
  the involuntary context switches of this process and its children. With
  `Settings.max_retakes` above 0 (none by default, see there), a pass whose
  stall share exceeds `max_stall_share` is taken again (throughput.experiment). A
  process's own run delay (/proc/<pid>/schedstat) cannot be read here: the
  kernel's process has exited by the time its pass is judged; the kernels and
  Python methods that sample (bench::Sampler, harness.time_python, the readers)
  take it themselves, per sample (`run_delay_s`), take a sample again while it
  exceeds `max_run_delay_share` of the sample (`sample_retakes`, at most
  `max_sample_retakes`: harness.Retakes), and `_samples_sentence` reports both;
* `interval_half_width` and `Settings` decide whether a run's figure is too
  uncertain to be printed as clean: its 95% interval across processes
  (throughput.intervals) wider than `max_half_width` either side (the generic
  loop in throughput.experiment re-measures such a group, then flags it).
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
    """CPU time of this process and of its children that have been waited for."""
    times = psutil.Process().cpu_times()
    return times.user + times.system + times.children_user + times.children_system


@dataclass
class Load:
    """What the machine did during one measurement (NaN where the OS does not say)."""

    wall_s: float
    load_avg_1min: float         # at the end of the measurement
    others_cpu_s: float          # CPU time of every process but this one and its children
    steal_s: float               # CPU time the hypervisor gave to other guests
    cores: int
    stall_s: float = math.nan    # wall time in which some runnable task waited for a CPU
    involuntary_switches: int = 0  # of this process and its children

    @property
    def stall_share(self) -> float:
        """Share of the wall time in which some runnable task waited for a CPU (NaN: unknown)."""
        return self.stall_s / self.wall_s if self.wall_s > 0 else math.nan

    @property
    def others_cores(self) -> float:
        """Cores kept busy by other work, on average over the measurement."""
        return self.others_cpu_s / self.wall_s if self.wall_s > 0 else math.nan

    @property
    def steal_fraction(self) -> float:
        """Share of the machine's CPU time stolen by the hypervisor."""
        return self.steal_s / (self.wall_s * self.cores) if self.wall_s > 0 else math.nan

    def as_columns(self) -> dict[str, float]:
        """The load as columns stored beside a run's timings."""
        return {"load_avg_1min": self.load_avg_1min, "others_cores": self.others_cores,
                "steal_fraction": self.steal_fraction, "cpu_stall_share": self.stall_share,
                "involuntary_switches": self.involuntary_switches}


class LoadMonitor:
    """Context manager: `with LoadMonitor() as monitor: ...`, then `monitor.load`."""

    def __enter__(self) -> "LoadMonitor":
        self._wall0 = time.monotonic()
        self._machine0 = _cpu_seconds()
        self._own0 = _own_cpu_seconds()
        self._stall0, self._switches0 = _cpu_stall_seconds(), _involuntary_switches()
        self.load: Load | None = None
        return self

    def __exit__(self, *exc: Any) -> None:
        wall = time.monotonic() - self._wall0
        machine1, own1 = _cpu_seconds(), _own_cpu_seconds()
        if self._machine0 is None or machine1 is None:
            others = steal = math.nan
        else:
            delta = {k: machine1[k] - self._machine0[k] for k in _STAT_FIELDS}
            busy = sum(v for k, v in delta.items() if k not in _IDLE)
            steal = delta["steal"]
            # Steal is time this VM did not run at all, not work of its processes.
            others = max(0.0, busy - steal - (own1 - self._own0))
        load_avg = _load_average()
        stall1 = _cpu_stall_seconds()
        stall = math.nan if self._stall0 is None or stall1 is None else stall1 - self._stall0
        self.load = Load(wall_s=wall, load_avg_1min=math.nan if load_avg is None else load_avg,
                         others_cpu_s=others, steal_s=steal, cores=os.cpu_count() or 1, stall_s=stall,
                         involuntary_switches=_involuntary_switches() - self._switches0)


def interval_half_width(per_process: Iterable[float]) -> float:
    """Relative half-width of the 95% interval of a run's figure from one value per process
    (throughput.intervals.across_processes: 0.05 for +-5%); NaN for fewer than two positive
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
class Settings:
    """The `noise` section of the configuration."""

    max_half_width: float = 0.10  # a figure whose 95% interval is wider than +-10% is noisy
    max_remeasures: int = 2
    # Within each process (round): this many timed samples, each repeating the work until it
    # lasts min_sample_s (pyperf's floor per value), where the experiment's kernel calibrates.
    samples_per_process: int = 3
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
        return cls(max_half_width=float(section.get("max_half_width", cls.max_half_width)),
                   max_remeasures=int(section.get("max_remeasures", cls.max_remeasures)),
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


NAMED_NOISY = 8  # noisy runs a sentence names, the noisiest first


def _retakes_sentence(measured: pd.DataFrame, settings: Settings) -> str:
    """How many passes were taken again by their cause (" " first), from the timed rows."""
    if "cpu_stall_share" not in measured or measured["cpu_stall_share"].isna().all():
        return (" The kernel gave no CPU pressure information here, so no pass could be judged by what delayed "
                "it.")
    passes = measured.drop_duplicates(["run", "round"])
    retakes = int(passes["retakes"].sum())
    still = int((passes["cpu_stall_share"] > settings.max_stall_share).sum())
    if not settings.max_retakes:
        return (f" Some runnable task waited for a CPU during more than {settings.max_stall_share:.0%} of {still} of "
                f"the {len(passes)} passes (at most {passes['cpu_stall_share'].max():.1%} of one), this study's own "
                f"threads included; none was taken again (noise.max_retakes is 0).")
    return (f" {retakes} of {len(passes)} passes were taken again because some runnable task waited for a CPU "
            f"during more than {settings.max_stall_share:.0%} of them (at most {settings.max_retakes} times "
            f"each); {still} stayed above it, and the largest share was {passes['cpu_stall_share'].max():.1%}.")


def describe(frame: pd.DataFrame, settings: Settings, labels: Mapping[str, str] | None = None) -> str:
    """One sentence, from the rows of throughput.experiment.measure_interleaved,
    on how quiet the machine was and which runs stayed noisy (named by
    `labels[run]` where given, with their interval's half-width; the
    noisiest NAMED_NOISY of them)."""
    measured = frame[~frame["warmup"]]
    series = measured.groupby("run")[["half_width", "cv", "noisy", "attempt"]].max()
    # the noisiest first; a paper sentence names at most NAMED_NOISY of them
    worst = series[series["noisy"].astype(bool)].sort_values("half_width", ascending=False)
    noisy = [f"{(labels or {}).get(run, run)} (±{width:.0%})" for run, width in worst["half_width"].items()]
    remeasured = int((series["attempt"] > 0).sum())
    load = (f"other processes kept {measured['others_cores'].mean():.2f} cores busy on average "
            f"(at most {measured['others_cores'].max():.2f}), the 1-minute load average reached "
            f"{measured['load_avg_1min'].max():.2f}, and at most {measured['steal_fraction'].max():.1%} "
            f"of the CPU time was stolen by the hypervisor")
    retaken = _retakes_sentence(measured, settings)
    known = series["half_width"].dropna()
    if noisy:
        named = ", ".join(noisy[:NAMED_NOISY]) + (f" and {len(noisy) - NAMED_NOISY} more (their tables mark "
                                                  f"each)" if len(noisy) > NAMED_NOISY else "")
        verdict = (f"{len(noisy)} of {len(series)} runs kept a 95% interval wider than ±{settings.max_half_width:.0%} "
                   f"after {settings.max_remeasures} re-measures of their group and are flagged: {named}")
    elif known.empty:
        verdict = "with one process per run, no interval is known, so no figure could be judged noisy"
    else:
        unknown = len(series) - len(known)
        few = f"; {unknown} runs had too few processes for an interval" if unknown else ""
        verdict = (f"every run's 95% interval is within ±{settings.max_half_width:.0%} "
                   f"(the widest ±{known.max():.1%}, the median ±{known.median():.1%}{few})")
    again = (f" ({remeasured} of the {len(series)} runs were measured again with their group)"
             if remeasured else "")
    return f"While measuring, {load}; {verdict}{again}.{retaken}{_samples_sentence(measured, settings)}"


def _samples_sentence(measured: pd.DataFrame, settings: Settings) -> str:
    """How long the timed samples were (" " first), where the experiment calibrates them (rows
    with `loops`: kernels/common/bench.hpp's Calibration); a sample below the minimum is said,
    with its cause; and, for every sample that took it, calibrated or not (an RDataFrame event
    loop, a GPU pass), how long the measuring process waited for a CPU during it and how many
    were taken again for it (`_run_delay_sentence`).

    A sample's length is `sample_s` where the rows give one per pass (a reader's: its reading
    time, opening left out, over all its passes), else its `wall_s`."""
    every = measured[measured["record"] == "timing"] if "record" in measured else measured
    calibrated = "loops" in every and settings.min_sample_s
    # a tool that times itself (rootreadspeed) is not calibrated
    timed = every[every["loops"].notna()] if calibrated else every.iloc[:0]
    per_pass = "sample_s" in timed and timed["sample_s"].notna().any()
    if timed.empty:
        return _run_delay_sentence(every, settings, per_pass)
    length = timed["sample_s"] if per_pass else timed["wall_s"]
    printed = "its printed time (the reading, opening left out)" if per_pass else "it"
    sentence = (f" Each timed sample repeated its pass until {printed} lasted at least {settings.min_sample_s:g} s "
                f"(up to {int(timed['loops'].max())} passes in one; the median sample {length.median():.3g} s)")
    short = length < settings.min_sample_s
    prep = timed["prep_s"].fillna(0) if "prep_s" in timed else 0.0  # a reader's cache preparation per pass
    if short.any():
        # what reaching the minimum would have cost in all, opening and cache preparation included
        cost = ((timed["wall_s"] + prep) * timed["loops"] * settings.min_sample_s
                / length) if per_pass else length * 0
        capped = short & (settings.max_sample_s > 0) & (cost > settings.max_sample_s)
        causes = [f"{int(capped.sum())} because reaching it would have cost more than "
                  f"{settings.max_sample_s:g} s in all (noise.max_sample_s)"] if capped.any() else []
        if (short & ~capped).any():
            causes.append(f"{int((short & ~capped).sum())} because the pass ran faster after the warm-up "
                          f"that calibrated it")
        sentence += (f"; {int(short.sum())} of the {len(timed)} samples fell short of it (the shortest "
                     f"{length[short].min():.3g} s): {' and '.join(causes)}")
    if len(every) > len(timed):  # e.g. the GPU passes beside the calibrated CPU ones
        sentence += f"; the {len(every) - len(timed)} samples of runs that are not calibrated time one pass each"
    return sentence + "." + _run_delay_sentence(every, settings, per_pass)


def _run_delay_sentence(timed: pd.DataFrame, settings: Settings, per_pass: bool) -> str:
    """How long the measuring processes waited for a CPU during their samples (`run_delay_s`,
    where the kernel or method took it; over the sample's wall time times its threads), and how
    many samples were taken again for it (`sample_retakes`: harness.Retakes; a row without one
    is of a method that takes none again), " " first."""
    if "run_delay_s" not in timed:
        return ""
    known = timed["run_delay_s"] >= 0  # -1 or NaN: no scheduler statistics, or a method that takes none
    if not known.any():
        return ""
    timed, delay = timed[known], timed.loc[known, "run_delay_s"]
    spent = timed["wall_s"]
    if per_pass:
        # a reader's calibrated row gives its means per pass (the delay spans them all, its cache
        # preparation included)
        prep = timed["prep_s"].fillna(0) if "prep_s" in timed else 0.0
        spent = ((timed["wall_s"] + prep) * timed["loops"]).where(timed["loops"].notna(), spent)
    threads = timed["threads"].fillna(1).clip(lower=1) if "threads" in timed else 1
    share = delay / (spent * threads)
    worst = f", in {timed.loc[share.idxmax(), 'run']}" if "run" in timed else ""
    sentence = (f" The measuring process waited for a CPU during a median {share.median():.2%} of a sample "
                f"(at most {share.max():.1%}{worst}; /proc/self/task/*/schedstat)")
    if "sample_retakes" not in timed or not settings.max_run_delay_share:
        return sentence + "; no sample was taken again for it."
    retaking = timed["sample_retakes"].notna()  # the Java readers take their run delay, and none again
    retaken, above = timed["sample_retakes"].fillna(0), share > settings.max_run_delay_share
    sentence += (f"; {int((retaken > 0).sum())} of the {int(retaking.sum())} samples of the methods that retake "
                 f"were taken again because it waited during more than {settings.max_run_delay_share:.0%} of them "
                 f"({int(retaken.sum())} takes in all, at most {settings.max_sample_retakes} each), and "
                 f"{int(above[retaking].sum())} stayed above it")
    others = above & ~retaking
    sentence += (f"; {int(others.sum())} of the {int((~retaking).sum())} samples of methods that take none again "
                 f"were above it." if (~retaking).any() else ".")
    timed, retaken, above = timed[retaking], retaken[retaking], above[retaking]
    cores = _usable_cores()
    every = timed["threads"] >= cores if "threads" in timed else pd.Series(False, index=timed.index)
    if every.any():
        # what could not be isolated: a run with a thread on every core shares each of them with
        # whatever else the machine runs (the notebook, the kernel's own threads)
        sentence += (f" Runs with a thread on each of the {cores} cores cannot be isolated from the rest of the "
                     f"machine: {int((retaken[every] > 0).sum())} of their {int(every.sum())} samples were taken "
                     f"again and {int(above[every].sum())} stayed above the share, against "
                     f"{int((retaken[~every] > 0).sum())} and {int(above[~every].sum())} of the "
                     f"{int((~every).sum())} samples of runs that left a core free.")
    return sentence


def _usable_cores() -> int:
    """The cores this process may run on (the measuring machine's, where its results are reused)."""
    return len(os.sched_getaffinity(0))


# The macros paper_macros writes, after the experiment's prefix.
PAPER_MACROS = ("Noise", "MaxHalfWidth", "Remeasured", "NoisyMark")


def paper_macros(prefix: str, frame: pd.DataFrame, settings: Settings, labels: Mapping[str, str] | None = None,
                 section: str | None = None) -> dict[str, str]:
    """How an experiment's paper section states its noise control, from its rows:
    <prefix>Noise (the sentence of `describe`), <prefix>MaxHalfWidth (percent),
    <prefix>Remeasured (what happened to a noisy group; `section` names the
    config section whose `remeasure_noisy` turned re-measures off) and
    <prefix>NoisyMark (the mark of a noisy figure in the tables)."""
    from . import paper  # here: paper's table helpers are not needed while measuring

    if settings.max_remeasures:
        again = f"measured for as many rounds again, its earlier rounds kept, up to {settings.max_remeasures} times"
    else:
        again = "not measured again" + (rf" (\texttt{{{paper.escape(section)}.remeasure\_noisy}} is off)"
                                        if section else "")
    values = (paper.escape(describe(frame, settings, labels)), paper.number(100 * settings.max_half_width), again,
              paper.NOISY_MARK)
    return {prefix + name: value for name, value in zip(PAPER_MACROS, values)}


def study_summary(provenances: Mapping[str, Sequence[dict[str, Any]]]) -> str:
    """One sentence for the method section: how quiet the machine was over every
    stored run of the paper (`provenances`: experiment -> the provenance of each
    of its raw results), and which experiment's runs stayed noisy."""
    total = sum(len(runs) for runs in provenances.values())
    loads = pd.DataFrame([{"experiment": experiment.replace("_", " "), **p["load"]}
                          for experiment, runs in provenances.items() for p in runs if "load" in p])
    if loads.empty:
        return f"None of the {total} stored runs recorded the load of the machine."
    busiest = loads.loc[loads["others_cores"].idxmax()] if loads["others_cores"].notna().any() else None
    sentence = (f"Across the {len(loads)} stored runs that recorded it"
                f"{'' if len(loads) == total else f' (of {total})'}, other processes kept "
                f"{loads['others_cores'].mean():.2f} cores busy on average while a run measured, at most "
                f"{loads['others_cores'].max():.2f}{f' (in {busiest.experiment})' if busiest is not None else ''}; "
                f"the one-minute load average reached {loads['load_avg_1min'].max():.2f}, and the hypervisor "
                f"stole at most {loads['steal_fraction'].max():.1%} of the CPU time.")
    # Runs of the generic interleaved loop (throughput.experiment) record their noise settings.
    interleaved = sorted(e.replace("_", " ") for e, runs in provenances.items() if any("noise" in p for p in runs))
    one_by_one = sorted(e.replace("_", " ") for e, runs in provenances.items()
                        if runs and not any("noise" in p for p in runs))
    if interleaved:
        sentence += f" Measured interleaved: {', '.join(interleaved)}."
    if one_by_one:
        sentence += (f" Still measured one method after another, so that a disturbance can fall on one side of "
                     f"their ratios: {', '.join(one_by_one)}.")
    sentence += _widths_sentence(provenances)
    noisy = {experiment.replace("_", " "): sum(bool(p.get("noise", {}).get("noisy")) for p in runs)
             for experiment, runs in provenances.items()}
    retakes = {experiment.replace("_", " "): sum(int(p.get("noise", {}).get("retakes", 0)) for p in runs)
               for experiment, runs in provenances.items()}
    if any(retakes.values()):
        parts = [f"{count} in {experiment}" for experiment, count in retakes.items() if count]
        sentence += f" Passes taken again because some task waited for a CPU during them: {', '.join(parts)}."
    if any(noisy.values()):
        parts = [f"{count} in {experiment}" for experiment, count in noisy.items() if count]
        sentence += f" Runs that stayed noisy after their re-measures, flagged in their tables: {', '.join(parts)}."
    elif any("noise" in p for runs in provenances.values() for p in runs):
        sentence += " No interleaved run stayed noisy."
    return sentence


def _widths_sentence(provenances: Mapping[str, Sequence[dict[str, Any]]]) -> str:
    """How wide the stored interleaved runs' 95% intervals are (" " first): their distribution,
    per experiment and over all (each run's widest series, throughput.experiment)."""
    widths = pd.DataFrame([{"experiment": experiment.replace("_", " "), "width": p["noise"]["half_width"]}
                           for experiment, runs in provenances.items() for p in runs
                           if p.get("noise", {}).get("half_width") is not None])
    if widths.empty:
        return ""
    limit = max(p["noise"].get("max_half_width", 0.0) for runs in provenances.values() for p in runs if "noise" in p)
    parts = [f"{experiment} ±{group['width'].median():.1%} (of {len(group)})"
             for experiment, group in widths.groupby("experiment", sort=True)]
    wide = int((widths["width"] > limit).sum())
    return (f" The half-widths of the {len(widths)} interleaved runs' 95% intervals (each run's widest figure): "
            f"median ±{widths['width'].median():.1%}, 90th percentile ±{widths['width'].quantile(0.9):.1%}, "
            f"{wide} wider than ±{limit:.0%}; median per experiment: {'; '.join(parts)}.")


def study_macros(provenances: Mapping[str, Sequence[dict[str, Any]]]) -> dict[str, str]:
    """The method section's macro (paper/generated/noise.tex), from every stored run."""
    from . import machine_fit, paper  # here: paper's table helpers are not needed while measuring

    # each value lowered to fit this machine, once (every run of an experiment records the same)
    fits = {json.dumps(f, sort_keys=True): f for runs in provenances.values() for p in runs
            for f in p.get("fitted_to_machine", [])}
    return {"StudyNoise": paper.escape(f"{study_summary(provenances)} {machine_fit.describe(list(fits.values()))}")}
