"""How a run's noise control reads in the paper: the sentences and macros made from the rows
and provenance that throughput.core.noise and throughput.core.experiment record while measuring
(what delayed the samples and which were taken again, how wide the intervals came out, which
runs stayed noisy, and how quiet the machine was over the whole study)."""
from __future__ import annotations

import json
import os
from typing import Any, Mapping, Sequence

import pandas as pd

from ..core.noise import Settings
from ..setup import machine_fit
from . import paper

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
    """One sentence, from the rows of throughput.core.experiment.measure_interleaved,
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
    return f"While measuring, {load}; {verdict}{again}.{retaken}{samples_sentence(measured, settings)}"


def samples_sentence(measured: pd.DataFrame, settings: Settings) -> str:
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
    # Runs of the generic interleaved loop (throughput.core.experiment) record their noise settings.
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
    per experiment and over all (each run's widest series, throughput.core.experiment)."""
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
            f"{wide} wider than ±{limit:.0%}; median per experiment: {'; '.join(parts)}.{_drift_sentence(provenances)}")


def _drift_sentence(provenances: Mapping[str, Sequence[dict[str, Any]]]) -> str:
    """How the interleaved groups' figures moved between rounds (" " first): the part they shared
    in a round (the machine's speed then) and each figure's own part (noise.round_drift), so a
    reader sees which part of the intervals no longer sample and no pairing within a figure removes."""
    drifts = pd.DataFrame([{"experiment": experiment.replace("_", " "), **p["noise"]["round_drift"]}
                           for experiment, runs in provenances.items() for p in runs
                           if p.get("noise", {}).get("round_drift")])
    if drifts.empty:
        return ""
    drifts = drifts.drop_duplicates()  # every run of a group records the group's
    parts = [f"{experiment} ±{group['common'].median():.1%} together, ±{group['own'].median():.1%} apart"
             for experiment, group in drifts.groupby("experiment", sort=True)]
    return (f" Between rounds, the figures of an interleaved group moved together (the machine's speed at the "
            f"time, which a ratio paired by round cancels) by a median ±{drifts['common'].median():.1%} "
            f"(standard deviation over rounds), and each apart from the others by ±{drifts['own'].median():.1%}; "
            f"per experiment: {'; '.join(parts)}.")


def study_macros(provenances: Mapping[str, Sequence[dict[str, Any]]]) -> dict[str, str]:
    """The method section's macro (paper/generated/noise.tex), from every stored run."""
    from ..setup import machine_fit

    # each value lowered to fit this machine, once (every run of an experiment records the same)
    fits = {json.dumps(f, sort_keys=True): f for runs in provenances.values() for p in runs
            for f in p.get("fitted_to_machine", [])}
    return {"StudyNoise": paper.escape(f"{study_summary(provenances)} {machine_fit.describe(list(fits.values()))}")}
