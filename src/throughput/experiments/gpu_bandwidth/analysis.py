"""From the measured rows to results: rates (10^9 values/s, GB/s, fraction of
nominal), the agreement of methods, the median per run, explode and combine
against the flat add, and the target for a GPU host."""
from __future__ import annotations

from typing import Any

import pandas as pd

from ...core import experiment, intervals
from ...core.intervals import Estimate, Verdict
from .cases import (CONSTANT, GPU_METHODS, JAGGED_OPS, LAUNCH_CASE, NOT_MEASURED, REFERENCE_CASE, TARGET_CASES,
                    TARGET_FRACTION)
from .device import GpuStatus


def rated_time(frame: pd.DataFrame) -> pd.Series:
    """The time a pass is rated by: device work by its CUDA-event time, CPU work by the steady
    clock, each over the passes its sample repeated (`loops`, where a case calibrates its
    samples; also what the measuring loop judges a run's noise by)."""
    wall = experiment.time_per_pass(frame)
    if "event_s" not in frame:
        return wall
    # the CUDA events span the sample's `loops` passes, as the steady clock does
    per_pass = frame["event_s"] / frame["loops"].fillna(1) if "loops" in frame else frame["event_s"]
    return per_pass.where(frame["event_s"].notna(), wall)


def with_rates(frame: pd.DataFrame, nominal: float | None) -> pd.DataFrame:
    """10^9 values/s, GB/s, and for GPU rows the fraction of the device's nominal bandwidth
    (rated_time)."""
    frame = frame.copy()
    frame["time_s"] = rated_time(frame)
    frame["ghz"] = frame["n"] / frame["time_s"] / 1e9
    frame["gb_s"] = frame["bytes_moved"] / frame["time_s"] / 1e9
    on_gpu = frame["method"].isin(list(GPU_METHODS.values()))
    frame["fraction"] = (frame["gb_s"] / nominal).where(on_gpu) if nominal else float("nan")
    return frame


def agreed_checksum(frame: pd.DataFrame) -> pd.Series:
    """The checksum every method of a case must give: an in-place add's less what its passes
    added (CONSTANT to each of its n values per pass; the CPU methods calibrate how many passes
    they make), which leaves the input's sum; any other case's as it is."""
    if "passes_made" not in frame:  # results from before the CPU cases calibrated: equal passes
        return frame["checksum"]
    added = frame["n"] * frame["passes_made"] * float(CONSTANT)
    return frame["checksum"] - added.where(frame["case"].str.contains("inplace"), 0.0)


def check_agreement(frame: pd.DataFrame) -> None:
    """Every method of one case, value type and size must give the same checksum (agreed_checksum)."""
    if frame.empty:
        return
    frame = frame.assign(agreed=agreed_checksum(frame))
    # (NUMA's runs and the launch counters check themselves: their values are no shared result)
    compared = frame[~frame["group"].isin(["numa", "launch"])]
    for (group, case, dtype, n), rows in compared.groupby(["group", "case", "dtype", "n"]):
        if rows["agreed"].nunique() != 1:
            raise AssertionError(f"methods disagree on {group} {case} {dtype} (n={n}): "
                                 f"{rows.groupby('method')['agreed'].unique().to_dict()}")


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median (min, max) per run, warm-up passes left out; `noisy` where the run stayed noisy;
    `passes` the timed samples, `processes` the rounds the best rates rest on."""
    if frame.empty:
        return pd.DataFrame(columns=["group", "method", "case", "dtype", "threads", "n", "ghz", "ghz_min",
                                     "ghz_max", "gb_s", "fraction", "time_s", "cpu_s", "passes", "processes",
                                     "clock", "noisy"])
    measured = frame[~frame["warmup"]]
    keys = ["group", "method", "case", "dtype", "threads", "n"]
    table = (measured.groupby(keys, sort=False)
             .agg(ghz=("ghz", "median"), ghz_min=("ghz", "min"), ghz_max=("ghz", "max"), gb_s=("gb_s", "median"),
                  fraction=("fraction", "median"), time_s=("time_s", "median"), cpu_s=("cpu_s", "median"),
                  passes=("time_s", "count"), clock=("clock", "first"), noisy=("noisy", "any"))
             .reset_index())
    # the fraction of the nominal bandwidth the target judges: each process's best pass, across
    # the processes with its interval (throughput.core.intervals), as bandwidths are reported
    if "round" not in measured:  # results from before rounds were recorded: each pass its own
        measured = measured.assign(round=measured.groupby(keys, sort=False).cumcount())
    # and each rate the tables print likewise (`ghz_best`, `ghz_low`, `ghz_high`)
    for column in ("fraction", "ghz"):
        # (no fraction where the nominal bandwidth is unknown: across_timed leaves NaN out)
        best_by_round = experiment.by_round(measured, keys, table, column, "max")
        estimates = [intervals.across_timed(best.values()) for best in best_by_round]
        table[f"{column}_best"] = [e.value for e in estimates]
        table[f"{column}_low"] = [e.low for e in estimates]
        table[f"{column}_high"] = [e.high for e in estimates]
        table[f"{column}_by_round"] = best_by_round  # what a ratio of two runs of one group pairs
    table["processes"] = [e.processes for e in estimates]
    return table



def _pick(table: pd.DataFrame, **where: Any) -> pd.Series | None:
    rows = table
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows.iloc[0] if len(rows) else None


def jagged_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per method, threads and value type: the rate of each of the four operations (each
    process's best pass across the processes: `<op>`, `<op>_low`, `<op>_high`), and explode's
    and combine's rate relative to the flat immutable add of the same method, paired by round
    (one interleaved group runs them; `<op>_ratio`, with `_low` and `_high`); `<column>_noisy`
    where a rate's run (or either side of a ratio) stayed noisy."""
    jag = table[table["group"] == "jagged"]
    figures = [*JAGGED_OPS, "explode_ratio", "combine_ratio"]
    index = ["method", "threads", "dtype"]
    rows = []
    for key, runs in (jag.groupby(index, sort=False) if len(jag) else ()):  # (an empty frame may lack them)
        row: dict[str, Any] = dict(zip(index, key))
        by_case = {run["case"]: run for _, run in runs.iterrows()}
        for op in JAGGED_OPS:
            run = by_case.get(op)
            rate = (Estimate(run["ghz_best"], run["ghz_low"], run["ghz_high"], int(run["processes"]))
                    if run is not None else intervals.UNKNOWN)
            row.update({op: rate.value, f"{op}_low": rate.low, f"{op}_high": rate.high,
                        f"{op}_noisy": run is not None and bool(run["noisy"])})
        flat = by_case.get("flat_immutable")
        for op in ("explode", "combine"):
            run = by_case.get(op)
            ratio = (intervals.paired_by_round(run["ghz_by_round"], flat["ghz_by_round"])
                     if run is not None and flat is not None else intervals.UNKNOWN)
            row.update({f"{op}_ratio": ratio.value, f"{op}_ratio_low": ratio.low, f"{op}_ratio_high": ratio.high,
                        f"{op}_ratio_noisy": row[f"{op}_noisy"] or row["flat_immutable_noisy"]})
        rows.append(row)
    columns = [*index, *[f"{f}{suffix}" for f in figures for suffix in ("", "_low", "_high", "_noisy")]]
    return pd.DataFrame(rows, columns=columns)


def jagged_estimate(row: pd.Series, column: str) -> Estimate:
    """A jagged_table row's `column` (a rate or a ratio) with its interval (the count of
    processes is not kept there: a verdict needs only the interval)."""
    return Estimate(row[column], row[f"{column}_low"], row[f"{column}_high"], 0)


# Seed 000's statements on a GPU host, as ratios of two Table 2 runs of one value type paired by
# round (one interleaved group runs them): name -> (numerator, denominator), each (method, case).
# The ledger of claims (paper/claims/000.yaml, measured_by GpubRatio<name>) decides the seed's GPU
# claims by them, on this machine and on every archived one. Transfers are the pageable ones, as
# the seed's cudaMemcpy from malloc'd memory was; 'unified' is the seed's pinned, mapped memory.
CLAIM_RATIOS = {
    "HtodOverHostCopy": (("CUDA C++", "h2d_pageable"), ("C++", "host_copy")),
    "InplaceOverHtod": (("CUDA C++", "inplace_global"), ("CUDA C++", "h2d_pageable")),
    "CopyOverInplace": (("CUDA C++", "d2d_copy"), ("CUDA C++", "inplace_global")),
    "InplaceOverImmutable": (("CUDA C++", "inplace_global"), ("CUDA C++", "immutable_global")),
    "CopyOverHtod": (("CUDA C++", "d2d_copy"), ("CUDA C++", "h2d_pageable")),
    "InplaceOverMapped": (("CUDA C++", "inplace_global"), ("CUDA C++", "inplace_mapped")),
    "MappedOverHtod": (("CUDA C++", "inplace_mapped"), ("CUDA C++", "h2d_pageable")),
}


def claim_ratios(table: pd.DataFrame, dtype: str = "float32") -> dict[str, Estimate]:
    """CLAIM_RATIOS on `table` (summary's), each paired by round with its interval (UNKNOWN where
    a side was not measured); float32, the seed's Table 2 type."""
    found = {}
    for name, ((method_a, case_a), (method_b, case_b)) in CLAIM_RATIOS.items():
        a = _pick(table, group="table2", method=method_a, case=case_a, dtype=dtype) if len(table) else None
        b = _pick(table, group="table2", method=method_b, case=case_b, dtype=dtype) if len(table) else None
        found[name] = (intervals.paired_by_round(a["ghz_by_round"], b["ghz_by_round"])
                       if a is not None and b is not None else intervals.UNKNOWN)
    return found


def targets(table: pd.DataFrame, status: GpuStatus, dtypes: list[str]) -> dict[str, Any]:
    """The issue's target for a GPU host: the within-device copy and the in-place kernel
    (CUDA C++) reach at least 85% of the device's nominal memory bandwidth, met, missed or
    inconclusive by each fraction's interval (`fractions`: Estimates of the best pass per process,
    by (case, dtype)). Each is judged on the kernel TARGET_CASES declares for it (the tuned one;
    the seed's where a run has no tuned one), and the seed's one-element kernel's fraction stands
    beside it (`seed_fractions`), and CUB's transform, the vendor's reference (`reference_fractions`),
    each judged on nothing."""
    result: dict[str, Any] = {"checked": False, "met": None, "fractions": {}, "seed_fractions": {},
                              "reference_fractions": {}}
    nominal = (status.device or {}).get("nominal_gb_s")
    if status.reason("cuda") is not None:
        result["why_not"] = status.reason("cuda")
        return result
    if not nominal:
        result["why_not"] = "the device reports no memory clock, so its nominal bandwidth is unknown"
        return result
    def fraction(case: str, dtype: str) -> Estimate | None:
        got = _pick(table, group="table2", method="CUDA C++", case=case, dtype=dtype)
        return (Estimate(got["fraction_best"], got["fraction_low"], got["fraction_high"], int(got["processes"]))
                if got is not None else None)

    for declared, seed_kernel in TARGET_CASES.values():
        for dtype in dtypes:
            tuned, seed = fraction(declared, dtype), fraction(seed_kernel, dtype)
            if tuned is not None:
                result["fractions"][(declared, dtype)] = tuned
                if seed is not None:
                    result["seed_fractions"][(seed_kernel, dtype)] = seed
            elif seed is not None:
                result["fractions"][(seed_kernel, dtype)] = seed
    for dtype in dtypes:
        reference = fraction(REFERENCE_CASE, dtype)
        if reference is not None:
            result["reference_fractions"][(REFERENCE_CASE, dtype)] = reference
    if not result["fractions"]:
        result["why_not"] = "the CUDA C++ copy and in-place cases were not measured"
        return result
    # met when every case's interval lies above the target, missed when one lies below it
    verdicts = {intervals.at_least(f, TARGET_FRACTION) for f in result["fractions"].values()}
    verdict = (Verdict.MISSED if Verdict.MISSED in verdicts else
               Verdict.MET if verdicts == {Verdict.MET} else Verdict.INCONCLUSIVE)
    result.update(checked=True, met=verdict is Verdict.MET, verdict=verdict, nominal_gb_s=nominal)
    return result


def archived_summary(runs: list[tuple[pd.DataFrame, dict[str, Any], dict[str, Any]]]) -> tuple[pd.DataFrame, GpuStatus]:
    """An archived machine's runs (rows, provenance, reuse key each: throughput.machines.tables)
    summarised as this machine's, with each GPU rate's fraction of the nominal bandwidth
    of the device its runs' keys name; and that machine's GPU as this machine's is
    detected (its device, None where no run had one; a GPU method its archive holds no
    Table 2 or jagged row of has the reason that says so), so that `targets` and the
    report's sentences take it as they take this machine's."""
    device = next((key["device"] for _, _, key in runs if key.get("device")), None)
    frame = with_rates(pd.concat([rows for rows, _, _ in runs], ignore_index=True),
                       (device or {}).get("nominal_gb_s"))
    held = set(frame["method"])
    reasons = {method: None if label in held else f"{NOT_MEASURED}: no {label} run in this machine's archive"
               for method, label in GPU_METHODS.items()}
    return summary(frame), GpuStatus(device=device, reasons=reasons)


def launch_table(frame: pd.DataFrame) -> pd.DataFrame:
    """What one launch costs each GPU method (the launch group's counting kernel, launched back
    to back): per round the best sample's time per launch by the CUDA events (`device_us`: the
    device's) and by the steady clock (`host_us`: the host's, a Python method's dispatch with
    it), across the rounds with their intervals (`_low`, `_high`)."""
    columns = ["method", "processes", *[f"{side}_us{suffix}" for side in ("device", "host")
                                         for suffix in ("", "_low", "_high")]]
    if frame.empty or "group" not in frame:
        return pd.DataFrame(columns=columns)
    launches = frame[(frame["group"] == "launch") & (frame["case"] == LAUNCH_CASE) & ~frame["warmup"].astype(bool)]
    if launches.empty:
        return pd.DataFrame(columns=columns)
    loops = launches["loops"].fillna(1) if "loops" in launches else 1
    launches = launches.assign(device_us=launches["event_s"] / loops * 1e6, host_us=launches["wall_s"] / loops * 1e6)
    if "round" not in launches:
        launches = launches.assign(round=launches.groupby("method", sort=False).cumcount())
    rows = []
    for method, runs in launches.groupby("method", sort=False):
        row: dict[str, Any] = {"method": method}
        for side in ("device", "host"):
            best = runs.groupby("round")[f"{side}_us"].min()
            estimate = intervals.across_timed(best.values)
            row.update({f"{side}_us": estimate.value, f"{side}_us_low": estimate.low,
                        f"{side}_us_high": estimate.high})
            row["processes"] = estimate.processes
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)
