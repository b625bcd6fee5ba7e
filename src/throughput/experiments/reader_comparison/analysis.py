"""From the raw runs to numbers: the readers' agreement (with each other and
with the inputs' reference values), summaries and rates, the readers that
could not read an input, the bytes each reader read, ratios, the targets, the
rate timeline, the collections' shapes and the warm-up factor."""
from __future__ import annotations

import itertools
import math
import zipfile
from typing import Any

import numpy as np
import pandas as pd

from ...core import intervals, noise
from ...inputs import references
from ...core.intervals import Estimate, Verdict
from .inputs import collection_attributes, tree_metadata
from .spec import main_sets
from .vocabulary import (COLLECTIONS, LAYOUTS, NUMPY_TARGET, TIMELINE_READERS, TREE_CPP_METHODS, branch_name, collection_of,
                         set_tree, tree_name)

# --- validation ----------------------------------------------------------------------------------

def check_agreement(frame: pd.DataFrame) -> pd.DataFrame:
    """Every pass of every reader of the same files and branch must give the same
    items, events and checksum (rootreadspeed reports none and is left out).
    Returns one row per (layout, compression, set's files, branch) with the agreed
    values; raises AssertionError naming the readers that disagree."""
    if "checksum" not in frame:  # only rootreadspeed timed a pass (every reader that checksums failed)
        return pd.DataFrame(columns=["set", "branch", "items", "events", "checksum", "readers"])
    timing = frame[(frame["record"] == "timing") & frame["checksum"].notna()]
    rows, problems = [], []
    for (data, branch), group in timing.groupby([timing["set"], "branch"]):
        seen = group.groupby("reader")[["items", "events", "checksum"]].agg(lambda s: sorted(set(s)))
        distinct = {(tuple(r["items"]), tuple(r["events"]), tuple(r["checksum"])) for _, r in seen.iterrows()}
        if len(distinct) != 1 or any(len(v) != 1 for v in next(iter(distinct))):
            detail = "; ".join(f"{reader}: {r['items']} items, {r['events']} events, checksum {r['checksum']}"
                               for reader, r in seen.iterrows())
            problems.append(f"readers disagree on {data} branch {branch}: {detail}")
            continue
        first = group.iloc[0]
        rows.append({"set": data, "branch": branch, "items": int(first["items"]), "events": int(first["events"]),
                     "checksum": first["checksum"], "readers": len(seen)})
    if problems:
        raise AssertionError("\n".join(problems))
    return pd.DataFrame(rows)


def check_references(agreed: pd.DataFrame, inputs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """What the readers agreed on must be what each input holds: its reference
    values, taken when the file was made (a real file: when first registered),
    kept outside it (throughput.inputs.references). Readers that all read the same
    damaged bytes agree with each other, not with this. Returns the rows
    compared; raises AssertionError naming each input set, branch and file."""
    rows, problems = [], []
    for _, row in agreed.iterrows():
        spec = inputs[row["set"]]
        if spec["role"] == "real":  # registered once, the first time the study reads it
            for path in spec["root"]:
                references.register(path, tree_name(spec["layout"]), [branch_name(spec["layout"], c)
                                                                     for c in LAYOUTS[spec["layout"]][2]])
        want = references.expected(spec["root"], row["branch"])
        got = {"entries": int(row["events"]), "items": int(row["items"]), "checksum": row["checksum"]}
        if got != want:
            problems.append(f"readers of {row['set']} branch {row['branch']} agree on {got}, but the files "
                            f"({', '.join(spec['root'])}) held {want} when they were made: damaged input?")
        rows.append({"set": row["set"], "branch": row["branch"], **want, "matches": got == want})
    if problems:
        raise AssertionError("\n".join(problems))
    return pd.DataFrame(rows)


# --- summaries -----------------------------------------------------------------------------------

def reading_time(frame: pd.DataFrame) -> pd.Series:
    """Each pass's reading part: its wall time less the time spent opening its files (what the
    tables print; a reader that does not time its opening apart reads whole)."""
    opening = frame["open_s"].fillna(0) if "open_s" in frame else 0.0
    return frame["wall_s"] - opening


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median (min, max) over the measured passes per set, cache, reader and branch,
    their spread (`cv`, `noisy`: throughput.core.noise) and the load they saw, with kHz
    (events/s/1e3 per process), MHz of values, ns per value, MB/s of compressed and
    uncompressed bytes; rootreadspeed gets events and items from the other
    readers of the same files."""
    timing = frame[(frame["record"] == "timing") & ~frame["warmup"].astype(bool)].copy()
    # recorded by the C++ readers only (read_branch): the baskets limit's checksum time
    # (-1: not timed apart), the rate samples taken and the cost of one clock read; the bytes read,
    # by the C++ and Python readers (none where only the Java readers and rootreadspeed ran)
    for column in ("checksum_s", "samples", "clock_read_s", "bytes_compressed", "bytes_uncompressed"):
        timing[column] = timing[column] if column in timing else np.nan
    timing["checksum_s"] = timing["checksum_s"].where(timing["checksum_s"] >= 0)
    by = ["set", "role", "layout", "compression", "cache", "reader", "collection", "branch"]
    table = (timing.groupby(by, sort=False)
             .agg(wall_s=("wall_s", "median"), wall_min=("wall_s", "min"), wall_max=("wall_s", "max"),
                  cpu_s=("cpu_s", "median"), open_s=("open_s", "median"), events=("events", "max"),
                  items=("items", "max"), bytes_compressed=("bytes_compressed", "max"),
                  bytes_uncompressed=("bytes_uncompressed", "max"), files=("files", "max"),
                  load_avg_1min=("load_avg_1min", "mean"), others_cores=("others_cores", "max"),
                  cv=("cv", "max"), noisy=("noisy", "any"), passes=("wall_s", "count"),
                  checksum_s=("checksum_s", "median"), samples=("samples", "max"),
                  clock_read_s=("clock_read_s", "median"))
             .reset_index())
    # rootreadspeed reports no values: its events and items are those every other reader agreed on.
    counts = table.groupby(["set", "branch"])[["events", "items"]].transform("max")
    table[["events", "items"]] = table[["events", "items"]].fillna(counts)
    # Each process's (round's) best pass, whole and reading part: what paired ratios pair (the
    # reader processes of one set and cache state ran in the same rounds, throughput.core.experiment).
    if "round" not in timing:  # results from before rounds were recorded: each pass its own
        timing["round"] = timing.groupby(by, sort=False).cumcount()
    timing["read_part_s"] = reading_time(timing)
    best = timing.groupby([*by, "round"], sort=False)[["wall_s", "read_part_s", "open_s"]].min()
    by_round = {key: group.droplevel(by) for key, group in best.groupby(level=by, sort=False)}
    # the reader's own work per pass in each process and its reading time, each the median there
    # (what own_work_share sets against each other): the checksum timed apart and the rate
    # samples' clock reads
    timing["sampling_s"] = timing["samples"] * timing["clock_read_s"]
    own = timing.groupby([*by, "round"], sort=False)[["checksum_s", "sampling_s", "read_part_s"]].median()
    own_by_round = {key: group.droplevel(by) for key, group in own.groupby(level=by, sort=False)}
    keys = list(table[by].itertuples(index=False, name=None))
    table["wall_by_round"] = [by_round[key]["wall_s"].to_dict() for key in keys]
    table["read_by_round"] = [by_round[key]["read_part_s"].to_dict() for key in keys]
    table["open_by_round"] = [by_round[key]["open_s"].to_dict() for key in keys]
    for part, column in (("checksum", "checksum_s"), ("sampling", "sampling_s"), ("read_median", "read_part_s")):
        # a round that did not record it has none
        table[f"{part}_by_round"] = [own_by_round[key][column].dropna().to_dict() for key in keys]
    return _rates(table)


def paired_rate_ratio(a: pd.Series, b: pd.Series, part: str = "read",
                      confidence: float = intervals.CONFIDENCE) -> Estimate:
    """Summary row `a`'s rate per value over row `b`'s, paired round by round (`part`: "read",
    the reading part, or "wall", whole passes) over the rounds both timed, with its interval
    (at `confidence`); without such a round, NaN.

    rootreadspeed's time of a pass is a difference of two times (processes.run_rootreadspeed),
    which on a pass shorter than the tool's own noise is zero or negative in some rounds. Those
    rounds are kept, not dropped: dropping them keeps the rounds where rootreadspeed was slower (a
    truncated estimator, biased toward "at least as fast as rootreadspeed"). Where a round has
    such a time, the ratio is the arithmetic mean of the per-round ratios, items_a t_b / (items_b
    t_a), linear in the difference and so unbiased, with its t interval (intervals.mean_across)."""
    times_a, times_b = a[f"{part}_by_round"], b[f"{part}_by_round"]
    rounds = sorted(r for r in set(times_a) & set(times_b) if math.isfinite(times_a[r]) and math.isfinite(times_b[r]))
    if any(times_a[r] <= 0 for r in rounds) or not any(times_b[r] <= 0 for r in rounds):
        # the usual geometric mean over the rounds both timed (a reader's own time is never a difference)
        def rates(times: dict[Any, float], items: float) -> dict[Any, float]:
            return {r: items / t if t > 0 else math.nan for r, t in times.items()}

        return intervals.paired_by_round(rates(times_a, a["items"]), rates(times_b, b["items"]), confidence)
    per_round = [a["items"] * times_b[r] / (b["items"] * times_a[r]) for r in rounds]
    if len(per_round) < 2:
        return Estimate(per_round[0], math.nan, math.nan, 1)
    return intervals.mean_across(per_round, confidence)


def _rates(table: pd.DataFrame) -> pd.DataFrame:
    """Rates of whole passes ("with opening") and of their reading part (wall
    time minus the time spent opening files; rootreadspeed has no such split)."""
    table = table.copy()
    # a rate has no meaning where rootreadspeed's median pass is below its own noise (<= 0 s)
    table["wall_s"] = table["wall_s"].where(table["wall_s"] > 0)
    table["read_s"] = table["wall_s"] - table["open_s"].fillna(0)
    table["khz"] = table["events"] / table["wall_s"] / 1e3
    table["khz_min"] = table["events"] / table["wall_max"] / 1e3
    table["khz_max"] = table["events"] / table["wall_min"] / 1e3
    table["khz_read"] = table["events"] / table["read_s"] / 1e3
    table["mhz_items"] = table["items"] / table["wall_s"] / 1e6
    table["mhz_items_read"] = table["items"] / table["read_s"] / 1e6
    table["ns_per_item_read"] = table["read_s"] / table["items"] * 1e9
    # the reader's own work per value: the checksum (timed apart by the baskets limit
    # only) and the rate samples (one clock read each); NaN where not recorded
    for column in ("checksum_s", "samples", "clock_read_s"):
        if column not in table:
            table[column] = np.nan
    table["checksum_ns_per_item"] = table["checksum_s"] / table["items"] * 1e9
    table["sampling_ns_per_item"] = table["samples"] * table["clock_read_s"] / table["items"] * 1e9
    # A file whose branches record no byte counts (fTotBytes 0, e.g. the real NanoAOD file's
    # baskets kept in the TTree itself) gives no byte rate, not 0 MB/s.
    for kind in ("compressed", "uncompressed"):
        recorded = table[f"bytes_{kind}"].where(table[f"bytes_{kind}"] > 0)
        table[f"mb_s_{kind}"] = recorded / table["read_s"] / 1e6
    return table


UNREAD_RECORDS = {"cannot_read": "cannot read", "failed": "failed", "not_measured": "not measured"}


def cannot_read(frame: pd.DataFrame) -> pd.DataFrame:
    """Readers that could not read an input (by design or by an error), or were
    not measured, with the reason."""
    columns = ["set", "layout", "compression", "cache", "reader", "branch", "record", "message"]
    if "message" not in frame:
        return pd.DataFrame(columns=columns)
    return frame[frame["record"].isin(list(UNREAD_RECORDS))][columns]


def numpy_bytes(paths: list[str], branch: str) -> tuple[int, int]:
    """Compressed and uncompressed size of one array in Numpy files."""
    compressed = uncompressed = 0
    for path in paths:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo(f"{branch}.npy")
            compressed += info.compress_size
            uncompressed += info.file_size
    return compressed, uncompressed


def value_branch_bytes(paths: list[str], tree: str, branch: str) -> tuple[int, int]:
    """Compressed and uncompressed bytes of one branch (what uproot and laurelin read)."""
    compressed = uncompressed = 0
    for path in paths:
        b = tree_metadata(path, tree)[branch]
        compressed += b.compressed_bytes
        uncompressed += b.uncompressed_bytes
    return compressed, uncompressed


def fill_bytes(table: pd.DataFrame, inputs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Bytes for the readers whose process does not report them (uproot, laurelin, Numpy)."""
    table = table.copy()
    for index, row in table[table["bytes_compressed"].isna()].iterrows():
        spec = inputs[row["set"]]
        if row["reader"] == "numpy":
            compressed, uncompressed = numpy_bytes(spec["numpy"], row["branch"])
        else:
            compressed, uncompressed = value_branch_bytes(spec["root"], set_tree(spec), row["branch"])
        table.loc[index, ["bytes_compressed", "bytes_uncompressed"]] = [compressed, uncompressed]
    return _rates(table)


def whole_pass_khz(row: pd.Series) -> Estimate:
    """A summary row's rate of whole passes (opening included) in kHz, across its processes."""
    return intervals.across_timed(row["events"] / t / 1e3 if t > 0 else math.nan
                                  for t in row["wall_by_round"].values())


def summary_row(table: pd.DataFrame, set_name: str, cache: str, reader: str, branch: str) -> pd.Series | None:
    """The summary row of one reader, branch and cache state of an input set; None where not measured."""
    rows = table[(table["set"] == set_name) & (table["cache"] == cache) & (table["reader"] == reader)
                 & (table["branch"] == branch)]
    return rows.iloc[0] if len(rows) == 1 else None


def cold_over_warm(table: pd.DataFrame, set_name: str, reader: str, branch: str) -> Estimate:
    """`reader`'s whole-pass rate with a cold page cache over its rate with a warm one: the two
    cache states are separate groups (not the same rounds), so the ratio is unpaired
    (intervals.unpaired_ratio); UNKNOWN where either was not measured."""
    rows = {cache: summary_row(table, set_name, cache, reader, branch) for cache in ("cold", "warm")}
    if any(row is None for row in rows.values()):
        return intervals.UNKNOWN
    rates = {cache: [row["events"] / t for t in row["wall_by_round"].values() if t > 0] for cache, row in rows.items()}
    if not all(rates.values()):
        return intervals.UNKNOWN
    return intervals.unpaired_ratio(rates["cold"], rates["warm"])


def opening_ms(table: pd.DataFrame, set_name: str, reader: str, share: bool = False) -> Estimate:
    """Milliseconds `reader` takes to open one file of `set_name` and find the branch (warm
    cache), or with `share` the opening's share of a whole pass: in each process the median over
    its branches, then across the processes."""
    rows = table[(table["set"] == set_name) & (table["cache"] == "warm") & (table["reader"] == reader)]
    per_round: dict[Any, list[float]] = {}
    for _, row in rows.iterrows():
        for round_index, seconds in row["open_by_round"].items():
            value = seconds / row["wall_by_round"][round_index] if share else seconds / row["files"] * 1e3
            per_round.setdefault(round_index, []).append(value)
    return intervals.across_timed(float(np.median(values)) for values in per_round.values())


def _rate(table: pd.DataFrame, set_name: str, cache: str, reader: str, branch: str, column: str) -> float:
    row = summary_row(table, set_name, cache, reader, branch)
    return float(row[column]) if row is not None else float("nan")


def ratios(table: pd.DataFrame, max_half_width: float = noise.Settings.max_half_width) -> pd.DataFrame:
    """Each reader's reading rate per value against the columnar C++ reader and
    the Numpy baseline, and its whole-pass rate against rootreadspeed's (which
    has no opening/reading split), on the same files and branch, in the same run;
    each paired round by round with its interval (`vs_<reference>_low`, `_high`: the readers of
    one set and cache state ran in the same rounds); `vs_<reference>_noisy` when the printed
    ratio's own interval is wider than `max_half_width` either side (the noise section's limit:
    a ratio is judged by the interval it is printed with, not by its sides' runs, whose common
    drift the pairing cancels)."""
    out = table.copy()
    by_key = {(r["set"], r["cache"], r["reader"], r["branch"]): r for _, r in table.iterrows()}
    for reference, part in (("columnar", "read"), ("numpy", "read"), ("rootreadspeed", "wall")):
        found = [by_key.get((row["set"], row["cache"], reference, row["branch"])) for _, row in table.iterrows()]
        estimates = [paired_rate_ratio(row, ref, part) if ref is not None else intervals.UNKNOWN
                     for (_, row), ref in zip(table.iterrows(), found)]
        out[f"vs_{reference}"] = [e.value for e in estimates]
        out[f"vs_{reference}_low"] = [e.low for e in estimates]
        out[f"vs_{reference}_high"] = [e.high for e in estimates]
        out[f"vs_{reference}_noisy"] = [noise.Settings(max_half_width=max_half_width).is_noisy(e.relative_half_width)
                                        for e in estimates]
    return out


def rate_estimate(row: pd.Series, amount: float, part: str = "read") -> Estimate:
    """`amount` per second of a summary row's passes (`part`: "read", the reading part, or
    "wall", whole passes), across its processes (rounds) with its interval; NaN where no round
    was timed (rootreadspeed on a pass shorter than its own noise)."""
    time = intervals.across_timed(row[f"{part}_by_round"].values())
    if not time.processes or not (math.isfinite(amount) and amount > 0):  # no byte count recorded: no rate, not 0
        return intervals.UNKNOWN
    return time.inverted(amount)


# The section's figures that decide claims of the ledger and so may get rounds beyond the base ones
# (measuring.deciding_claims): each a reader's slowdown against the columnar reader on the
# MiniAOD-like set's timeline branch, warm, paired round by round.
DECIDING_FIGURES = {"RcRootFourJVsCpp": "root4j", "RcDrawVsColumnar": "draw", "RcCmsswVsColumnar": "cmssw"}


def slowdown(table: pd.DataFrame, set_name: str, branch: str, reader: str,
             confidence: float = intervals.CONFIDENCE) -> Estimate:
    """How many times slower `reader` reads `branch` of `set_name` than the columnar reader (the
    columnar reader's warm rate over `reader`'s, paired round by round, its interval at `confidence`)."""
    ratio = warm_paired_ratio(table, set_name, branch, reader, "columnar", confidence=confidence)
    return ratio.inverted() if ratio.processes else ratio


def warm_paired_ratio(table: pd.DataFrame, set_name: str, branch: str, a: str | None, b: str,
                      part: str = "read", confidence: float = intervals.CONFIDENCE) -> Estimate:
    """Reader `a`'s warm rate over reader `b`'s on one branch of one set (paired_rate_ratio, its
    interval at `confidence`); NaN where either was not measured there."""
    def row(reader: str | None) -> pd.Series | None:
        found = table[(table["set"] == set_name) & (table["cache"] == "warm") & (table["reader"] == reader)
                      & (table["branch"] == branch)]
        return found.iloc[0] if len(found) == 1 else None

    rows = row(a), row(b)
    return paired_rate_ratio(*rows, part, confidence) if all(r is not None for r in rows) else intervals.UNKNOWN


def fastest_against(table: pd.DataFrame, set_name: str, branch: str, candidates: list[str],
                    reference: str, part: str = "wall") -> tuple[str | None, Estimate, Verdict | None]:
    """Whether the fastest of `candidates` is at least as fast as `reference`, without the winner's
    curse: rather than the fastest by point value tested on the rounds that chose it, every
    candidate's paired ratio to the reference is tested, each interval at the Bonferroni level
    1 - (1 - CONFIDENCE)/k for k candidates (simultaneous intervals: for this "some candidate"
    claim, Holm's first step is the same test). Met when some candidate's interval lies at or
    above 1, missed when every one lies below, inconclusive otherwise. Returns the candidate
    named (where met, the one of those at or above 1 with the largest lower bound; otherwise the
    largest ratio: a lower bound alone would name a slow reader whose narrow interval near zero
    beats a fast one's wide interval from a noisy reference), its ratio at that level and the
    verdict (None, UNKNOWN, None where no candidate was measured against the reference)."""
    level = intervals.bonferroni(len(candidates))
    ratios = {c: warm_paired_ratio(table, set_name, branch, c, reference, part, level) for c in candidates}
    ratios = {c: r for c, r in ratios.items() if math.isfinite(r.value)}
    if not ratios:
        return None, intervals.UNKNOWN, None
    verdicts = [intervals.at_least(r, 1.0) for r in ratios.values()]
    verdict = (Verdict.MET if Verdict.MET in verdicts else
               Verdict.MISSED if all(v is Verdict.MISSED for v in verdicts) else Verdict.INCONCLUSIVE)
    above = [c for c in ratios if intervals.at_least(ratios[c], 1.0) is Verdict.MET]
    best = (max(above, key=lambda c: (ratios[c].low, ratios[c].value)) if above
            else max(ratios, key=lambda c: ratios[c].value))
    return best, ratios[best], verdict


def rank_correlation(x: list[float], y: list[float]) -> tuple[float, float, float]:
    """Spearman's rank correlation of x and y and its exact one-sided p-values (the share of
    the orderings of y whose correlation is at least, or at most, the observed one): with a
    handful of particle types, the usual approximations do not hold. No ties expected."""
    rx, ry = pd.Series(x).rank().to_numpy(), pd.Series(y).rank().to_numpy()
    rho = float(np.corrcoef(rx, ry)[0, 1])
    others = np.array([np.corrcoef(rx, order)[0, 1] for order in itertools.permutations(ry)])
    return rho, float(np.mean(others >= rho - 1e-12)), float(np.mean(others <= rho + 1e-12))


def layout_targets(table: pd.DataFrame, params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """`targets` of the main comparison's two layouts on the timeline's branch, {"MiniAOD-like": ...,
    "NanoAOD-like": ...}: computed once per run (entry.measure), for the figure and the macros."""
    collection = params["timeline_collection"]
    return {label: targets(table, set_name, branch_name(layout, collection))
            for label, set_name, layout in zip(("MiniAOD-like", "NanoAOD-like"), main_sets(params["compression"]),
                                               ("aod", "nanoaod"))}


def targets(table: pd.DataFrame, set_name: str, branch: str) -> dict[str, Any]:
    """The issue's targets, measured in one run: the columnar reader's reading
    rate per value >= 95% of the Numpy baseline's, and the fastest C++ TTree
    reader's whole-pass rate >= rootreadspeed's on the same branch; each a paired
    ratio (an Estimate) with its verdict, met, missed or inconclusive by its interval."""
    rate = lambda reader, column="mhz_items_read": _rate(table, set_name, "warm", reader, branch, column)  # noqa: E731
    cpp = {m: rate(m, "mhz_items") for m in TREE_CPP_METHODS}
    cpp = {m: v for m, v in cpp.items() if not math.isnan(v)}
    # every C++ method against rootreadspeed at once (no winner picked by point value, then tested
    # on the rounds that picked it): the one named is the best supported, its interval simultaneous
    fastest, rrs, rrs_verdict = fastest_against(table, set_name, branch, list(cpp), "rootreadspeed")

    # paired round by round: the reader processes of one set ran in the same rounds
    numpy = warm_paired_ratio(table, set_name, branch, "columnar", "numpy", "read")
    numpy_with_open = warm_paired_ratio(table, set_name, branch, "columnar", "numpy", "wall")
    baskets_numpy = warm_paired_ratio(table, set_name, branch, "baskets", "numpy", "read")
    ns = lambda reader: ns_per_value(summary_row(table, set_name, "warm", reader, branch))  # noqa: E731
    return {"set": set_name, "branch": branch,
            "columnar_mhz": rate("columnar"), "numpy_mhz": rate("numpy"), "numpy": numpy, "numpy_ratio": numpy.value,
            "numpy_with_open": numpy_with_open, "numpy_ratio_with_open": numpy_with_open.value,
            # ns per value across the processes, with their intervals (the split below: medians)
            "columnar_ns": ns("columnar"), "numpy_ns": ns("numpy"), "baskets_ns": ns("baskets"),
            "per_entry": per_entry_share(table, set_name, branch), "own_work": own_work_share(table, set_name, branch),
            "numpy_verdict": intervals.at_least(numpy, NUMPY_TARGET), "fastest_cpp": fastest,
            "fastest_cpp_mhz": cpp.get(fastest, float("nan")), "rootreadspeed_mhz": rate("rootreadspeed", "mhz_items"),
            "rootreadspeed": rrs, "rootreadspeed_ratio": rrs.value,
            "rootreadspeed_verdict": rrs_verdict if rrs_verdict is not None else intervals.at_least(rrs, 1.0),
            "rootreadspeed_candidates": len(cpp),
            "columnar_ns_per_item": _rate(table, set_name, "warm", "columnar", branch, "ns_per_item_read"),
            "numpy_ns_per_item": _rate(table, set_name, "warm", "numpy", branch, "ns_per_item_read"),
            # the limit: ROOT's baskets read and decompressed, no per-entry call; the columnar
            # reader's time above it is its per-entry calls
            "baskets_ns_per_item": _rate(table, set_name, "warm", "baskets", branch, "ns_per_item_read"),
            **_columnar_split(table, set_name, branch),
            "baskets_numpy": baskets_numpy, "baskets_numpy_ratio": baskets_numpy.value,
            "per_event": _rate(table, set_name, "warm", "columnar", branch, "items")
            / _rate(table, set_name, "warm", "columnar", branch, "events"),
            "columnar_open_share": _rate(table, set_name, "warm", "columnar", branch, "open_s")
            / _rate(table, set_name, "warm", "columnar", branch, "wall_s")}


def _columnar_split(table: pd.DataFrame, set_name: str, branch: str) -> dict[str, float]:
    """Where the columnar reader's reading time goes, as shares of it that add up to 1, from
    the baskets limit measured beside it (ROOT reads and decompresses the same baskets,
    checksums the values where they lie, no per-entry call):
    - per_entry_share: its time above the limit, less the samples it takes beyond the
      limit's (it checks per event, the limit per basket);
    - checksum_share: the checksum, timed apart inside the limit (every reader computes it,
      the Numpy baseline too);
    - sampling_share: its rate samples, one clock read each (the cost of a read measured in
      its process);
    - baskets_share: the rest of the limit, ROOT reading and decompressing the baskets."""
    ns = lambda reader, column: _rate(table, set_name, "warm", reader, branch, column)  # noqa: E731
    columnar = ns("columnar", "ns_per_item_read")
    sampling, sampling_limit = ns("columnar", "sampling_ns_per_item"), ns("baskets", "sampling_ns_per_item")
    extra_sampling = _extra_sampling_ns(table, set_name, branch)
    checksum = ns("baskets", "checksum_ns_per_item")
    limit = ns("baskets", "ns_per_item_read")
    return {"per_entry_share": (columnar - limit - extra_sampling) / columnar,
            "checksum_share": checksum / columnar, "sampling_share": sampling / columnar,
            "baskets_share": (limit - checksum - (0.0 if math.isnan(sampling_limit) else sampling_limit)) / columnar}


def _extra_sampling_ns(table: pd.DataFrame, set_name: str, branch: str) -> float:
    """The rate samples per value the columnar reader takes beyond the baskets limit's (it checks per
    event, the limit per basket), in ns per value; 0 where either did not record them."""
    ns = lambda reader: _rate(table, set_name, "warm", reader, branch, "sampling_ns_per_item")  # noqa: E731
    extra = ns("columnar") - ns("baskets")
    return 0.0 if math.isnan(extra) else extra


def per_entry_share(table: pd.DataFrame, set_name: str, branch: str) -> Estimate:
    """The share of the columnar reader's reading time that is its per-entry calls (_columnar_split's
    per_entry_share), paired round by round: one minus the baskets limit's reading time (plus the rate
    samples the columnar reader takes beyond it) over the columnar reader's, the two measured in the same
    rounds (intervals.paired_by_round), with its interval; UNKNOWN where either was not measured."""
    columnar, limit = (summary_row(table, set_name, "warm", reader, branch) for reader in ("columnar", "baskets"))
    if columnar is None or limit is None:
        return intervals.UNKNOWN
    extra_s = _extra_sampling_ns(table, set_name, branch) * columnar["items"] / 1e9
    ratio = intervals.paired_by_round({r: t + extra_s for r, t in limit["read_by_round"].items()},
                                      columnar["read_by_round"])
    return ratio.one_less()


def own_work_share(table: pd.DataFrame, set_name: str, branch: str) -> Estimate:
    """The share of the columnar reader's reading time that is its own work (_columnar_split's
    checksum_share plus sampling_share), round by round: the baskets limit's checksum, timed apart
    on the same values, plus the columnar reader's rate samples, over its reading time, each per
    value and from the same round (each the median of that process's passes); their mean across
    the rounds with its t interval (a share near zero: intervals.mean_across). UNKNOWN where
    either reader, or a round with both, is missing."""
    columnar, limit = (summary_row(table, set_name, "warm", reader, branch) for reader in ("columnar", "baskets"))
    if columnar is None or limit is None or not (columnar["items"] > 0 and limit["items"] > 0):
        return intervals.UNKNOWN
    # medians of each process's passes on both sides of the share (read_by_round holds its best pass)
    checksum, sampling = limit["checksum_by_round"], columnar["sampling_by_round"]
    shares = [(checksum[r] / limit["items"] + sampling[r] / columnar["items"]) / (t / columnar["items"])
              for r, t in columnar["read_median_by_round"].items() if r in checksum and r in sampling and t > 0]
    return intervals.mean_across(shares) if shares else intervals.UNKNOWN


def ns_per_value(row: pd.Series | None) -> Estimate:
    """A summary row's reading time per value in ns, across its processes (rounds) with its interval;
    UNKNOWN where not measured or no round was timed."""
    if row is None or not row["items"] > 0:
        return intervals.UNKNOWN
    time = intervals.across_timed(row["read_by_round"].values())
    return time.scaled(1e9 / row["items"]) if time.processes else intervals.UNKNOWN


def timeline(frame: pd.DataFrame, set_name: str, branch: str,
             readers: tuple[str, ...] = TIMELINE_READERS, round_: int = 0) -> pd.DataFrame:
    """ns per value between consecutive samples, against the values read since the
    process started (all passes of that reader's process of round `round_` in order,
    warm-up included: each round of the interleaving is a process of its own)."""
    samples = frame[(frame["record"] == "sample") & (frame["set"] == set_name) & (frame["branch"] == branch)
                    & (frame["cache"] == "warm") & frame["reader"].isin(readers) & (frame["round"] == round_)]
    rows = []
    for reader, group in samples.groupby("reader", sort=False):
        offset = 0
        for rep, passes in group.groupby("rep", sort=True):
            passes = passes.sort_values("items")
            items = passes["items"].to_numpy(float)
            wall = passes["wall_s"].to_numpy(float)
            previous_items = np.concatenate([[0.0], items[:-1]])
            previous_wall = np.concatenate([[0.0], wall[:-1]])
            for i, w, pi, pw in zip(items, wall, previous_items, previous_wall):
                if i > pi:
                    rows.append({"reader": reader, "rep": rep, "warmup": rep < 0, "items": offset + i,
                                 "ns_per_item": (w - pw) / (i - pi) * 1e9})
            offset += items[-1] if len(items) else 0
    return pd.DataFrame(rows)


def collection_shapes(inputs: dict[str, dict[str, Any]], agreed: pd.DataFrame, set_name: str) -> pd.DataFrame:
    """Particles per event and attributes per collection in one input set."""
    spec = inputs[set_name]
    part = agreed[agreed["set"] == set_name]
    counts = collection_attributes(spec["root"][0], tree_name(spec["layout"]), list(part["branch"]))
    rows = [{"collection": collection_of(row["branch"]), "branch": row["branch"],
             "per_event": row["items"] / row["events"], "attributes": counts[row["branch"]]}
            for _, row in part.iterrows()]
    return pd.DataFrame(rows).set_index("collection")


def warmup_factor(frame: pd.DataFrame, set_name: str, branch: str, reader: str) -> Estimate:
    """How many times slower `reader`'s first (warm-up) pass over `branch` of `set_name` is than its timed
    passes (JIT and warm-up), warm cache: in each process (round) the first pass's reading time over the
    median of its timed passes' (the same values), then across the processes (geometric mean and its
    interval; from one process, the value alone); UNKNOWN where no process timed a warm-up pass."""
    need = {"record", "set", "branch", "cache", "reader", "round", "rep", "warmup", "wall_s"}
    if not need <= set(frame.columns):
        return intervals.UNKNOWN
    passes = frame[(frame["record"] == "timing") & (frame["set"] == set_name) & (frame["branch"] == branch)
                   & (frame["cache"] == "warm") & (frame["reader"] == reader)]
    passes = passes.assign(read=reading_time(passes), first=passes["warmup"].astype(bool))
    factors = []
    for _, process in passes.groupby("round", sort=True):
        warm_up, timed = process[process["first"]], process[~process["first"]]
        if len(warm_up) and len(timed):
            factors.append(float(warm_up.sort_values("rep")["read"].iloc[0] / timed["read"].median()))
    return intervals.across_timed(factors)


def start_spike(frame: pd.DataFrame, set_name: str, branch: str, reader: str) -> Estimate:
    """Seed 000's spike at the start of reading, at the resolution of its rate samples: in each
    process (round), `reader`'s first sample of `branch` (ns per value over its first sample_every
    values, opening included as in every sample) over the median of the first samples of its later
    passes (the same values, so the same openings), then across the processes (geometric mean and
    its interval; from one process, the value alone); UNKNOWN where no process sampled two passes."""
    rounds = frame.loc[(frame["record"] == "sample") & (frame["reader"] == reader), "round"].unique()
    factors = []
    for round_ in sorted(rounds):
        line = timeline(frame, set_name, branch, (reader,), int(round_))
        if len(line) < 2:  # no sample of this set and branch, or one pass's
            continue
        firsts = line.groupby("rep", sort=True)["ns_per_item"].first()  # rows are in pass order
        if len(firsts) > 1:
            factors.append(float(firsts.iloc[0] / firsts.iloc[1:].median()))
    return intervals.across_timed(factors)


def draw_muon_ratio(table: pd.DataFrame, set_name: str, layout: str) -> Estimate:
    """TTree::Draw's reading rate (events/s) on the muons over the median of its rates on the other
    particle types, warm cache: all read in the same processes (rounds), so per round the muons' rate
    over that round's median of the others', then across the rounds (geometric mean and its interval;
    from one round, the value alone); UNKNOWN where the muons or every other type went unmeasured."""
    rows = {c: summary_row(table, set_name, "warm", "draw", branch_name(layout, c)) for c in COLLECTIONS}
    muon = rows.pop("Muon", None)
    others = [row for row in rows.values() if row is not None]
    if muon is None or not others:
        return intervals.UNKNOWN

    def rate(row: pd.Series, round_index: Any) -> float:
        seconds = row["read_by_round"].get(round_index, math.nan)
        return row["events"] / seconds if seconds > 0 else math.nan

    ratios = []
    for round_index in muon["read_by_round"]:
        other = [r for r in (rate(row, round_index) for row in others) if math.isfinite(r)]
        if other:
            ratios.append(rate(muon, round_index) / float(np.median(other)))
    return intervals.across_timed(ratios)
