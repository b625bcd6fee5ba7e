"""The generic measuring loop experiments share: interleaving, noise control, reuse.

Methods that a ratio compares are measured as one group, interleaved
repetition by repetition, each round in a fresh random order
(noise.round_order, seeded by the noise section's order_seed), so a
disturbance of the machine lands on all of them rather than on one side of
the ratio, and no run always follows the same neighbour. Each pass
records the load the machine saw and what delayed it (throughput.noise); with
noise.max_retakes above 0 (none by default), a pass during which some task
waited for a CPU too long is taken again (the count is kept with its rows:
`retakes`). When a series of the
group is more spread than the configured coefficient of variation, the whole
group is measured again, up to the configured number of times; a group still
noisy is stored with `noisy` set, and tables and the paper flag it.

Each run is stored in its own raw file (throughput.results: one Parquet file
per run, provenance in its metadata), written once its group is complete. A
group is reused only when every run of it is stored with the same key on
this machine (results.reuse_key), so an interrupted notebook re-measures at
most the group it was in.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd
from tqdm.auto import tqdm

from . import noise, results

# What an experiment gives for one pass of one run in one round (the round
# counts from 0; a process measuring several methods can order them by it):
# its rows (warm-up rows flagged `warmup`, one measured pass) and the run's
# provenance. Rows that are not timings (a reader's rate samples, or the row
# saying why a reader could not read) carry a `record` other than "timing".
MeasurePass = Callable[[dict[str, Any], int], tuple[pd.DataFrame, dict[str, Any]]]


@dataclass
class Group:
    """Runs measured interleaved; each run is a dict with at least a unique "name"."""

    name: str
    runs: list[dict[str, Any]]


def _spread(frame: pd.DataFrame, series: Sequence[str]) -> pd.DataFrame:
    """Coefficient of variation of the measured passes' wall time, per run and series."""
    measured = frame[~frame["warmup"]]
    if "record" in measured:
        measured = measured[measured["record"] == "timing"]
    return (measured.groupby(["run", *series], sort=False)["wall_s"]
            .agg(noise.coefficient_of_variation).rename("cv").reset_index())


def _measure_group(group: Group, measure_pass: MeasurePass, repetitions: int, settings: noise.Settings,
                   series: Sequence[str], bar: tqdm) -> tuple[pd.DataFrame, dict[str, dict[str, Any]], list[float]]:
    """Measure `group` until no series is noisy or the re-measures are spent."""
    earlier = []
    for attempt in range(settings.max_remeasures + 1):
        if attempt:
            bar.total += repetitions * len(group.runs)
            bar.refresh()
        frames, provenance = [], {}
        for repetition in range(repetitions):
            for run in noise.round_order(group.runs, attempt * repetitions + repetition, settings.order_seed):
                for retake in range(settings.max_retakes + 1):
                    if retake:  # the pass before was disturbed (noise.Settings.is_disturbed): taken again
                        bar.total += 1
                        bar.refresh()
                    with noise.LoadMonitor() as monitor:
                        frame, provenance[run["name"]] = measure_pass(run, repetition)
                    bar.update()
                    if not settings.is_disturbed(monitor.load):
                        break
                if int((~frame["warmup"].astype(bool)).sum()) < 1:
                    raise ValueError(f"{group.name} / {run['name']}: a pass gave no measured row")
                frames.append(frame.assign(
                    run=run["name"], round=repetition, attempt=attempt,
                    rep=frame["rep"].where(frame["warmup"], repetition), retakes=retake,
                    **monitor.load.as_columns()))
        frame = pd.concat(frames, ignore_index=True)
        spread = _spread(frame, series)
        worst = float(spread["cv"].max()) if spread["cv"].notna().any() else float("nan")
        if not any(settings.is_noisy(cv) for cv in spread["cv"]):
            break
        earlier.append(worst)
        then = "measuring again" if attempt < settings.max_remeasures else "flagged"
        bar.set_postfix_str(f"{group.name}: CV {worst:.0%} > {settings.max_cv:.0%}, {then}")
    frame = frame.merge(spread, on=["run", *series], how="left")
    frame["noisy"] = [settings.is_noisy(cv) for cv in frame["cv"]]
    return frame, provenance, earlier


def measure_interleaved(groups: Sequence[Group], raw_dir: str | Path, key_of: Callable[[dict[str, Any]], dict[str, Any]],
                        measure_pass: MeasurePass, repetitions: int, settings: noise.Settings,
                        series: Sequence[str] = (), desc: str = "measuring", progress: bool = True) -> pd.DataFrame:
    """Measure (or reuse) every group; return all runs' rows.

    `key_of(run)` gives what a stored run must match to be reused (parameters,
    kernel binary hash, ...); the group's members, the repetitions and the
    noise settings are added here. `series` names the columns that tell
    several series of one run apart (STREAM's four operations), whose spreads
    are judged separately. Rows carry `run`, `round`, `attempt`, the load
    columns of throughput.noise, `cv` and `noisy`.
    """
    raw_dir = Path(raw_dir)
    frames, to_measure = [], []
    for group in groups:
        names = [run["name"] for run in group.runs]
        if len(set(names)) != len(names):
            raise ValueError(f"group {group.name}: run names are not unique: {names}")
        keys = {run["name"]: results.reuse_key({
            **key_of(run), "interleaved_with": names, "repetitions": repetitions,
            "noise": dataclasses.asdict(settings)}) for run in group.runs}
        stored = [results.stored_rows(raw_dir / f"{name}.parquet", keys[name]) for name in names]
        if all(frame is not None for frame in stored):
            frames += stored
        else:
            to_measure.append((group, keys))
    total = sum(repetitions * len(group.runs) for group, _ in to_measure)
    with tqdm(total=total, desc=desc, unit="pass", disable=not progress or not total) as bar:
        for group, keys in to_measure:
            frame, provenance, earlier = _measure_group(group, measure_pass, repetitions, settings, series, bar)
            for run in group.runs:
                rows = frame[frame["run"] == run["name"]].reset_index(drop=True)
                record = {**provenance[run["name"]],
                          "load": {column: float(rows[column].max())
                                   for column in ("load_avg_1min", "others_cores", "steal_fraction",
                                                  "cpu_stall_share")},
                          "noise": {"max_cv": settings.max_cv, "attempts": int(rows["attempt"].max()) + 1,
                                    "retakes": int(rows.drop_duplicates(["round"])["retakes"].sum()),
                                    "earlier_attempts_worst_cv": earlier, "noisy": bool(rows["noisy"].any())}}
                results.write_raw(rows, raw_dir / f"{run['name']}.parquet", record, keys[run["name"]])
                frames.append(rows)
    return pd.concat(frames, ignore_index=True)
