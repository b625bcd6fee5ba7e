"""From the measured rows to results: rates (10^9 values/s, GB/s, fraction of
nominal), the agreement of methods, the median per run, explode and combine
against the flat add, and the target for a GPU host."""
from __future__ import annotations

from typing import Any

import pandas as pd

from ... import experiment, intervals
from ...intervals import Estimate, Verdict
from .cases import GPU_METHODS, JAGGED_OPS, NOT_MEASURED, TARGET_FRACTION
from .device import GpuStatus


def rated_time(frame: pd.DataFrame) -> pd.Series:
    """The time a pass is rated by: device work by its CUDA-event time, CPU work by the steady
    clock (also what the measuring loop judges a run's noise by)."""
    if "event_s" not in frame:
        return frame["wall_s"]
    return frame["event_s"].where(frame["event_s"].notna(), frame["wall_s"])


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


def check_agreement(frame: pd.DataFrame) -> None:
    """Every method of one case, value type and size must give the same checksum."""
    if frame.empty:
        return
    for (group, case, dtype, n), rows in frame[frame["group"] != "numa"].groupby(["group", "case", "dtype", "n"]):
        if rows["checksum"].nunique() != 1:
            raise AssertionError(f"methods disagree on {group} {case} {dtype} (n={n}): "
                                 f"{rows.groupby('method')['checksum'].unique().to_dict()}")


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median (min, max) per run, warm-up passes left out; `noisy` where the run stayed noisy."""
    if frame.empty:
        return pd.DataFrame(columns=["group", "method", "case", "dtype", "threads", "n", "ghz", "ghz_min",
                                     "ghz_max", "gb_s", "fraction", "time_s", "cpu_s", "passes", "clock", "noisy"])
    measured = frame[~frame["warmup"]]
    keys = ["group", "method", "case", "dtype", "threads", "n"]
    table = (measured.groupby(keys, sort=False)
             .agg(ghz=("ghz", "median"), ghz_min=("ghz", "min"), ghz_max=("ghz", "max"), gb_s=("gb_s", "median"),
                  fraction=("fraction", "median"), time_s=("time_s", "median"), cpu_s=("cpu_s", "median"),
                  passes=("time_s", "count"), clock=("clock", "first"), noisy=("noisy", "any"))
             .reset_index())
    # the fraction of the nominal bandwidth the target judges: each process's best pass, across
    # the processes with its interval (throughput.intervals), as bandwidths are reported
    if "round" not in measured:  # results from before rounds were recorded: each pass its own
        measured = measured.assign(round=measured.groupby(keys, sort=False).cumcount())
    # and each rate the tables print likewise (`ghz_best`, `ghz_low`, `ghz_high`)
    for column in ("fraction", "ghz"):
        # (no fraction where the nominal bandwidth is unknown: across_timed leaves NaN out)
        estimates = [intervals.across_timed(best.values())
                     for best in experiment.by_round(measured, keys, table, column, "max")]
        table[f"{column}_best"] = [e.value for e in estimates]
        table[f"{column}_low"] = [e.low for e in estimates]
        table[f"{column}_high"] = [e.high for e in estimates]
    return table



def _pick(table: pd.DataFrame, **where: Any) -> pd.Series | None:
    rows = table
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows.iloc[0] if len(rows) else None


def jagged_table(table: pd.DataFrame) -> pd.DataFrame:
    """Rates of the four operations per method, threads and value type, and explode's and
    combine's rate relative to the flat immutable add of the same method; `<column>_noisy`
    where a rate's run (or either side of a ratio) stayed noisy."""
    jag = table[table["group"] == "jagged"]
    noisy_columns = [f"{c}_noisy" for c in (*JAGGED_OPS, "explode_ratio", "combine_ratio")]
    if jag.empty:
        return pd.DataFrame(columns=["method", "threads", "dtype", *JAGGED_OPS, "explode_ratio", "combine_ratio",
                                     *noisy_columns])
    index = ["method", "threads", "dtype"]
    wide = jag.pivot_table(index=index, columns="case", values="ghz", sort=False).reindex(columns=list(JAGGED_OPS))
    noisy = (jag.assign(noisy=jag["noisy"].astype(bool)).pivot_table(index=index, columns="case", values="noisy",
                                                                      aggfunc="max", sort=False)
             .reindex(columns=list(JAGGED_OPS)).fillna(0.0).astype(bool))  # 0.0: a missing pair, not noisy
    for op in ("explode", "combine"):
        wide[f"{op}_ratio"] = wide[op] / wide["flat_immutable"]
        noisy[f"{op}_ratio"] = noisy[op] | noisy["flat_immutable"]
    return wide.join(noisy.add_suffix("_noisy")).reset_index()


def targets(table: pd.DataFrame, status: GpuStatus, dtypes: list[str]) -> dict[str, Any]:
    """The issue's target for a GPU host: the within-device copy and the in-place kernel
    (CUDA C++) reach at least 85% of the device's nominal memory bandwidth, met, missed or
    inconclusive by each fraction's interval (`fractions`: Estimates of the best pass per process)."""
    result: dict[str, Any] = {"checked": False, "met": None, "fractions": {}}
    nominal = (status.device or {}).get("nominal_gb_s")
    if status.reason("cuda") is not None:
        result["why_not"] = status.reason("cuda")
        return result
    if not nominal:
        result["why_not"] = "the device reports no memory clock, so its nominal bandwidth is unknown"
        return result
    for case in ("d2d_copy", "inplace_global"):
        for dtype in dtypes:
            got = _pick(table, group="table2", method="CUDA C++", case=case, dtype=dtype)
            if got is not None:
                result["fractions"][(case, dtype)] = Estimate(got["fraction_best"], got["fraction_low"],
                                                              got["fraction_high"], int(got["passes"]))
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
    """An archived machine's runs (rows, provenance, reuse key each: throughput.machines)
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
