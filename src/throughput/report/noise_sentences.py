"""How a run's noise control reads in the paper: the numbers and states, made from the rows and
provenance that throughput.core.noise and throughput.core.experiment record while measuring
(what delayed the samples and which were taken again, how wide the intervals came out, which
runs stayed noisy, and how quiet the machine was over the whole study). The words are TeX's:
paper/wording/noise.tex words every state once for all sections (\\noisesentence{<Prefix>} reads
a section's <Prefix>Noise... macros, \\studynoise the method section's StudyNoise...)."""
from __future__ import annotations

import json
import math
import numbers
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from ..core.noise import Settings
from . import paper

NAMED_NOISY = 8  # noisy runs a sentence names, the noisiest first
WIDTH_QUANTILE = 0.9  # the method section's upper quantile of the runs' interval widths

# Every state the facts below can hold, by name (the macro <Prefix>Noise<name>State); each is
# worded by \variant{Noise<name>}{<state>}{...} in paper/wording/noise.tex.
STATES: dict[str, tuple[str, ...]] = {
    # a section's runs (describe): the verdict on their intervals, and how each part reads
    "Busy": ("known", "unknown"),  # the operating system gave the load figures, or not (noise.py: NaN)
    "Verdict": ("noisy", "unknown", "within"),  # some stayed noisy; one process each; all within the limit
    "Named": ("all", "some"),  # the noisy runs named: all, or the NAMED_NOISY noisiest
    "TooFew": ("none", "some"),  # runs with too few processes for an interval, beside the known ones
    "Again": ("none", "some"),  # runs measured again with their group
    "Budget": ("unlimited", "limited"),  # re-measures bounded by noise.remeasure_budget_s, or not
    "Beyond": ("none", "some"),  # noisy runs whose group's next re-measure did not fit the budget left
    "Remeasure": ("again", "off", "offsection"),  # what happens to a noisy group (paper_macros' `section`)
    "Retakes": ("nopressure", "off", "retaken"),  # passes judged by the CPU pressure (_retakes)
    "Samples": ("uncalibrated", "calibrated"),  # samples repeated to a minimum length (samples)
    "SampleLength": ("wall", "printed"),  # a sample's length: its wall time, or the reader's printed time
    "Short": ("none", "some"),  # samples shorter than the minimum
    "ShortCause": ("capped", "faster", "both"),  # why: the cost cap, a pass faster than its calibration
    "Uncalibrated": ("none", "some"),  # samples of runs that time one pass, beside the calibrated
    "Delay": ("none", "noretake", "retaken"),  # the process's run delay (_run_delay)
    "DelayWorst": ("named", "unnamed"),  # the run of the largest delay, where the rows name it
    "NonRetaking": ("none", "some"),  # samples of methods that take none again
    "EveryCore": ("none", "some"),  # samples of runs with a thread on every core
    "Together": ("alone", "together"),  # several processes timed as one pass (samples' `together`)
    # the method section (study_summary), over every stored run
    "Load": ("none", "some"),  # runs that recorded the machine's load
    "Recorded": ("all", "some"),  # all stored runs recorded it, or some of them
    "Others": ("named", "unknown"),  # the other processes' cores, with the busiest run's experiment, where known
    # the study's own orchestrator's cores (noise.LoadMonitor: the processes a measurement descends from)
    "Orchestrator": ("quiet", "busy", "unknown"),
    "System": ("known", "unknown"),  # the load average and steal, where the operating system gave them
    "Interleaved": ("none", "some"),  # experiments measured interleaved
    "OneByOne": ("none", "some"),  # experiments measured one method after another
    "Widths": ("none", "some"),  # the interleaved runs' interval widths
    "Printed": ("none", "some"),  # the widths of the intervals the paper prints (printed_widths)
    "Drift": ("none", "some"),  # how the groups moved between rounds
    "Retaken": ("none", "some"),  # passes taken again, per experiment
    "Stayed": ("some", "none", "nointerleaved"),  # runs that stayed noisy, per experiment
    "Fit": ("none", "some"),  # settings lowered to fit this machine (setup.machine_fit)
}

# The lists, each item a call of a command paper/wording/noise.tex defines (the names are data,
# escaped; the numbers are \num's), joined by `separator`.
ListItem = Callable[[Any], str]


def _pm(percent: float) -> str:
    return paper.number(percent, 2)  # an interval's width in percent, as paper.with_interval prints it


LISTS: dict[str, tuple[str, str, ListItem]] = {
    # (label, half-width in percent): a noisy run
    "NoisyList": ("noisyrun", ", ", lambda i: rf"{{{paper.escape(i[0])}}}{{{_pm(i[1])}}}"),
    "InterleavedList": ("name", ", ", lambda i: rf"{{{paper.escape(i)}}}"),
    "OneByOneList": ("name", ", ", lambda i: rf"{{{paper.escape(i)}}}"),
    # (experiment, median half-width in percent, runs)
    "WidthsList": ("widths", "; ", lambda i: rf"{{{paper.escape(i[0])}}}{{{_pm(i[1])}}}{{{int(i[2])}}}"),
    # (experiment, median half-width in percent of its printed intervals, their count)
    "PrintedList": ("printed", "; ", lambda i: rf"{{{paper.escape(i[0])}}}{{{_pm(i[1])}}}{{{int(i[2])}}}"),
    # (experiment, the shared and the own drift in percent)
    "DriftList": ("drift", "; ", lambda i: rf"{{{paper.escape(i[0])}}}{{{_pm(i[1])}}}{{{_pm(i[2])}}}"),
    # (count, experiment)
    "RetakenList": ("count", ", ", lambda i: rf"{{{int(i[0])}}}{{{paper.escape(i[1])}}}"),
    "StayedList": ("count", ", ", lambda i: rf"{{{int(i[0])}}}{{{paper.escape(i[1])}}}"),
    # a setting lowered: (key, requested, used, why)
    "FitList": ("fit", "; ", lambda i: "".join(f"{{{paper.escape(part)}}}" for part in i)),
}


def _some(count: int) -> str:
    return "some" if count else "none"


def _retakes(measured: pd.DataFrame, settings: Settings) -> dict[str, Any]:
    """How many passes were taken again for the CPU pressure during them, from the timed rows."""
    if "cpu_stall_share" not in measured or measured["cpu_stall_share"].isna().all():
        return {"RetakesState": "nopressure"}
    passes = measured.drop_duplicates(["run", "round"])
    return {"RetakesState": "retaken" if settings.max_retakes else "off", "Passes": len(passes),
            "PassRetakes": int(passes["retakes"].sum()), "MaxRetakes": settings.max_retakes,
            "StallLimit": 100 * settings.max_stall_share, "StallMax": 100 * passes["cpu_stall_share"].max(),
            "StallStill": int((passes["cpu_stall_share"] > settings.max_stall_share).sum())}


def describe(frame: pd.DataFrame, settings: Settings, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The numbers and states of a section's noise control, from the rows of
    throughput.core.experiment.measure_interleaved: how loaded the machine was, which runs
    stayed noisy (named by `labels[run]` where given, with their interval's half-width in
    percent; the noisiest NAMED_NOISY of them), and what delayed the passes and samples
    (`_retakes`, `samples`). Keys are the macro names after <Prefix>Noise (paper_macros);
    percentages are in percent; a key absent or None is not said in the state the facts are in."""
    measured = frame[~frame["warmup"]]
    # rows stored before re-measures had a budget lack its column: none was cut short
    measured = measured.assign(beyond_budget=measured.get("beyond_budget", False))
    series = measured.groupby("run")[["half_width", "cv", "noisy", "attempt", "beyond_budget"]].max()
    # the noisiest first; a paper sentence names at most NAMED_NOISY of them
    worst = series[series["noisy"].astype(bool)].sort_values("half_width", ascending=False)
    noisy = [((labels or {}).get(run, run), 100 * width) for run, width in worst["half_width"].items()]
    known = series["half_width"].dropna()
    remeasured = int((series["attempt"] > 0).sum())
    beyond = int((series["noisy"].astype(bool) & series["beyond_budget"].astype(bool)).sum())
    busy = {"OthersMean": measured["others_cores"].mean(), "OthersMax": measured["others_cores"].max(),
            "LoadMax": measured["load_avg_1min"].max(), "StealMax": 100 * measured["steal_fraction"].max()}
    # where the operating system does not say (noise.py records NaN), the sentence says so instead
    known_load = all(math.isfinite(v) for v in busy.values())
    facts: dict[str, Any] = {
        **busy, "BusyState": "known" if known_load else "unknown",
        "Runs": len(series), "MaxRemeasures": settings.max_remeasures,
        "AgainState": _some(remeasured), "RemeasuredRuns": remeasured,
        "BudgetState": "unlimited" if settings.remeasure_budget_s is None else "limited",
        "RemeasureBudget": settings.remeasure_budget_s, "BeyondState": _some(beyond), "BeyondRuns": beyond}
    if noisy:
        facts.update(VerdictState="noisy", NoisyCount=len(noisy), NoisyList=noisy[:NAMED_NOISY],
                     NamedState="some" if len(noisy) > NAMED_NOISY else "all",
                     Unnamed=max(0, len(noisy) - NAMED_NOISY))
    elif known.empty:
        facts["VerdictState"] = "unknown"
    else:
        facts.update(VerdictState="within", Widest=100 * known.max(), Median=100 * known.median(),
                     TooFewState=_some(len(series) - len(known)), TooFew=len(series) - len(known))
    return {**facts, **_retakes(measured, settings), **samples(measured, settings)}


def samples(measured: pd.DataFrame, settings: Settings, together: bool = False) -> dict[str, Any]:
    """How long the timed samples were, where the experiment calibrates them (rows with `loops`:
    kernels/common/bench.hpp's Calibration): SamplesState, the minimum and median length, and the
    samples below the minimum with their cause; and, for every sample that took it, calibrated or
    not (an RDataFrame event loop, a GPU pass), how long the measuring process waited for a CPU
    during it and how many were taken again for it (`_run_delay`). `together`: some passes are
    several processes timed as one, none of which is taken again alone (TogetherState).

    A sample's length is `sample_s` where the rows give one per pass (a reader's: its reading
    time, opening left out, over all its passes), else its `wall_s`."""
    every = measured[measured["record"] == "timing"] if "record" in measured else measured
    calibrated = "loops" in every and settings.min_sample_s
    # a tool that times itself (rootreadspeed) is not calibrated
    timed = every[every["loops"].notna()] if calibrated else every.iloc[:0]
    per_pass = "sample_s" in timed and timed["sample_s"].notna().any()
    facts: dict[str, Any] = {"SamplesState": "uncalibrated", "TogetherState": "together" if together else "alone"}
    if not timed.empty:
        length = timed["sample_s"] if per_pass else timed["wall_s"]
        short = length < settings.min_sample_s
        facts.update(SamplesState="calibrated", SampleLengthState="printed" if per_pass else "wall",
                     MinSample=settings.min_sample_s, MaxLoops=int(timed["loops"].max()),
                     SampleMedian=length.median(), Samples=len(timed), ShortState=_some(short.sum()),
                     Short=int(short.sum()), UncalibratedState=_some(len(every) - len(timed)),
                     # e.g. the GPU passes beside the calibrated CPU ones
                     Uncalibrated=len(every) - len(timed))
        if short.any():
            prep = timed["prep_s"].fillna(0) if "prep_s" in timed else 0.0  # a reader's cache preparation per pass
            # what reaching the minimum would have cost in all, opening and cache preparation included
            cost = ((timed["wall_s"] + prep) * timed["loops"] * settings.min_sample_s
                    / length) if per_pass else length * 0
            capped = short & (settings.max_sample_s > 0) & (cost > settings.max_sample_s)
            faster = short & ~capped
            facts.update(Shortest=length[short].min(), Capped=int(capped.sum()), Faster=int(faster.sum()),
                         MaxSample=settings.max_sample_s,
                         ShortCauseState="both" if capped.any() and faster.any() else
                         "capped" if capped.any() else "faster")
    return {**facts, **_run_delay(every, settings, per_pass)}


def _run_delay(timed: pd.DataFrame, settings: Settings, per_pass: bool) -> dict[str, Any]:
    """How long the measuring processes waited for a CPU during their samples (`run_delay_s`,
    where the kernel or method took it; over the sample's wall time times its threads), and how
    many samples were taken again for it (`sample_retakes`: harness.Retakes; a row without one
    is of a method that takes none again): DelayState and its numbers."""
    if "run_delay_s" not in timed:
        return {"DelayState": "none"}
    known = timed["run_delay_s"] >= 0  # -1 or NaN: no scheduler statistics, or a method that takes none
    if not known.any():
        return {"DelayState": "none"}
    timed, delay = timed[known], timed.loc[known, "run_delay_s"]
    spent = timed["wall_s"]
    if per_pass:
        # a reader's calibrated row gives its means per pass (the delay spans them all, its cache
        # preparation included)
        prep = timed["prep_s"].fillna(0) if "prep_s" in timed else 0.0
        spent = ((timed["wall_s"] + prep) * timed["loops"]).where(timed["loops"].notna(), spent)
    threads = timed["threads"].fillna(1).clip(lower=1) if "threads" in timed else 1
    share = delay / (spent * threads)
    facts: dict[str, Any] = {
        "DelayState": "noretake", "DelayMedian": 100 * share.median(), "DelayMax": 100 * share.max(),
        "DelayWorstState": "named" if "run" in timed else "unnamed",
        "DelayWorst": timed.loc[share.idxmax(), "run"] if "run" in timed else None}
    if "sample_retakes" not in timed or not settings.max_run_delay_share:
        return facts
    retaking = timed["sample_retakes"].notna()  # the Java readers take their run delay, and none again
    retaken, above = timed["sample_retakes"].fillna(0), share > settings.max_run_delay_share
    facts.update(DelayState="retaken", DelayLimit=100 * settings.max_run_delay_share,
                 MaxSampleRetakes=settings.max_sample_retakes, Retaking=int(retaking.sum()),
                 SamplesRetaken=int((retaken > 0).sum()), SampleTakes=int(retaken.sum()),
                 DelayAbove=int(above[retaking].sum()), NonRetakingState=_some((~retaking).sum()),
                 NonRetaking=int((~retaking).sum()), NonRetakingAbove=int((above & ~retaking).sum()))
    timed, retaken, above = timed[retaking], retaken[retaking], above[retaking]
    cores = _usable_cores()
    every = timed["threads"] >= cores if "threads" in timed else pd.Series(False, index=timed.index)
    # what could not be isolated: a run with a thread on every core shares each of them with
    # whatever else the machine runs (the notebook, the kernel's own threads)
    facts.update(EveryCoreState=_some(every.sum()), Cores=cores, EveryCoreSamples=int(every.sum()),
                 EveryCoreRetaken=int((retaken[every] > 0).sum()), EveryCoreAbove=int(above[every].sum()),
                 FreeSamples=int((~every).sum()), FreeRetaken=int((retaken[~every] > 0).sum()),
                 FreeAbove=int(above[~every].sum()))
    return facts


def _usable_cores() -> int:
    """The cores this process may run on (the measuring machine's, where its results are reused)."""
    return len(os.sched_getaffinity(0))


def macros(prefix: str, facts: Mapping[str, Any]) -> dict[str, str]:
    """`facts` as the macros <prefix>Noise<name> that paper/wording/noise.tex reads: a state as it
    is (one of STATES), a list as its items' commands, a count as an integer, another number as
    paper.number, a name escaped; a fact None or NaN (not said in its state) is left out, so
    that a wording reading it stops the build."""
    out = {}
    for name, value in facts.items():
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        if name.endswith("State"):
            if value not in STATES[name[:-len("State")]]:
                raise ValueError(f"{prefix}Noise{name} is {value!r}, not one of {STATES[name[:-len('State')]]} "
                                 f"(throughput.report.noise_sentences.STATES, worded in paper/wording/noise.tex)")
            text = value
        elif name in LISTS:
            item, separator, arguments = LISTS[name]
            text = separator.join(rf"\noise{item}{arguments(i)}" for i in value)
        elif isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
            raise TypeError(f"{prefix}Noise{name}: cannot print {value!r} in the paper")
        elif isinstance(value, numbers.Integral):
            text = str(int(value))
        elif isinstance(value, numbers.Real):
            text = paper.number(float(value))
        else:
            text = paper.escape(value)
        out[f"{prefix}Noise{name}"] = text
    return out


# The macros paper_macros writes, after the experiment's prefix, that the sections use
# (<Prefix>Noise... of `describe` besides: paper/wording/noise.tex reads them).
PAPER_MACROS = ("Noise", "MaxHalfWidth", "Remeasured", "NoisyMark")


def paper_macros(prefix: str, frame: pd.DataFrame, settings: Settings, labels: Mapping[str, str] | None = None,
                 section: str | None = None) -> dict[str, str]:
    """How an experiment's paper section states its noise control, from its rows:
    <prefix>Noise (\\noisesentence{<prefix>}, worded from the facts of `describe`, written as
    <prefix>Noise<name>), <prefix>MaxHalfWidth (percent), <prefix>Remeasured
    (\\noiseremeasured{<prefix>}: what happened to a noisy group; `section` names the config
    section whose `remeasure_noisy` turned re-measures off) and <prefix>NoisyMark (the mark of a
    noisy figure in the tables)."""
    remeasure = "again" if settings.max_remeasures else "offsection" if section else "off"
    facts = {**describe(frame, settings, labels), "RemeasureState": remeasure, "Section": section}
    return {**macros(prefix, facts), prefix + "Noise": rf"\noisesentence{{{prefix}}}",
            prefix + "MaxHalfWidth": paper.number(100 * settings.max_half_width),
            prefix + "Remeasured": rf"\noiseremeasured{{{prefix}}}", prefix + "NoisyMark": paper.NOISY_MARK}


def study_summary(provenances: Mapping[str, Sequence[dict[str, Any]]]) -> dict[str, Any]:
    """The numbers and states of the method section's noise control: how quiet the machine was
    over every stored run of the paper (`provenances`: experiment -> the provenance of each of
    its raw results), how wide and how drifting the interleaved runs' intervals were, and which
    experiment's passes were taken again and runs stayed noisy. Keys as `describe`'s."""
    total = sum(len(runs) for runs in provenances.values())
    loads = pd.DataFrame([{"experiment": experiment.replace("_", " "), **p["load"]}
                          for experiment, runs in provenances.items() for p in runs if "load" in p])
    if loads.empty:
        return {"LoadState": "none", "Total": total}
    busiest = loads.loc[loads["others_cores"].idxmax()] if loads["others_cores"].notna().any() else None
    facts: dict[str, Any] = {
        "LoadState": "some", "Total": total, "Recorded": len(loads),
        "RecordedState": "all" if len(loads) == total else "some",
        "OthersMean": loads["others_cores"].mean(), "OthersMax": loads["others_cores"].max(),
        "OthersState": "unknown" if busiest is None else "named",
        "Busiest": None if busiest is None else busiest.experiment,
        "LoadMax": loads["load_avg_1min"].max(), "StealMax": 100 * loads["steal_fraction"].max()}
    facts.update(_orchestrator(loads))
    # where the operating system gave no load average or steal (noise.py records NaN), it says so
    facts["SystemState"] = "known" if all(math.isfinite(facts[k]) for k in ("LoadMax", "StealMax")) else "unknown"
    # Runs of the generic interleaved loop (throughput.core.experiment) record their noise settings.
    interleaved = sorted(e.replace("_", " ") for e, runs in provenances.items() if any("noise" in p for p in runs))
    one_by_one = sorted(e.replace("_", " ") for e, runs in provenances.items()
                        if runs and not any("noise" in p for p in runs))
    facts.update(InterleavedState=_some(len(interleaved)), InterleavedList=interleaved,
                 OneByOneState=_some(len(one_by_one)), OneByOneList=one_by_one, **_widths(provenances))
    noisy = [(sum(bool(p.get("noise", {}).get("noisy")) for p in runs), experiment.replace("_", " "))
             for experiment, runs in provenances.items()]
    retakes = [(sum(int(p.get("noise", {}).get("retakes", 0)) for p in runs), experiment.replace("_", " "))
               for experiment, runs in provenances.items()]
    facts.update(RetakenState=_some(sum(c for c, _ in retakes)), RetakenList=[r for r in retakes if r[0]],
                 StayedState="some" if any(c for c, _ in noisy) else "none" if interleaved else "nointerleaved",
                 StayedList=[n for n in noisy if n[0]])
    return facts


# The study's own orchestrator is quiet while it measures when it keeps less than this share of a
# core busy over the measured passes, on average (issue 44: Snakemake's scheduler loop kept about a
# quarter). One run's share is a few 10 ms clock ticks over its passes, so the mean judges, not the
# busiest run.
QUIET_ORCHESTRATOR_CORES = 0.01


def _orchestrator(loads: pd.DataFrame) -> dict[str, Any]:
    """How busy the study's own orchestrator (Snakemake, the notebook runner: the processes a
    measurement descends from) kept the cores while the runs measured, from each run's mean over
    its passes; runs stored before it was recorded are left out."""
    shares = loads["orchestrator_cores"].dropna() if "orchestrator_cores" in loads else pd.Series(dtype=float)
    if shares.empty:
        return {"OrchestratorState": "unknown"}
    return {"OrchestratorState": "quiet" if shares.mean() < QUIET_ORCHESTRATOR_CORES else "busy",
            "OrchestratorRuns": len(shares), "OrchestratorMean": 100 * shares.mean(),
            "OrchestratorMax": 100 * shares.max(), "OrchestratorLimit": 100 * QUIET_ORCHESTRATOR_CORES}


def _spread_of(widths: pd.DataFrame, limit: float) -> dict[str, Any]:
    """The distribution of relative half-widths (`widths`: experiment, width): their count, median,
    upper quantile and count wider than `limit`, and per experiment its median and count; the
    keys each caller names as its macros (_WIDTH_NAMES, _PRINTED_NAMES)."""
    return {"Count": len(widths), "Median": 100 * widths["width"].median(),
            "Quantile": int(round(100 * WIDTH_QUANTILE)), "High": 100 * widths["width"].quantile(WIDTH_QUANTILE),
            "Wide": int((widths["width"] > limit).sum()), "Limit": 100 * limit,
            "List": [(experiment, 100 * group["width"].median(), len(group))
                     for experiment, group in widths.groupby("experiment", sort=True)]}


_WIDTH_NAMES = {"Count": "WidthRuns", "Median": "WidthMedian", "Quantile": "WidthQuantile", "High": "WidthHigh",
                "Wide": "Wide", "Limit": "WidthLimit", "List": "WidthsList"}
_PRINTED_NAMES = {"Count": "PrintedCells", "Median": "PrintedMedian", "Quantile": "PrintedQuantile",
                  "High": "PrintedHigh", "Wide": "PrintedWide", "Limit": "PrintedLimit", "List": "PrintedList"}


def _width_limit(provenances: Mapping[str, Sequence[dict[str, Any]]]) -> float:
    """The half-width beyond which the stored runs called a figure noisy (the largest they
    recorded; the default where none did)."""
    return max((p["noise"]["max_half_width"] for runs in provenances.values() for p in runs
                if "max_half_width" in p.get("noise", {})), default=Settings().max_half_width)


def _widths(provenances: Mapping[str, Sequence[dict[str, Any]]]) -> dict[str, Any]:
    """How wide the stored interleaved runs' intervals are: their distribution, per experiment and
    over all (each run's widest series, throughput.core.experiment), and how they drifted (`_drift`)."""
    widths = pd.DataFrame([{"experiment": experiment.replace("_", " "), "width": p["noise"]["half_width"]}
                           for experiment, runs in provenances.items() for p in runs
                           if p.get("noise", {}).get("half_width") is not None])
    if widths.empty:
        return {"WidthsState": "none"}
    spread = _spread_of(widths, _width_limit(provenances))
    return {"WidthsState": "some", **{_WIDTH_NAMES[k]: v for k, v in spread.items()}, **_drift(provenances)}


def _drift(provenances: Mapping[str, Sequence[dict[str, Any]]]) -> dict[str, Any]:
    """How the interleaved groups' figures moved between rounds: the part they shared in a round
    (the machine's speed then) and each figure's own part (noise.round_drift), so a reader sees
    which part of the intervals no longer sample and no pairing within a figure removes."""
    drifts = pd.DataFrame([{"experiment": experiment.replace("_", " "), **p["noise"]["round_drift"]}
                           for experiment, runs in provenances.items() for p in runs
                           if p.get("noise", {}).get("round_drift")])
    if drifts.empty:
        return {"DriftState": "none"}
    drifts = drifts.drop_duplicates()  # every run of a group records the group's
    return {"DriftState": "some", "DriftCommon": 100 * drifts["common"].median(),
            "DriftOwn": 100 * drifts["own"].median(),
            "DriftList": [(experiment, 100 * group["common"].median(), 100 * group["own"].median())
                          for experiment, group in drifts.groupby("experiment", sort=True)]}


def printed_widths(generated: str | os.PathLike) -> dict[str, list[float]]:
    """The relative half-widths of the intervals each experiment's notebook printed (what
    paper.PRINTED_WIDTHS in each folder of `generated` holds, every file's together), by
    experiment; an unreadable ledger counts as none printed."""
    found = {}
    for ledger in sorted(Path(generated).glob(f"*/{paper.PRINTED_WIDTHS}")):
        try:
            files = json.loads(ledger.read_text())["files"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        found[ledger.parent.name] = [float(w) for widths in files.values() for w in widths]
    return found


def _printed(printed: Mapping[str, Sequence[float]], limit: float) -> dict[str, Any]:
    """How wide the printed intervals are (`_spread_of`, over all and per experiment)."""
    widths = pd.DataFrame([{"experiment": experiment.replace("_", " "), "width": w}
                           for experiment, found in printed.items() for w in found])
    if widths.empty:
        return {"PrintedState": "none"}
    return {"PrintedState": "some", **{_PRINTED_NAMES[k]: v for k, v in _spread_of(widths, limit).items()}}


def study_macros(provenances: Mapping[str, Sequence[dict[str, Any]]],
                 printed: Mapping[str, Sequence[float]] | None = None) -> dict[str, str]:
    """The method section's macros (paper/generated/noise.tex), from every stored run and the
    widths of the intervals each experiment printed (`printed_widths`): StudyNoise
    (\\studynoise, worded from `study_summary`'s facts, the printed widths and the settings
    lowered to fit this machine, written as StudyNoise<name>)."""
    # each value lowered to fit this machine, once (every run of an experiment records the same)
    fits = {tuple(str(f[k]) for k in ("key", "requested", "used", "limit")): None
            for runs in provenances.values() for p in runs for f in p.get("fitted_to_machine", [])}
    facts = {**study_summary(provenances), **_printed(printed or {}, _width_limit(provenances)),
             "FitState": _some(len(fits)), "FitList": list(fits)}
    return {**macros("Study", facts), "StudyNoise": r"\studynoise"}
