"""Writing, analysis: the median of each run with its speed-up and efficiency, one
method against another, the simple format's efficiency target, and seeds 001's and
003's figures and claims set against this run."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...core import experiment, intervals
from ...report import seeds
from ...core.intervals import Estimate, Verdict
from .measuring import LABELS, PART_LABELS, SETUP_METHODS, target_medium

# Seed 001 (CMS, output to /dev/null; figures in throughput.report.seeds): how many times faster
# the simple format was than ROOT (LZ4 + IMT), at 1 and at SEED001_THREADS threads, and how
# many times larger its files were.
SEED001 = seeds.WRITE_SEED001
SEED001_THREADS = seeds.WRITE_THREADS
# Seed 003 (ROOT team, Intel Core i7-7820X, 8 cores, ROOT 6.12/6.14; about 1 GB
# of random doubles on HDD, NVMe SSD and DRAM): its runtime and speed-up
# figures did not survive text extraction; what it concluded did, and is set
# against what we measure (seed003_claims).

EFFICIENCY_TARGET = 0.85     # the simple format's parallel efficiency at 2 threads on tmpfs with LZ4
RANDOM_SETUP_SHARE = 0.05    # seed 003's regime: a pass's set-up and last flush under 5% of it


# ---- summaries -----------------------------------------------------------------------------

GROUP = ["part", "method", "medium", "compression"]


def _scaled(frame: pd.DataFrame, scale: int) -> pd.DataFrame:
    """The timed passes of the runs at `scale` (1: the configured entries; 2: a set-up run)."""
    scales = frame["scale"].fillna(1) if "scale" in frame else pd.Series(1, index=frame.index)
    return frame[~frame["warmup"] & (scales == scale)]


def summary(frame: pd.DataFrame, scale: int = 1) -> pd.DataFrame:
    """Median (min, max) of the time per pass (`wall_s`: a sample's write time over its passes)
    per run at `scale` (2: the set-up runs, measurement.SETUP_METHODS), warm-up excluded, and that time in each round
    (`wall_by_round`: what paired ratios pair; the runs of one workload, medium and compression
    ran in the same rounds), the peak memory above the baseline in each round (`rss_by_round`,
    MB; `rss_over_baseline_mb` the largest); speed-up against the same run at 1 thread, paired
    round by round, with its 95% interval (`speedup_low`, `speedup_high`; efficiency likewise)."""
    measured = _scaled(frame, scale)
    if "round" not in measured:  # results from before rounds were recorded: each pass its own
        measured = measured.assign(round=measured.groupby(GROUP + ["threads"], sort=False).cumcount())
    table = (measured.groupby(GROUP + ["threads"], sort=False)
             .agg(wall_s=("pass_s", "median"), wall_min=("pass_s", "min"), wall_max=("pass_s", "max"),
                  cpu_s=("pass_cpu_s", "median"), mb_s=("mb_s", "median"), written_mb_s=("written_mb_s", "median"),
                  entries_s=("entries_s", "median"), file_bytes=("file_bytes", "median"),
                  peak_rss_mb=("peak_rss_bytes", lambda s: s.max() / 1e6),
                  rss_over_baseline_mb=("rss_over_baseline_mb", "max"),
                  entries=("entries", "first"), raw_bytes=("raw_bytes", "first"), passes=("wall_s", "count"),
                  cv=("cv", "max"), noisy=("noisy", "any"), others_cores=("others_cores", "max"))
             .reset_index())
    table["wall_by_round"] = experiment.by_round(measured, GROUP + ["threads"], table, "pass_s")
    # each process's peak memory above the baseline (its largest sample's): what back_pressure judges
    table["rss_by_round"] = experiment.by_round(measured, GROUP + ["threads"], table, "rss_over_baseline_mb", "max")
    # each process's output file bytes: what the compressions' size ratios pair
    table["bytes_by_round"] = experiment.by_round(measured, GROUP + ["threads"], table, "file_bytes")
    # each run's time per pass across its processes (rounds) with its interval: what the tables print
    times = [intervals.across_timed(rounds.values()) for rounds in table["wall_by_round"]]
    table["time"], table["time_low"], table["time_high"] = zip(*((t.value, t.low, t.high) for t in times))
    single = table[table["threads"] == 1].set_index(GROUP)
    keys = pd.MultiIndex.from_frame(table[GROUP])
    _add_ratio(table, "speedup", single["wall_by_round"].reindex(keys).to_list(), table["wall_by_round"])
    # a ratio is as noisy as the noisier of its two runs (throughput.core.noise)
    table["speedup_noisy"] = table["noisy"] | single["noisy"].reindex(keys).fillna(False).to_numpy(dtype=bool)
    for end in ("", "_low", "_high"):
        table[f"efficiency{end}"] = table[f"speedup{end}"] / table["threads"]
    table["cores_busy"] = table["cpu_s"] / table["wall_s"]
    return table


def _add_ratio(table: pd.DataFrame, column: str, reference: list, runs: pd.Series) -> None:
    """`column` (and its _low, _high) of each row: the reference's time over the row's, paired
    round by round (throughput.core.intervals.paired_by_round); NaN where a side is missing."""
    ratios = [intervals.paired_by_round(ref, own) if isinstance(ref, dict) else intervals.UNKNOWN
              for ref, own in zip(reference, runs)]
    table[column] = [r.value for r in ratios]
    table[f"{column}_low"] = [r.low for r in ratios]
    table[f"{column}_high"] = [r.high for r in ratios]


def estimate(row: pd.Series, column: str) -> Estimate:
    """A table row's paired ratio `column` as an Estimate."""
    return Estimate(row[column], row[f"{column}_low"], row[f"{column}_high"], len(row["wall_by_round"]))


def rate(row: pd.Series, amount: float) -> Estimate:
    """`amount` per second of a table row's pass (MB, events), with the interval of its time."""
    return estimate(row, "time").inverted(amount)


def _at(table: pd.DataFrame, **where: Any) -> pd.DataFrame:
    rows = table
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows


def one(table: pd.DataFrame, **where: Any) -> pd.Series | None:
    """The single row matching `where`, or None if that run was not measured."""
    rows = _at(table, **where)
    if len(rows) > 1:
        raise KeyError(f"{len(rows)} rows match {where}")
    return rows.iloc[0] if len(rows) else None


def versus(table: pd.DataFrame, part: str, reference: str) -> pd.DataFrame:
    """Each method of `part` against `reference` on the same medium, compression and threads:
    how many times faster (reference time / method time, paired round by round, with its
    interval: `faster_low`, `faster_high`) and how many times larger its file."""
    rows = table[table["part"] == part].copy()
    ref = rows[rows["method"] == reference].set_index(["medium", "compression", "threads"])
    keys = pd.MultiIndex.from_frame(rows[["medium", "compression", "threads"]])
    _add_ratio(rows, "faster", ref["wall_by_round"].reindex(keys).to_list(), rows["wall_by_round"])
    rows["faster_noisy"] = rows["noisy"].to_numpy(dtype=bool) | ref["noisy"].reindex(keys).fillna(False).to_numpy(dtype=bool)
    rows["size_ratio"] = rows["file_bytes"].to_numpy() / ref["file_bytes"].reindex(keys).to_numpy()
    return rows


def seed001_rows(table: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """The seed's three formats and our methods: times faster than ROOT at 1 and at the most threads, size ratio."""
    medium, top = target_medium(params), params["max_threads"]
    rows = [{"who": f"seed, {r.format}", "faster_1": r.faster_1, "faster_n": r.faster_32, "threads_n": SEED001_THREADS,
             "size_ratio": r.size_ratio, "noisy_1": False, "noisy_n": False, "faster_1_low": math.nan,
             "faster_1_high": math.nan, "faster_n_low": math.nan, "faster_n_high": math.nan}
            for r in SEED001.itertuples()]
    for part, methods in seed001_parts(params).items():
        if "root_imt" not in methods:
            continue
        ours = versus(table, part, "root_imt")
        for method in [m for m in methods if m != "root_imt"]:
            first, last = (one(ours, method=method, medium=medium, threads=t) for t in (1, top))
            rows.append({"who": f"this run, {PART_LABELS[part]}, {LABELS[method]}", "threads_n": top,
                         "size_ratio": first["size_ratio"], "noisy_1": first["faster_noisy"],
                         "noisy_n": last["faster_noisy"],
                         **{f"faster_{t}{end}": row[f"faster{end}"] for t, row in (("1", first), ("n", last))
                            for end in ("", "_low", "_high")}})
    return pd.DataFrame(rows)


def seed001_parts(params: dict[str, Any]) -> dict[str, list[str]]:
    """Seed 001's workloads that this run measured, with their writers."""
    parts = {"events": params["event_methods"], "objects": params["object_methods"] if params["object_events"] else []}
    return {part: methods for part, methods in parts.items() if methods}


def _rounds(measured: pd.DataFrame, column: str, **where: Any) -> dict[int, float]:
    """`column` of the timed rows matching `where`, one value per round (its median)."""
    rows = _at(measured, **where)
    return rows.groupby("round")[column].median().to_dict() if len(rows) else {}


def _common(*runs: dict[int, float]) -> list[int]:
    return sorted(set.intersection(*(set(r) for r in runs))) if runs and all(runs) else []


def _per_round(frame: pd.DataFrame) -> pd.DataFrame:
    """The timed passes of every scale with their `round` and `scale` (older results: scale 1)."""
    measured = frame[~frame["warmup"]].copy()
    measured["scale"] = measured["scale"].fillna(1) if "scale" in measured else 1
    if "round" not in measured:
        measured["round"] = measured.groupby(GROUP + ["threads", "scale"], sort=False).cumcount()
    return measured


def fixed_cost(measured: pd.DataFrame, **where: Any) -> dict[str, Any]:
    """A run's fixed cost per pass from its passes of N and 2N entries in the same rounds:
    2 T(N) - T(2N) per round (seconds; `setup`, `share` of the N-entry pass), each the mean over
    rounds with its interval (throughput.core.intervals.mean_across, as a round's value may be
    negative), and the times by round (`single`, `double`)."""
    single = _rounds(measured[measured["scale"] == 1], "pass_s", **where)
    double = _rounds(measured[measured["scale"] == 2], "pass_s", **where)
    rounds = _common(single, double)
    if not rounds:
        return {"setup": intervals.UNKNOWN, "share": intervals.UNKNOWN, "single": single, "double": double}
    setups = [2 * single[r] - double[r] for r in rounds]
    return {"setup": intervals.mean_across(setups),
            "share": intervals.mean_across([c / single[r] for c, r in zip(setups, rounds)]),
            "single": single, "double": double}


def setup_rows(frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Seed 001 with and without ROOT's set-up, for each workload of writing.setup_parts (events,
    objects) at one thread (the set-up runs') on the target medium: each writer's fixed cost per pass
    (fixed_cost), and how many times faster the simple format is than ROOT + IMT, with (the
    pass times, paired by round) and without (the times of the N entries beyond the first N,
    T(2N) - T(N), of the two writers: each one's fixed cost removed) the set-up, each with its
    verdict on "faster" (met: the whole interval above 1)."""
    measured, medium, rows = _per_round(frame), target_medium(params), []
    for part in [p for p in ("events", "objects") if p in params["setup_parts"] and p in seed001_parts(params)]:
        root, simple = SETUP_METHODS[part]
        for threads in (1,):
            where = {"part": part, "medium": medium, "threads": threads}
            r, s = fixed_cost(measured, method=root, **where), fixed_cost(measured, method=simple, **where)
            with_setup = intervals.paired_by_round(r["single"], s["single"])
            rounds = _common(r["single"], r["double"], s["single"], s["double"])
            beyond = [(r["double"][k] - r["single"][k]) / (s["double"][k] - s["single"][k]) for k in rounds]
            # a round in which a writer's doubled pass was not the slower leaves no ratio to average
            without = (intervals.across_processes(beyond) if beyond and all(v > 0 for v in beyond)
                       else intervals.UNKNOWN)
            rows.append({"part": part, "method": simple, "threads": threads,
                         "entries": int(_at(measured, part=part, scale=1)["entries"].iloc[0]),
                         "root_setup": r["setup"], "root_share": r["share"], "simple_setup": s["setup"],
                         "simple_share": s["share"], "faster": with_setup,
                         "faster_verdict": intervals.at_least(with_setup, 1.0), "faster_without": without,
                         "faster_without_verdict": intervals.at_least(without, 1.0)})
    return pd.DataFrame(rows)


def size_rows(frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Seed 001's size table: MB per event in ROOT and in its simple format and their ratio
    for the seed's RECO, AOD and MiniAOD (100 events each), and this run's workloads at one
    thread on the target medium at N entries and, for writing.setup_parts, at 2N, each round's
    files the files of that round's passes (`ratio`: simple over ROOT, paired by round, with
    its interval, and its verdict on the seed's "larger": met when the whole interval is above 1),
    with ROOT's metadata share (the file less its baskets' bytes as the file counts them,
    TTree::GetZipBytes, over the file)."""
    rows = [{"who": f"seed, {r.format}", "events": seeds.WRITE_SIZE_EVENTS, "root_mb": r.root_mb_per_event,
             "simple_mb": r.simple_mb_per_event, "ratio": Estimate(r.size_ratio, math.nan, math.nan, 1),
             "verdict": None, "metadata": intervals.UNKNOWN} for r in SEED001.itertuples()]
    measured, medium = _per_round(frame), target_medium(params)
    for part in seed001_parts(params):
        root, simple = SETUP_METHODS[part]
        for scale in (1, 2):
            where = {"part": part, "medium": medium, "threads": 1, "scale": scale}
            root_bytes, simple_bytes = (_rounds(measured, "file_bytes", method=m, **where) for m in (root, simple))
            baskets = _rounds(measured, "basket_bytes", method=root, **where)
            rounds = _common(root_bytes, simple_bytes)
            if not rounds:
                continue
            events = int(_at(measured, method=root, **where)["entries"].iloc[0])
            ratio = intervals.paired_by_round(simple_bytes, root_bytes)
            shares = [1 - baskets[k] / root_bytes[k] for k in _common(root_bytes, baskets) if baskets[k] > 0]
            rows.append({"who": f"this run, {PART_LABELS[part]}, {LABELS[simple]}", "part": part, "events": events,
                         "root_mb": float(np.median([root_bytes[k] for k in rounds])) / events / 1e6,
                         "simple_mb": float(np.median([simple_bytes[k] for k in rounds])) / events / 1e6,
                         "ratio": ratio, "verdict": intervals.at_least(ratio, 1.0),
                         "metadata": intervals.across_processes(shares) if shares else intervals.UNKNOWN})
    return pd.DataFrame(rows)


def random_setup_rows(frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Seed 003's regime: the fixed cost per pass (set-up and the last flush; fixed_cost) of each
    random-doubles writer, uncompressed, per medium at one thread, as a share of
    its pass, and whether it stays under RANDOM_SETUP_SHARE (met: the whole interval below)."""
    if "random" not in params["setup_parts"] or "none" not in params["random_compressions"]:
        return pd.DataFrame(columns=["medium", "method", "threads", "setup", "share", "verdict"])
    measured, rows = _per_round(frame), []
    for medium in params["media"]:
        for method in params["random_methods"]:
            for threads in (1,):
                cost = fixed_cost(measured, part="random", method=method, medium=medium, compression="none",
                                  threads=threads)
                rows.append({"medium": medium, "method": method, "threads": threads, "setup": cost["setup"],
                             "share": cost["share"], "verdict": intervals.at_most(cost["share"], RANDOM_SETUP_SHARE)})
    return pd.DataFrame(rows)


def efficiency_target(table: pd.DataFrame, params: dict[str, Any]) -> dict[str, Any]:
    """The simple format's parallel efficiency at 2 threads on tmpfs with LZ4 (target: at least 85%),
    met, missed or inconclusive by its interval. `reason`, why it was not measured, a state the
    paper words (paper/sections/writing.tex): nosimple (the simple format is not among
    writing.event_methods), notmpfs (tmpfs is not among writing.event_media), compression
    (writing.event_compression is not LZ4), onethread (only max_threads, one, could be used);
    none where it was measured."""
    reason = None
    if "simple" not in params["event_methods"]:
        reason = "nosimple"
    elif "tmpfs" not in params["event_media"]:
        reason = "notmpfs"
    elif params["event_compression"] != "LZ4":
        reason = "compression"
    elif params["max_threads"] < 2:
        reason = "onethread"
    if reason:
        return {"measured": False, "reason": reason, "efficiency": float("nan"), "estimate": None,
                "verdict": intervals.Verdict.INCONCLUSIVE}
    row = one(table, part="events", method="simple", medium="tmpfs", threads=2)
    efficiency = estimate(row, "efficiency")
    return {"measured": True, "reason": "none", "efficiency": efficiency.value, "estimate": efficiency,
            "verdict": intervals.at_least(efficiency, EFFICIENCY_TARGET)}


def _fast_medium(params: dict[str, Any]) -> str:
    """The fast medium seed 003's claims are judged on: tmpfs, memory or disk, the first measured."""
    return next((m for m in ("tmpfs", "memory", "disk") if m in params["media"]), params["media"][0])


def compression_costs(table: pd.DataFrame, params: dict[str, Any], medium: str | None = None,
                      threads: int | None = None) -> dict[str, Estimate]:
    """Seed 003's "ZLIB and LZ4 much faster than LZMA, for the benefit of a higher compression
    ratio": TBufferMerger's random workload on `medium` (the fast one unless given) at `threads`
    (the most unless given), its time per pass with LZMA over ZLIB's (`LzmaOverZlib`) and over
    LZ4's (`LzmaOverLzFour`), and its output file with ZLIB and with LZ4 over LZMA's
    (`SizeZlibOverLzma`, `SizeLzFourOverLzma`: above 1 where LZMA compresses more), each paired
    round by round (the runs of one workload share rounds: measuring.groups); a compression not
    measured gives no figure."""
    medium = medium or _fast_medium(params)
    threads = threads or params["max_threads"]
    random = table[(table["part"] == "random") & (table["threads"] == threads)]
    rows = {c: one(random, method="tbuffermerger", medium=medium, compression=c) for c in ("LZMA", "ZLIB", "LZ4")}
    costs = {}
    for compression, name in (("ZLIB", "Zlib"), ("LZ4", "LzFour")):
        if rows["LZMA"] is not None and rows[compression] is not None:
            costs[f"LzmaOver{name}"] = intervals.paired_by_round(rows["LZMA"]["wall_by_round"],
                                                                 rows[compression]["wall_by_round"])
            costs[f"Size{name}OverLzma"] = intervals.paired_by_round(rows[compression]["bytes_by_round"],
                                                                     rows["LZMA"]["bytes_by_round"])
    return costs


def compression_share(table: pd.DataFrame, params: dict[str, Any]) -> Estimate:
    """Seed 001's "time in compression is too little to make appreciable difference" (MiniAOD, ROOT
    + IMT): the share of ROOT + IMT's one-thread time per pass on the data products that compressing
    them takes, (compressed - uncompressed) / compressed in each round (the two runs share rounds:
    measuring.plan's uncompressed reference), their mean with its t interval (intervals.mean_across:
    a share may come out near zero or below); UNKNOWN where the uncompressed run was not measured.
    `table`: the summary of every run, the reference's included."""
    objects = table[(table["part"] == "objects") & (table["method"] == "root_imt") & (table["threads"] == 1)
                    & (table["medium"] == target_medium(params))]
    compressed = one(objects, compression=params["event_compression"])
    uncompressed = one(objects, compression="none") if params["event_compression"] != "none" else None
    if compressed is None or uncompressed is None:
        return intervals.UNKNOWN
    with_, without = compressed["wall_by_round"], uncompressed["wall_by_round"]
    rounds = sorted(r for r in set(with_) & set(without) if with_[r] > 0 and math.isfinite(without[r]))
    return intervals.mean_across([(with_[r] - without[r]) / with_[r] for r in rounds]) if rounds else intervals.UNKNOWN


def uncompressed_speedup(table: pd.DataFrame, params: dict[str, Any]) -> Estimate:
    """Seed 001's "serialization of the C++ objects is still done sequentially": ROOT + IMT's
    speed-up writing the data products uncompressed (nothing for IMT to compress in parallel), its
    time per pass at one thread over its time at the most threads, paired round by round (the runs
    share rounds: measuring.plan's uncompressed reference runs, or the workload's own where it is
    written uncompressed); UNKNOWN where either was not measured or one thread is the most.
    `table`: the summary of every run, the references' included."""
    objects = table[(table["part"] == "objects") & (table["method"] == "root_imt") & (table["compression"] == "none")
                    & (table["medium"] == target_medium(params))]
    top = params["max_threads"]
    one_thread, most = one(objects, threads=1), one(objects, threads=top)
    if top <= 1 or one_thread is None or most is None:
        return intervals.UNKNOWN
    return intervals.paired_by_round(one_thread["wall_by_round"], most["wall_by_round"])


def media_ratio(table: pd.DataFrame, params: dict[str, Any], compression: str) -> Estimate:
    """Seed 003's "performance is highly dependent on output media; not when LZMA is used":
    TBufferMerger's time per pass of the random workload at the most threads with `compression`
    on the slow (throttled) medium over its time on the fast one, paired round by round (the media
    of one workload share rounds: measuring.groups); UNKNOWN where either was not measured."""
    random = table[(table["part"] == "random") & (table["method"] == "tbuffermerger")
                   & (table["threads"] == params["max_threads"]) & (table["compression"] == compression)]
    slow, fast = one(random, medium="slow"), one(random, medium=_fast_medium(params))
    if slow is None or fast is None or _fast_medium(params) == "slow":
        return intervals.UNKNOWN
    return intervals.paired_by_round(slow["wall_by_round"], fast["wall_by_round"])


# Seed 003's back-pressure claim holds where TBufferMerger's peak memory above the baseline on the
# slow medium exceeds BACK_PRESSURE_FACTOR times the fast medium's plus BACK_PRESSURE_MARGIN_MB (the
# study's rule since the claim was first tested; judged on the per-round excess, back_pressure).
BACK_PRESSURE_FACTOR = 1.5
BACK_PRESSURE_MARGIN_MB = 16.0


def peak_estimate(row: pd.Series) -> Estimate:
    """A run's peak memory above the baseline (MB) across its processes: the mean of one peak per
    round and its t interval (intervals.mean_across: a peak above the baseline may be near zero,
    where a geometric mean means nothing); rounds without a finite peak left out."""
    peaks = [v for v in row["rss_by_round"].values() if math.isfinite(v)]
    return intervals.mean_across(peaks) if peaks else intervals.UNKNOWN


def rntuple_versus_tbuffermerger(table: pd.DataFrame, params: dict[str, Any]) -> dict[str, Any]:
    """Seed 003's random workload at the most threads, TBufferMerger against RNTupleParallelWriter
    on each medium and compression: TBufferMerger's time over RNTuple's, paired round by round (the
    writers of one medium and compression ran in the same rounds; `ratios`), each interval at the
    Bonferroni level for the number of media and compressions (`level`: simultaneous intervals, so
    that the smallest and largest named afterwards, and the counts, are no winner's curse), how many
    of those lie wholly above 1 (`slower`: TBufferMerger takes longer), wholly below (`faster`) or
    hold 1 (`notseparated`), and each writer's largest peak memory above the baseline (MB,
    peak_estimate, on the medium and compression of its largest mean; `peaks`)."""
    top = params["max_threads"]
    random = table[(table["part"] == "random") & (table["threads"] == top)]
    writers = ("tbuffermerger", "rntuple")
    pairs, peaks = [], {w: [] for w in writers}
    for medium in params["media"]:
        for compression in params["random_compressions"]:
            rows = {w: one(random, method=w, medium=medium, compression=compression) for w in writers}
            for writer, row in rows.items():
                if row is not None:
                    peaks[writer].append(peak_estimate(row))
            if all(row is not None for row in rows.values()):
                pairs.append((rows["tbuffermerger"]["wall_by_round"], rows["rntuple"]["wall_by_round"]))
    level = intervals.bonferroni(len(pairs))
    ratios = [intervals.paired_by_round(tbm, rnt, level) for tbm, rnt in pairs]
    ratios = [r for r in ratios if math.isfinite(r.value)]
    said = [intervals.comparison(r) for r in ratios]
    largest = {w: max((p for p in found if math.isfinite(p.value)), key=lambda p: p.value, default=intervals.UNKNOWN)
               for w, found in peaks.items()}
    return {"ratios": ratios, "level": level, "slower": said.count("higher"), "faster": said.count("lower"),
            "notseparated": said.count("not separated"), "peaks": largest}


def back_pressure(table: pd.DataFrame, params: dict[str, Any]) -> dict[str, Any]:
    """Seed 003's "no back-pressure: memory grows when the medium cannot keep up" on this run:
    TBufferMerger's peak memory above baseline (MB, across the processes, peak_estimate) at the
    most threads on the slow medium (`slow`) against the fast one (`fast`, on `fast_medium`),
    uncompressed where measured (`compression`), and in each round the slow medium's peak less
    the bar it must clear there (BACK_PRESSURE_FACTOR times the fast one's of the same round, plus
    BACK_PRESSURE_MARGIN_MB), their mean with its t interval (`excess`, MB; the media of one
    workload share rounds, measuring.groups): `state` holds where that interval lies wholly above
    zero (memory grows); toolittle where it does not and a pass writes fewer MB (`data_mb`) than
    the slow medium's peak must rise above the fast one's to clear the bar (`needed_mb`, at the
    low end of the fast peak's interval: even the whole pass queued could not clear it, so no
    outcome of the run could show growth); else blocks
    where wholly below (the writers block instead), inconclusive where it holds zero (or fewer than
    two rounds have both peaks); notmeasured where it needs the slow medium and a fast one, nopeak
    where a medium's passes recorded no peak memory."""
    top, fast_medium = params["max_threads"], _fast_medium(params)
    random = table[(table["part"] == "random") & (table["method"] == "tbuffermerger")]
    compression = "none" if "none" in params["random_compressions"] else params["random_compressions"][0]
    slow_row = one(random, medium="slow", compression=compression, threads=top)
    fast_row = one(random, medium=fast_medium, compression=compression, threads=top)
    result = {"fast_medium": fast_medium, "compression": compression, "slow": intervals.UNKNOWN,
              "fast": intervals.UNKNOWN, "excess": intervals.UNKNOWN, "data_mb": math.nan, "needed_mb": math.nan}
    if slow_row is None or fast_row is None or fast_medium == "slow":
        return {**result, "state": "notmeasured"}
    slow, fast = peak_estimate(slow_row), peak_estimate(fast_row)
    if not (math.isfinite(slow.value) and math.isfinite(fast.value)):  # no pass read its peak (VmHWM)
        return {**result, "slow": slow, "fast": fast, "state": "nopeak"}
    slow_peaks, fast_peaks = slow_row["rss_by_round"], fast_row["rss_by_round"]
    both = sorted(r for r in set(slow_peaks) & set(fast_peaks)
                  if math.isfinite(slow_peaks[r]) and math.isfinite(fast_peaks[r]))
    bars = {r: BACK_PRESSURE_FACTOR * fast_peaks[r] + BACK_PRESSURE_MARGIN_MB for r in both}
    excess = intervals.mean_across([slow_peaks[r] - bars[r] for r in both]) if len(both) >= 2 else intervals.UNKNOWN
    data_mb = slow_row["raw_bytes"] / 1e6
    # the lowest bar the fast peak's interval allows: below even that, no outcome could show growth
    fast_low = fast.low if math.isfinite(fast.low) else fast.value
    needed_mb = (BACK_PRESSURE_FACTOR - 1) * fast_low + BACK_PRESSURE_MARGIN_MB
    state = ("holds" if excess.low > 0 else "toolittle" if data_mb < needed_mb else
             "blocks" if excess.high < 0 else "inconclusive")
    return {**result, "slow": slow, "fast": fast, "excess": excess, "state": state, "data_mb": data_mb,
            "needed_mb": needed_mb}


# Seed 003's conclusions, in the order of its table (seed003_claims; paper/sections/writing.tex
# words each one's states, the family WrtSeed<claim>: writing.report.seed003_table).
SEED003_CLAIMS = ("Scaling", "Compression", "Saturation", "BackPressure")
SEED003_LZMA_SLOWER = 2.0        # "ZLIB and LZ4 take much less time than LZMA": LZMA at least twice as long
SEED003_SATURATION_SHARE = 0.8   # "saturates any medium with a few threads": at least this share of its rate


def slow_medium_share(table: pd.DataFrame, params: dict[str, Any]) -> Estimate:
    """Seed 003's "saturates any medium with a few threads when not CPU bound": TBufferMerger's
    uncompressed write rate at the most threads on the slow (throttled) medium over that medium's
    rate (writing.slow_mb_s), across the rounds with its interval; UNKNOWN where not measured."""
    random = table[(table["part"] == "random") & (table["method"] == "tbuffermerger")]
    slow = (one(random, medium="slow", compression="none", threads=params["max_threads"])
            if "none" in params["random_compressions"] else None)
    return intervals.UNKNOWN if slow is None else rate(slow, slow["file_bytes"] / 1e6).scaled(1 / params["slow_mb_s"])


def _speedup_by_round(single: pd.Series, most: pd.Series) -> dict[int, float]:
    """A run's speed-up in each round: its time at one thread over its time at the most threads
    (table rows of one thread count each), the two from the same round."""
    one_thread, most_threads = single["wall_by_round"], most["wall_by_round"]
    return {k: one_thread[k] / most_threads[k] for k in set(one_thread) & set(most_threads) if most_threads[k] > 0}


def seed003_claims(table: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Seed 003's conclusions against this run, one row each: `claim` (SEED003_CLAIMS), its `state`
    and the `numbers` it rests on (a dict; the section words each state, writing.report.seed003_table):
    - Scaling ("scales well when not I/O bound, as with LZMA"): TBufferMerger's speed-up at the
      most threads on the fast medium per compression (`speedups`, Estimates), LZMA's over each
      other one's paired by round (the compressions of one medium share rounds): holds where every
      such ratio's interval lies above 1, notholds where one lies at or below 1 (`beaten`: those
      compressions scale as well or better), cannottell otherwise.
    - Compression ("ZLIB and LZ4 take much less time than LZMA"): LZMA's time at one thread over
      ZLIB's and LZ4's, paired by round: holds where both intervals lie at or above
      SEED003_LZMA_SLOWER, notholds where one lies below it, cannottell otherwise; `over_zlib`,
      `over_lz4`: the two ratios.
    - Saturation ("saturates any medium with a few threads when not CPU bound"): the share of the
      slow medium's rate reached uncompressed at the most threads (`share`, an Estimate; `mb_s`,
      `medium_mb_s`) against SEED003_SATURATION_SHARE (intervals.at_least): holds, notholds or
      cannottell.
    - BackPressure: back_pressure's state (holds, toolittle, blocks, inconclusive, nopeak), its
      peaks (`slow`, `fast`, Estimates in MB) and the MB a pass writes and would have to queue.
    Each is notmeasured where this run lacks what it needs; every one also gives `threads` (the
    most) and `medium` (the fast one, or the slow one for Saturation)."""
    top = params["max_threads"]
    random = table[(table["part"] == "random") & (table["method"] == "tbuffermerger")]
    fast_medium = _fast_medium(params)
    rows = []

    def row(claim: str, state: str, **numbers: Any) -> None:
        rows.append({"claim": claim, "state": state, "numbers": {"threads": top, "medium": fast_medium, **numbers}})

    # 1. Scaling is good when the work is CPU-bound (LZMA), not when it is I/O-bound.
    # The compressions of one medium share rounds (measuring.groups): LZMA's speed-up over each
    # other one's pairs by round, (t1 / tN of LZMA) over (t1 / tN of the other) in each round.
    runs = {c: (one(random, medium=fast_medium, compression=c, threads=1),
                one(random, medium=fast_medium, compression=c, threads=top)) for c in params["random_compressions"]}
    runs = {c: pair for c, pair in runs.items() if all(r is not None for r in pair)}
    speedups = {c: estimate(most, "speedup") for c, (_, most) in runs.items()}
    if top < 2 or "LZMA" not in runs or len(runs) < 2:
        row("Scaling", "notmeasured")
    else:
        lzma = _speedup_by_round(*runs["LZMA"])
        over = {c: intervals.paired_by_round(lzma, _speedup_by_round(*pair)) for c, pair in runs.items() if c != "LZMA"}
        beaten = [c for c, ratio in over.items() if ratio.high <= 1]
        row("Scaling", "holds" if all(ratio.low > 1 for ratio in over.values()) else
            "notholds" if beaten else "cannottell", speedups=speedups, beaten=beaten)
    # 2. LZMA costs far more time than ZLIB and LZ4: its time over theirs at one thread, paired by round.
    costs = compression_costs(table, params, fast_medium, threads=1)
    if not {"LzmaOverZlib", "LzmaOverLzFour"} <= set(costs):
        row("Compression", "notmeasured")
    else:
        over = [costs["LzmaOverZlib"], costs["LzmaOverLzFour"]]
        slower = SEED003_LZMA_SLOWER
        row("Compression", "holds" if all(r.low >= slower for r in over) else
            "notholds" if any(r.high < slower for r in over) else "cannottell",
            over_zlib=over[0].value, over_lz4=over[1].value, threads=1)
    # 3. A slow medium saturates with a few threads when not CPU-bound.
    share = slow_medium_share(table, params)
    if not math.isfinite(share.value):
        row("Saturation", "notmeasured", medium="slow")
    else:
        row("Saturation", {Verdict.MET: "holds", Verdict.MISSED: "notholds", Verdict.INCONCLUSIVE: "cannottell"}[
            intervals.at_least(share, SEED003_SATURATION_SHARE)], medium="slow", share=share,
            mb_s=share.value * params["slow_mb_s"], medium_mb_s=params["slow_mb_s"])
    # 4. Back-pressure: memory grows when the medium cannot keep up.
    pressure = back_pressure(table, params)
    row("BackPressure", pressure["state"], medium=pressure["fast_medium"], compression=pressure["compression"],
        slow=pressure["slow"], fast=pressure["fast"], data_mb=pressure["data_mb"], needed_mb=pressure["needed_mb"])
    return pd.DataFrame(rows)
