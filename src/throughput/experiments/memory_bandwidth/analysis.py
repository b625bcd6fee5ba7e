"""From the raw runs to numbers: rates, the methods' agreement, the summary,
the -O and STREAM-ratio tables, the targets and the plateau verdict, and the
machines side by side (this one and the archived ones, throughput.machines)."""
from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from ... import provenance
from .vocabulary import BUS_BYTES_PER_VALUE, MODES, PLATEAU_BAND, SEED_N, SEED_SECONDS, SINGLE_TARGET

def with_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Add 10^9 values/s, GB/s as counted by STREAM, and GB/s of real bus traffic."""
    frame = frame.copy()
    frame["ghz"] = frame["n"] / frame["wall_s"] / 1e9
    frame["gb_s"] = frame["bytes_moved"] / frame["wall_s"] / 1e9
    frame["bus_gb_s"] = frame["n"] * frame["mode"].map(BUS_BYTES_PER_VALUE) / frame["wall_s"] / 1e9
    return frame


def check_agreement(frame: pd.DataFrame) -> None:
    """All add-a-constant methods of one mode must give the same checksum for the same passes."""
    adds = frame[frame["method"] != "STREAM"]
    for mode, group in adds.groupby("mode"):
        if group["checksum"].nunique() != 1:
            raise AssertionError(f"methods disagree for {mode}: {group.groupby('method')['checksum'].unique()}")


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median (and min, max) rates per method, mode, opt and thread count, warm-up excluded."""
    measured = frame[~frame["warmup"]]
    return (measured.groupby(["method", "mode", "opt", "threads"], sort=False)
            .agg(ghz=("ghz", "median"), ghz_min=("ghz", "min"), ghz_max=("ghz", "max"),
                 gb_s=("gb_s", "median"), bus_gb_s=("bus_gb_s", "median"),
                 wall_s=("wall_s", "median"), cpu_s=("cpu_s", "median"), passes=("wall_s", "count"),
                 cv=("cv", "max"), noisy=("noisy", "any"), others_cores=("others_cores", "max"))
            .reset_index())


def stream_at(table: pd.DataFrame, op: str, threads: int) -> pd.Series:
    row = table[(table["method"] == "STREAM") & (table["mode"] == op) & (table["threads"] == threads)]
    if len(row) != 1:
        raise KeyError(f"no STREAM {op} result at {threads} threads")
    return row.iloc[0]


def cache_note(n: int) -> str:
    """Whether one array of n doubles is large enough (4x the last-level cache)
    for the rates to be memory rates rather than partly cache rates."""
    cache = provenance.last_level_cache_bytes()
    if cache is None:
        return "the last-level cache size is unknown on this host"
    ratio = 8 * n / cache
    verdict = "well beyond" if ratio >= 4 else "NOT well beyond (rates are partly cache rates)"
    return f"one array is {ratio:.1f} times the {cache / 2**20:.0f} MiB last-level cache: {verdict}"


def opt_table(table: pd.DataFrame) -> pd.DataFrame:
    """Seed's single-thread seconds for 10^10 doubles beside ours (extrapolated from our median rate)."""
    single = table[(table["method"] == "C++") & (table["threads"] == 1)]
    rows = []
    for mode in MODES:
        for opt in sorted(single["opt"].unique()):
            ours = single[(single["mode"] == mode) & (single["opt"] == opt)].iloc[0]
            rows.append({"mode": mode, "opt": opt, "seed_s": SEED_SECONDS.loc[mode, opt],
                         "ours_s": SEED_N / (ours["ghz"] * 1e9), "ours_ghz": ours["ghz"],
                         "noisy": ours["noisy"], "cv": ours["cv"],
                         "speedup": SEED_SECONDS.loc[mode, opt] / (SEED_N / (ours["ghz"] * 1e9))})
    return pd.DataFrame(rows)


OPTIMIZED = ("O1", "O2", "O3")


def opt_verdict(table: pd.DataFrame) -> str:
    """Whether this run ranks -O1, -O2 and -O3 (C++, one thread), per mode: one level counts as
    faster than another only where the ranges of their timed passes do not overlap, so that a
    level ahead by noise is not printed as a result. With the seed's spread beside ours."""
    single = table[(table["method"] == "C++") & (table["threads"] == 1) & table["opt"].isin(OPTIMIZED)]
    parts = []
    for mode in MODES:
        rows = single[single["mode"] == mode].set_index("opt")
        seed = SEED_SECONDS.loc[mode, list(OPTIMIZED)]
        apart, seed_apart = rows["ghz"].max() / rows["ghz"].min() - 1, seed.max() / seed.min() - 1
        fastest = rows["ghz"].idxmax()
        behind = [o for o in rows.index if rows.loc[o, "ghz_max"] < rows.loc[fastest, "ghz_min"]]
        if behind:
            ranking = (f"-{fastest} is faster than -{' and -'.join(behind)} beyond the spread of their passes "
                       f"({apart:.0%} between the fastest and slowest level)")
        else:
            ranking = (f"-O1 to -O3 lie within {apart:.0%} of each other and the ranges of their passes overlap, "
                       f"so this run does not rank them")
        parts.append(f"{mode}, {ranking} (the seed's levels: within {seed_apart:.0%})")
    return "; ".join(parts)


def ratio_table(table: pd.DataFrame) -> pd.DataFrame:
    """Each add-a-constant method against STREAM scale at the same thread count."""
    adds = table[table["method"] != "STREAM"].copy()
    stream = table[(table["method"] == "STREAM") & (table["mode"] == "scale")].set_index("threads")
    adds["stream_scale_gb_s"] = adds["threads"].map(stream["gb_s"])
    adds["stream_scale_bus_gb_s"] = adds["threads"].map(stream["bus_gb_s"])
    adds["ratio"] = adds["gb_s"] / adds["stream_scale_gb_s"]
    # A ratio is as noisy as either of its sides.
    adds["noisy"] = adds["noisy"] | adds["threads"].map(stream["noisy"]).astype(bool)
    adds["bus_ratio"] = adds["bus_gb_s"] / adds["stream_scale_bus_gb_s"]
    return adds


def targets(table: pd.DataFrame, max_threads: int) -> dict[str, Any]:
    """The issue's benchmark targets, measured: single-thread -O3 in place vs STREAM scale
    (at least 90%), and the all-cores plateau vs all-cores STREAM scale (within 10%).
    The immutable kernel, which has STREAM scale's access pattern (read one array,
    store to another), is compared too: it tells a real shortfall from one that
    only reflects the in-place kernel's cheaper access pattern."""
    def o3(mode: str, threads: int) -> pd.Series:
        return table[(table["method"] == "C++") & (table["mode"] == mode) & (table["opt"] == "O3")
                     & (table["threads"] == threads)].iloc[0]
    single, plateau = o3("inplace", 1), o3("inplace", max_threads)
    s1, sn = stream_at(table, "scale", 1), stream_at(table, "scale", max_threads)
    single_ratio = single["gb_s"] / s1["gb_s"]
    plateau_ratio = plateau["gb_s"] / sn["gb_s"]
    immutable_ratio = o3("immutable", max_threads)["gb_s"] / sn["gb_s"]
    return {
        "single_ratio": single_ratio, "single_met": single_ratio >= SINGLE_TARGET,
        "plateau_ratio": plateau_ratio, "plateau_met": abs(plateau_ratio - 1) <= PLATEAU_BAND,
        "plateau_bus_ratio": plateau["bus_gb_s"] / sn["bus_gb_s"],
        "plateau_immutable_ratio": immutable_ratio,
        "single_gb_s": single["gb_s"], "plateau_gb_s": plateau["gb_s"],
        "stream_single_gb_s": s1["gb_s"], "stream_all_gb_s": sn["gb_s"],
        "single_ghz": single["ghz"], "plateau_ghz": plateau["ghz"],
    }


def plateau_verdict(goal: dict[str, Any]) -> str:
    """One sentence for the paper on the plateau target, from the measured ratios."""
    band = f"{PLATEAU_BAND:.0%}"
    if goal["plateau_met"]:
        return f"is within {band} of it"
    immutable = goal["plateau_immutable_ratio"]
    same_pattern = "within" if abs(immutable - 1) <= PLATEAU_BAND else "outside"
    return (f"is outside the {band} band. STREAM has no in-place kernel: each of its four kernels "
            f"stores to an array it does not read, while the in-place update writes back lines it has "
            f"just read (bus-traffic ratio {goal['plateau_bus_ratio']:.2f}). The immutable kernel, "
            f"which has STREAM scale's access pattern, reaches {immutable:.2f} of it, {same_pattern} the band")


def machine_table(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per machine, from that machine's own summary (`summary` of its runs): the
    single-thread -O3 in-place rate and STREAM scale, and the same at the machine's most
    threads; every ratio is taken within one machine. `noisy`: any of these figures stayed noisy."""
    rows = []
    for label, table in tables.items():
        threads = int(table[(table["method"] == "C++") & (table["opt"] == "O3")]["threads"].max())
        goal = targets(table, threads)
        inplace = (table["method"] == "C++") & (table["opt"] == "O3") & (table["mode"] == "inplace")
        scale = (table["method"] == "STREAM") & (table["mode"] == "scale")
        used = table[table["threads"].isin([1, threads]) & (inplace | scale)]
        rows.append({"machine": label, "threads": threads, "single_ghz": goal["single_ghz"],
                     "single_gb_s": goal["single_gb_s"], "stream_single_gb_s": goal["stream_single_gb_s"],
                     "single_ratio": goal["single_ratio"], "plateau_ghz": goal["plateau_ghz"],
                     "plateau_gb_s": goal["plateau_gb_s"], "stream_all_gb_s": goal["stream_all_gb_s"],
                     "plateau_ratio": goal["plateau_ratio"], "noisy": bool(used["noisy"].any())})
    return pd.DataFrame(rows)
