"""The generic measuring loop experiments share: interleaving, noise control, reuse.

Methods that a ratio compares are measured as one group, interleaved
repetition by repetition, each round in a fresh random order
(noise.round_order, seeded by the noise section's order_seed), so a
disturbance of the machine lands on all of them rather than on one side of
the ratio, and no run always follows the same neighbour. Each pass
records the load the machine saw and what delayed it (throughput.core.noise); with
noise.max_retakes above 0 (none by default), a pass during which some task
waited for a CPU too long is taken again (the count is kept with its rows:
`retakes`). When the 95% interval of a series of the group (across its
rounds, each round a fresh process: throughput.core.intervals) is wider than the
configured half-width, the whole group is measured for as many rounds again,
up to the configured number of times, its earlier rounds kept; a group still
noisy is stored with `noisy` set, and tables and the paper flag it.

Each run is stored in its own raw file (throughput.core.results: one Parquet file
per run, provenance in its metadata), written once its group is complete. A
group is reused only when every run of it is stored with the same key on
this machine (results.reuse_key), so an interrupted notebook re-measures at
most the group it was in.
"""
from __future__ import annotations

import dataclasses
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd
from tqdm.auto import tqdm

from . import intervals, noise, results

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


# A claim's judgement on a group's rows at a confidence level: whether more rounds can change it
# (False while its interval holds the rule's bound), and the rounds that would decide it at the
# spread observed (None: no number of rounds would).
Judge = Callable[[pd.DataFrame, float], tuple[bool, int | None]]


@dataclass(frozen=True)
class Deciding:
    """A claim of the ledger (throughput.report.ledger) that runs of one group decide, and so may be
    given rounds beyond the base ones (measure_interleaved's `looks`): `runs` are the runs an
    extra round measures, narrowed to the claim's cells (its branch, its methods); descriptive
    cells keep the base rounds."""

    claim: str
    group: str
    runs: tuple[dict[str, Any], ...]
    judge: Judge

    @property
    def run_names(self) -> list[str]:
        return [run["name"] for run in self.runs]


# the config keys of a section's stopping rule (Looks.of)
LOOKS_KEYS = ("max_looks", "decide_budget_s")


@dataclass(frozen=True)
class Looks:
    """The stopping rule for the claims' extra rounds, fixed before anything is measured: a claim's
    data are judged at most `max_looks` times (the base rounds are the first look), every time
    at the Bonferroni level over those looks (`confidence`), so that looking again until decided
    keeps the chance of a wrong verdict within the study's 5%; the extra rounds of one call of
    measure_interleaved together spend at most `budget_s` seconds of measuring."""

    max_looks: int = 1
    budget_s: float = 0.0

    def __post_init__(self) -> None:
        if self.max_looks < 1 or not self.budget_s >= 0:
            raise ValueError(f"looks: max_looks {self.max_looks!r} must be at least 1 and budget_s "
                             f"{self.budget_s!r} at least 0")

    @property
    def confidence(self) -> float:
        return intervals.bonferroni(self.max_looks)

    @classmethod
    def of(cls, section: Mapping[str, Any]) -> Looks:
        """The rule a config section sets (max_looks, decide_budget_s; parameters without them, from
        before they existed: one look, no extra rounds)."""
        return cls(int(section.get("max_looks", 1)), float(section.get("decide_budget_s", 0)))


# The quantity a run's tables print, from its timed rows: the time of one pass unless the
# experiment says otherwise (the reader comparison prints reading time, opening left out).
Quantity = Callable[[pd.DataFrame], pd.Series]


def time_per_pass(frame: pd.DataFrame) -> pd.Series:
    """Each sample's wall time over the passes it repeated (`loops`, where a kernel calibrates
    its samples to a minimum length: kernels/common/bench.hpp's Sampler; a row without loops,
    from a method or an older run that does not calibrate, is one pass)."""
    return frame["wall_s"] / frame["loops"].fillna(1) if "loops" in frame else frame["wall_s"]


def _spread(frame: pd.DataFrame, series: Sequence[str], quantity: Quantity,
            per_round: str) -> tuple[pd.DataFrame, pd.Series]:
    """Per run and series, over its timed passes of the printed `quantity`: the relative
    half-width of the 95% interval across rounds (`half_width`, each round's `per_round` pass,
    median or min, one value: throughput.core.noise.interval_half_width), which decides `noisy`,
    and the coefficient of variation (`cv`), which describes; and those per-round values, from
    which the group's drift between rounds is split (noise.round_drift)."""
    measured = frame[~frame["warmup"].astype(bool)]
    if "record" in measured:
        measured = measured[measured["record"] == "timing"]
    # a group of which no run timed a pass (every reader failed on a damaged file) has no spread
    measured = measured.assign(quantity=quantity(measured) if len(measured) else pd.Series(dtype=float))
    keys = ["run", *series]
    by_round = measured.groupby([*keys, "round"], sort=False)["quantity"].agg(per_round)
    half_width = by_round.groupby(level=keys, sort=False).agg(noise.interval_half_width).rename("half_width")
    cv = measured.groupby(keys, sort=False)["quantity"].agg(noise.coefficient_of_variation).rename("cv")
    return pd.concat([half_width, cv], axis=1).reset_index(), by_round


def by_round(measured: pd.DataFrame, keys: list[str], table: pd.DataFrame, column: str = "wall_s",
             reduce: str = "median") -> list[dict[int, float]]:
    """For each row of `table` (one per `keys`), `column` of its timed rows in each round, one
    value per round (`reduce`: "median", "min", "max"): {round: value}, what paired ratios pair
    (throughput.core.intervals.paired_by_round) and figures take across processes."""
    per_round = measured.groupby([*keys, "round"], sort=False)[column].agg(reduce)
    found = {key: group.droplevel(keys).to_dict() for key, group in per_round.groupby(level=keys, sort=False)}
    return [found[key] for key in table[keys].itertuples(index=False, name=None)]


# Columns the measuring loop adds to every row of a pass, which no kernel's rows may carry.
LOOP_COLUMNS = ("pass_cost_s", "look", "extended_for")


def _take_pass(group: Group, run: dict[str, Any], round_index: int, measure_pass: MeasurePass,
               settings: noise.Settings, bar: tqdm) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One pass of `run` in round `round_index`, taken again while disturbed (up to
    noise.max_retakes), its rows marked with the run, round, retakes, the load it saw and its
    wall time (`pass_cost_s`, the whole pass with its process start: what another round of it
    costs, for the claims' budget below)."""
    for retake in range(settings.max_retakes + 1):
        if retake:  # the pass before was disturbed (noise.Settings.is_disturbed): taken again
            bar.total += 1
            bar.refresh()
        started = time.perf_counter()
        with noise.LoadMonitor() as monitor:
            frame, provenance = measure_pass(run, round_index)
        pass_cost_s = time.perf_counter() - started
        bar.update()
        if not settings.is_disturbed(monitor.load):
            break
    if int((~frame["warmup"].astype(bool)).sum()) < 1:
        raise ValueError(f"{group.name} / {run['name']}: a pass gave no measured row")
    clashing = sorted(set(frame.columns) & set(LOOP_COLUMNS))
    if clashing:  # the loop's own columns would overwrite the kernel's silently
        raise ValueError(f"{group.name} / {run['name']}: the pass's rows have columns the measuring loop "
                         f"sets itself: {clashing}")
    return frame.assign(run=run["name"], round=round_index, rep=frame["rep"].where(frame["warmup"], round_index),
                        retakes=retake, pass_cost_s=pass_cost_s, look=0, extended_for="",
                        **monitor.load.as_columns()), provenance


@dataclass
class RemeasureBudget:
    """What is left of one measuring call's re-measure budget (noise.Settings.remeasure_budget_s)."""

    left_s: float

    @classmethod
    def of(cls, settings: noise.Settings) -> "RemeasureBudget":
        return cls(math.inf if settings.remeasure_budget_s is None else settings.remeasure_budget_s)


def _attempt_cost(frame: pd.DataFrame, attempt: int) -> float:
    """The wall time of attempt `attempt`'s passes (retakes included): what measuring the group
    again costs at the speed just seen."""
    passes = frame[frame["attempt"] == attempt].drop_duplicates(["run", "round", "retakes"])
    return float(passes["pass_cost_s"].sum())


def _measure_group(group: Group, measure_pass: MeasurePass, repetitions: int, settings: noise.Settings,
                   series: Sequence[str], quantity: Quantity, per_round: str, bar: tqdm,
                   budget: RemeasureBudget) -> tuple[pd.DataFrame, dict[str, dict[str, Any]], list[float],
                                                     dict[str, float] | None]:
    """Measure `group` until no series is noisy, or the re-measures are spent, or the next one
    would cost more than `budget` has left (its rows' column `beyond_budget`). A re-measure adds
    `repetitions` rounds to those already taken (the interval narrows with more processes, and
    whatever was spread between processes stays in the figure), rather than starting afresh."""
    earlier, frames, provenance = [], [], {}
    beyond_budget = False
    for attempt in range(settings.max_remeasures + 1):
        if attempt:
            cost = _attempt_cost(frame, attempt - 1)
            if cost > budget.left_s:
                beyond_budget = True
                bar.set_postfix_str(f"{group.name}: noisy; measuring again (~{cost:.0f} s) is beyond the "
                                    f"re-measure budget left ({budget.left_s:.0f} s), flagged")
                break
            bar.total += repetitions * len(group.runs)
            bar.refresh()
        for repetition in range(repetitions):
            round_index = attempt * repetitions + repetition
            for run in noise.round_order(group.runs, round_index, settings.order_seed):
                frame, provenance[run["name"]] = _take_pass(group, run, round_index, measure_pass, settings, bar)
                frames.append(frame.assign(attempt=attempt))
        frame = pd.concat(frames, ignore_index=True)
        if attempt:
            budget.left_s -= _attempt_cost(frame, attempt)
        spread, per_round_values = _spread(frame, series, quantity, per_round)
        widest = float(spread["half_width"].max()) if spread["half_width"].notna().any() else float("nan")
        if not any(settings.is_noisy(width) for width in spread["half_width"]):
            break
        earlier.append(widest)
        then = "measuring again" if attempt < settings.max_remeasures else "flagged"
        bar.set_postfix_str(f"{group.name}: interval ±{widest:.0%} > ±{settings.max_half_width:.0%}, {then}")
    # how the group's figures moved between its rounds, common and own, for the method section
    drift = noise.round_drift(per_round_values)
    drift = None if drift is None else dataclasses.asdict(drift)
    # in the columns' order that the extra rounds' rows are stored in (_decide_more), before the spread's
    frame = frame.assign(beyond_budget=beyond_budget).merge(spread, on=["run", *series], how="left")
    frame["noisy"] = [settings.is_noisy(width) for width in frame["half_width"]]
    return frame, provenance, earlier, drift


def measure_interleaved(groups: Sequence[Group], raw_dir: str | Path, key_of: Callable[[dict[str, Any]], dict[str, Any]],
                        measure_pass: MeasurePass, repetitions: int, settings: noise.Settings,
                        series: Sequence[str] = (), desc: str = "measuring", progress: bool = True,
                        quantity: Quantity = time_per_pass, per_round: str = "median",
                        deciding: Sequence[Deciding] = (), looks: Looks = Looks()) -> pd.DataFrame:
    """Measure (or reuse) every group; return all runs' rows.

    `key_of(run)` gives what a stored run must match to be reused (parameters,
    kernel binary hash, ...); the group's members, the repetitions and the
    noise settings are added here. `series` names the columns that tell
    several series of one run apart (STREAM's four operations), whose spreads
    are judged separately, each by the printed `quantity` (the time per pass
    unless given), each round's median sample one value (`per_round` "min": its
    best, for a bandwidth). Rows carry `run`, `round`, `attempt`, the load columns of
    throughput.core.noise, `half_width`, `cv` and `noisy`, `pass_cost_s` (the pass's wall time),
    `look` and `extended_for` (0 and "" in the base rounds).

    Then the claims of `deciding` that more rounds could decide get them (_decide_more), by the
    stopping rule `looks`; a group with such claims has `looks.max_looks` in its runs' keys.
    """
    raw_dir = Path(raw_dir)
    frames, to_measure, group_keys = [], [], {}
    with_claims = {d.group for d in deciding}
    unknown = sorted(with_claims - {group.name for group in groups})
    if unknown:
        raise ValueError(f"claims to decide name groups that are not measured: {unknown}")
    for group in groups:
        names = [run["name"] for run in group.runs]
        if len(set(names)) != len(names):
            raise ValueError(f"group {group.name}: run names are not unique: {names}")
        # a group whose claims may get more looks keeps them only under the same stopping rule
        rule = {"max_looks": looks.max_looks} if group.name in with_claims else {}
        keys = group_keys[group.name] = {run["name"]: results.reuse_key({
            **key_of(run), "interleaved_with": names, "repetitions": repetitions,
            "noise": dataclasses.asdict(settings), **rule}) for run in group.runs}
        stored = [results.stored_rows(raw_dir / f"{name}.parquet", keys[name]) for name in names]
        if all(frame is not None for frame in stored):
            frames += stored
        else:
            to_measure.append((group, keys))
    total = sum(repetitions * len(group.runs) for group, _ in to_measure)
    budget = RemeasureBudget.of(settings)
    with tqdm(total=total, desc=desc, unit="pass", disable=not progress or not total) as bar:
        for group, keys in to_measure:
            frame, provenance, earlier, drift = _measure_group(group, measure_pass, repetitions, settings, series,
                                                                quantity, per_round, bar, budget)
            for run in group.runs:
                rows = frame[frame["run"] == run["name"]].reset_index(drop=True)
                passes = rows.drop_duplicates(["round", "retakes"])
                record = {**provenance[run["name"]],
                          "load": {**{column: float(rows[column].max())
                                      for column in ("load_avg_1min", "others_cores", "steal_fraction",
                                                     "cpu_stall_share")},
                                   # a mean over the passes: one pass's share is a few 10 ms ticks at most
                                   "orchestrator_cores": float(passes["orchestrator_cores"].mean())},
                          "noise": {"max_half_width": settings.max_half_width,
                                    "attempts": int(rows["attempt"].max()) + 1,
                                    "retakes": int(rows.drop_duplicates(["round"])["retakes"].sum()),
                                    # samples taken again by their own run delay (harness.Retakes)
                                    "sample_retakes": int(rows["sample_retakes"].fillna(0).sum())
                                    if "sample_retakes" in rows else 0,
                                    "earlier_attempts_widest": earlier, "noisy": bool(rows["noisy"].any()),
                                    # noisy, and measuring again would have cost more than the budget left
                                    "beyond_budget": bool(rows["beyond_budget"].any()),
                                    # the group's drift between rounds, common and own (noise.round_drift)
                                    "round_drift": drift,
                                    # the run's widest interval (None: one round, none known)
                                    "half_width": None if rows["half_width"].isna().all()
                                    else float(rows["half_width"].max())}}
                results.write_raw(rows, raw_dir / f"{run['name']}.parquet", record, keys[run["name"]])
                frames.append(rows)
    frame = pd.concat(frames, ignore_index=True)
    if not deciding:
        return frame
    return _decide_more(frame, groups, deciding, looks, raw_dir, group_keys, measure_pass, settings, series,
                        quantity, per_round, progress)


def looks_taken(rows: pd.DataFrame, claim: Deciding) -> int:
    """How many times `claim`'s data have been judged: the base rounds, and every extra look of its
    group that measured one of its runs (another claim's look changes its data too)."""
    if "look" not in rows:
        return 1
    theirs = rows[rows["run"].isin(claim.run_names) & (rows["look"].fillna(0) > 0)]
    return 1 + int(theirs["look"].nunique())


def _decide_more(frame: pd.DataFrame, groups: Sequence[Group], deciding: Sequence[Deciding], looks: Looks,
                 raw_dir: Path, group_keys: dict[str, dict[str, dict[str, Any]]], measure_pass: MeasurePass,
                 settings: noise.Settings, series: Sequence[str], quantity: Quantity, per_round: str,
                 progress: bool) -> pd.DataFrame:
    """More rounds for the claims of `deciding` that more rounds could decide, by the stopping rule
    `looks`, fixed in advance: a claim undecided at its last look (judged at looks.confidence) whose
    looks are not spent gets, as one more look, the rounds it needs at the spread observed
    (Deciding.judge), where the budget left pays for all of them at its runs' measured cost per
    round; the claim that costs least to decide goes first, then every claim is judged again. A
    look the budget cannot pay for in full is not started (as a noisy group's re-measure,
    _measure_group): at the spread observed it would end undecided, and it would spend one of the
    claim's looks, which a run with a larger budget reusing these rounds could still take. Its runs
    are measured in each extra round in a fresh random order, like the base rounds, and every
    look's rows are stored with their run (an interrupted run keeps its finished looks)."""
    by_name = {group.name: group for group in groups}
    run_names = {group.name: [run["name"] for run in group.runs] for group in groups}
    spent = 0.0
    with tqdm(total=0, desc="claims' extra rounds", unit="pass", disable=not progress) as bar:
        while True:
            candidates = []
            for claim in deciding:
                rows = frame[frame["run"].isin(run_names[claim.group])]
                settled, needed = claim.judge(rows, looks.confidence)
                if settled or needed is None or looks_taken(rows, claim) >= looks.max_looks:
                    continue
                mine = rows[rows["run"].isin(claim.run_names)]
                taken = int(mine["round"].nunique())
                round_cost = _cost_per_round(mine)  # 0: no cost known, so no budget pays for them
                extra = needed - taken
                cost = extra * round_cost
                if extra >= 1 and 0 < cost <= looks.budget_s - spent:
                    candidates.append((cost, extra, claim))
            if not candidates:
                return frame
            _, extra, claim = min(candidates, key=lambda c: c[0])
            group = by_name[claim.group]
            theirs = frame[frame["run"].isin(run_names[group.name])]
            look = int(theirs["look"].fillna(0).max()) + 1 if "look" in theirs else 1  # the group's looks, counted
            first = int(theirs["round"].max()) + 1
            bar.total += extra * len(claim.runs)
            bar.set_postfix_str(f"{claim.claim}: look {looks_taken(frame, claim) + 1}, {extra} rounds")
            # a look's rows belong to their group, whose re-measures the budget cut short or not
            beyond_budget = bool(theirs["beyond_budget"].fillna(False).any()) if "beyond_budget" in theirs else False
            started, new = time.perf_counter(), []
            for round_index in range(first, first + extra):
                for run in noise.round_order(list(claim.runs), round_index, settings.order_seed):
                    passed, _ = _take_pass(group, run, round_index, measure_pass, settings, bar)
                    new.append(passed.assign(attempt=0, beyond_budget=beyond_budget, look=look,
                                             extended_for=claim.claim))
            spent += time.perf_counter() - started
            frame = _store_look(frame, pd.concat(new, ignore_index=True), claim, raw_dir, group_keys[group.name],
                                settings, series, quantity, per_round)


def _cost_per_round(rows: pd.DataFrame) -> float:
    """What one more round of these runs costs: each run's median pass wall time (`pass_cost_s`),
    summed, each over its extra rounds where it has some (they measure only the claim's cells, the
    base rounds every cell), else over its base rounds (a run another claim's looks did not
    measure, or none did); 0 for rows stored before passes were timed: no cost known, so no
    budget pays for them."""
    if "pass_cost_s" not in rows or rows["pass_cost_s"].isna().all():
        return 0.0
    passes = rows.drop_duplicates(["run", "round", "retakes"])
    looked = passes["look"].fillna(0) > 0 if "look" in passes else pd.Series(False, index=passes.index)
    # a run shared with another claim may have extra rounds while this claim's other runs have none
    cost = 0.0
    for _, run in passes.groupby("run"):
        extra = run[looked[run.index]]
        cost += float((extra if len(extra) else run)["pass_cost_s"].median())
    return cost


def _store_look(frame: pd.DataFrame, new: pd.DataFrame, claim: Deciding, raw_dir: Path,
                keys: dict[str, dict[str, Any]], settings: noise.Settings, series: Sequence[str],
                quantity: Quantity, per_round: str) -> pd.DataFrame:
    """`frame` with a look's rows `new`; each run of the look stored again with all its rows, its
    spread (half_width, cv, noisy) judged afresh over them and its provenance noting the look."""
    touched = claim.run_names
    rows = pd.concat([frame[frame["run"].isin(touched)], new], ignore_index=True)
    spread, _ = _spread(rows.drop(columns=["half_width", "cv", "noisy"], errors="ignore"), series, quantity, per_round)
    rows = rows.drop(columns=["half_width", "cv", "noisy"], errors="ignore").merge(spread, on=["run", *series],
                                                                                  how="left")
    rows["noisy"] = [settings.is_noisy(width) for width in rows["half_width"]]
    for name in touched:
        own = rows[rows["run"] == name].reset_index(drop=True)
        path = raw_dir / f"{name}.parquet"
        record = results.read_provenance(path)
        extended = own[own["look"].fillna(0) > 0]
        record["looks"] = {"extra_rounds": int(extended["round"].nunique()),
                           "for": sorted(set(extended["extended_for"]))}
        record["noise"] = {**record.get("noise", {}), "noisy": bool(own["noisy"].any()),
                           "half_width": None if own["half_width"].isna().all() else float(own["half_width"].max())}
        results.write_raw(own, path, record, keys[name])
    return pd.concat([frame[~frame["run"].isin(touched)], rows], ignore_index=True)


def measure_once(path: str | os.PathLike, params: dict[str, Any],
                 measure: Callable[[], tuple[pd.DataFrame, dict[str, Any]]]) -> pd.DataFrame:
    """Return the rows stored at `path` if they were measured with `params` on
    this machine (results.reuse_key), else call `measure()` (which returns rows and
    provenance) and store them, with the load the machine saw meanwhile."""
    key = results.reuse_key(params)
    frame = results.stored_rows(path, key)
    if frame is not None:
        return frame
    with noise.LoadMonitor() as monitor:
        frame, provenance = measure()
    provenance = {**provenance, "load": vars(monitor.load) | monitor.load.as_columns()}
    results.write_raw(frame, path, provenance, key)
    return frame
