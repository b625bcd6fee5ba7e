"""Writing, report: the figures, and the tables and number macros the paper's writing section inputs."""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ...core import intervals, noise
from ...machines.tables import section_macros
from ...report import noise_sentences, paper
from ...setup.config import thread_counts
from ...core.intervals import Estimate, Verdict
from .analysis import (BACK_PRESSURE_FACTOR, BACK_PRESSURE_MARGIN_MB, EFFICIENCY_TARGET, GROUP, RANDOM_SETUP_SHARE,
                       SEED003_SATURATION_SHARE, back_pressure, compression_costs, efficiency_target, estimate, one,
                       media_ratio, peak_estimate, random_setup_rows, rate, rntuple_versus_tbuffermerger, seed001_parts,
                       seed001_rows, setup_rows, size_rows, slow_medium_share, target_medium, versus)
from .measuring import (COMPRESSIONS, EVENT_METHODS, LABELS, MEDIA, MEDIUM_LABELS, PART_LABELS, SHORT, disk_fit,
                        plan, run_name)

# A percentage in a sentence, after its number (paper.with_bounds's unit); a factor, after its number
PERCENT = r"\,\%"
TIMES = r"$\times$"

# ---- figures -------------------------------------------------------------------------------

def _panels(n: int, width: float = 6.0, height: float = 5.0, columns: int = 2):
    """n panels, at most `columns` per row; returns the figure and the used axes."""
    import matplotlib.pyplot as plt
    columns = min(n, columns)
    rows = math.ceil(n / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns, height * rows), squeeze=False,
                             constrained_layout=True)
    axes = axes.ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def _legend_below(fig, ax, columns: int) -> None:
    """One legend for all panels, under them."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=columns, fontsize="small", frameon=False)


def figure_random(table: pd.DataFrame, value: str, ylabel: str, params: dict[str, Any], ideal: bool = False):
    """One panel per medium: `value` against threads, a colour per compression,
    TBufferMerger solid and RNTupleParallelWriter dashed (medians, min-max bars for runtime)."""
    rows = table[table["part"] == "random"]
    fig, axes = _panels(len(params["media"]))
    counts = thread_counts(params["max_threads"])
    colours = dict(zip(COMPRESSIONS, ["C0", "C1", "C2", "C3", "C4"]))
    for ax, medium in zip(axes, params["media"]):
        for (method, compression), group in rows[rows["medium"] == medium].groupby(["method", "compression"], sort=False):
            group = group.sort_values("threads")
            style = "-" if method == "tbuffermerger" else "--"
            label = f"{compression}, {'TBufferMerger' if method == 'tbuffermerger' else 'RNTuple'}"
            if value == "wall_s":
                ax.errorbar(group["threads"], group[value], yerr=[group[value] - group["wall_min"],
                            group["wall_max"] - group[value]], linestyle=style, marker="o",
                            color=colours[compression], label=label)
            else:
                ax.plot(group["threads"], group[value], linestyle=style, marker="o", color=colours[compression],
                        label=label)
        if ideal:
            ax.plot(counts, counts, color="grey", linestyle=":", label="ideal")
        ax.set(title=MEDIUM_LABELS[medium], xlabel="threads", ylabel=ylabel, xticks=counts)
        if value == "wall_s":
            ax.set_yscale("log")  # LZMA takes ten times longer than the rest
        else:
            ax.set_ylim(bottom=0)
    _legend_below(fig, axes[0], columns=min(4, len(params["random_compressions"]) + (1 if ideal else 0)))
    return fig


def figure_memory(table: pd.DataFrame, params: dict[str, Any]):
    """Peak memory above the baseline against threads: one panel per random-workload method,
    a line per medium (the median over compressions, min-max as bars)."""
    rows = table[table["part"] == "random"]
    fig, axes = _panels(len(params["random_methods"]))
    counts = thread_counts(params["max_threads"])
    for ax, method in zip(axes, params["random_methods"]):
        for medium in params["media"]:
            group = (rows[(rows["method"] == method) & (rows["medium"] == medium)].groupby("threads")
                     ["rss_over_baseline_mb"].agg(["median", "min", "max"]).reset_index())
            ax.errorbar(group["threads"], group["median"], yerr=[group["median"] - group["min"],
                        group["max"] - group["median"]], marker="o", label=MEDIUM_LABELS[medium])
        ax.set(title=LABELS[method], xlabel="threads", ylabel="peak memory [MB]", xticks=counts)
        ax.set_ylim(bottom=0)
    _legend_below(fig, axes[0], columns=len(params["media"]))
    return fig


def figure_events(table: pd.DataFrame, params: dict[str, Any]):
    """Output methods: events/s against threads (left, one line style per medium) and
    parallel efficiency (right), a colour per method."""
    rows = table[table["part"] == "events"]
    fig, (left, right) = _panels(2, width=6.5)
    counts = thread_counts(params["max_threads"])
    styles = dict(zip(MEDIA, ["-.", "-", ":", "--"]))
    colours = dict(zip(EVENT_METHODS, ["C0", "C1", "C2"]))
    for (method, medium), group in rows.groupby(["method", "medium"], sort=False):
        group = group.sort_values("threads")
        label = f"{LABELS[method]}, {medium}"
        left.plot(group["threads"], group["entries_s"], linestyle=styles[medium], marker="o",
                  color=colours[method], label=label)
        right.plot(group["threads"], group["efficiency"], linestyle=styles[medium], marker="o",
                   color=colours[method], label=label)
    right.axhline(EFFICIENCY_TARGET, color="grey", linestyle=":", label="target (simple, 2 threads)")
    left.set(xlabel="threads", ylabel="events / s", xticks=counts, yscale="log")
    right.set(xlabel="threads", ylabel="parallel efficiency", xticks=counts, ylim=(0, 1.2))
    _legend_below(fig, right, columns=3)
    return fig


# ---- tables and numbers for the paper ------------------------------------------------------

def _num(value: float, digits: int = 3, noisy: bool = False) -> str:
    """`value` for the paper, marked when the run(s) it comes from stayed noisy (throughput.core.noise)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return paper.flagged(paper.number(value, digits), bool(noisy))


def _ratio(row: pd.Series, column: str, digits: int = 3, noisy: bool = False) -> str:
    """A paired ratio of `row` (`column`, `column`_low, `column`_high) with its interval and the rounds
    behind it (the row's own: what the ledger's rounds_needed scales), marked when a run behind it
    stayed noisy."""
    value = row[column]
    if value is None or not math.isfinite(value):
        return "n/a"
    rounds = row.get("wall_by_round")
    figure = Estimate(value, row[f"{column}_low"], row[f"{column}_high"], len(rounds) if isinstance(rounds, dict) else 0)
    return paper.flagged(paper.estimate(figure, digits), bool(noisy))


def _peak(row: pd.Series | None) -> str:
    """A run's peak memory above the baseline (MB): the mean of its rounds' peaks with its interval
    (analysis.peak_estimate), "--" where it was not measured or recorded no peak."""
    peak = peak_estimate(row) if row is not None else intervals.UNKNOWN
    return paper.estimate(peak) if math.isfinite(peak.value) else "--"


def _figure(value: Estimate, noisy: bool) -> str:
    """A measured figure with its interval, marked when its run stayed noisy."""
    return paper.flagged(paper.estimate(value), noisy) if math.isfinite(value.value) else "n/a"


def random_table(table: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Seed 003 per medium, compression and writer: seconds at 1 and at the most threads
    (medians), speed-up, uncompressed MB/s and peak memory above baseline at the most
    threads, and the file size."""
    top = params["max_threads"]
    rows = []
    for medium in params["media"]:
        for compression in params["random_compressions"]:
            for method in params["random_methods"]:
                first = one(table, part="random", method=method, medium=medium, compression=compression, threads=1)
                last = one(table, part="random", method=method, medium=medium, compression=compression, threads=top)
                rows.append({"medium": medium, "compression": compression,
                             "writer": SHORT[method],
                             "1 thread [s]": _ratio(first, "time", noisy=first["noisy"]),
                             f"{top} threads [s]": _ratio(last, "time", noisy=last["noisy"]),
                             "speed-up": _ratio(last, "speedup", 2, last["speedup_noisy"]),
                             "MB/s": _figure(rate(last, last["raw_bytes"] / 1e6), last["noisy"]),
                             "file MB": _num(last["file_bytes"] / 1e6), "peak MB": _peak(last)})
    return pd.DataFrame(rows)


def events_table(table: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Seed 001 per workload, medium, method and thread count: events/s, MB/s, speed-up,
    parallel efficiency, file size and its ratio to ROOT's, peak memory above baseline."""
    rows = []
    for part, methods in seed001_parts(params).items():
        ours = versus(table, part, "root_imt") if "root_imt" in methods else table.assign(size_ratio=math.nan)
        for medium, method, t in itertools.product(params["event_media"], methods, thread_counts(params["max_threads"])):
            r = one(ours, part=part, method=method, medium=medium, threads=t)
            rows.append({"events": PART_LABELS[part], "medium": medium, "method": SHORT[method], "threads": str(t),
                         "events/s": _figure(rate(r, r["entries"]), r["noisy"]),
                         "MB/s": _figure(rate(r, r["raw_bytes"] / 1e6), r["noisy"]),
                         "speed-up": _ratio(r, "speedup", 2, r["speedup_noisy"]),
                         "efficiency": _ratio(r, "efficiency", 2, r["speedup_noisy"]),
                         "file MB": _num(r["file_bytes"] / 1e6), "size ratio": _num(r["size_ratio"], 3),
                         "peak MB": _peak(r)})
    return pd.DataFrame(rows)


def seed001_table(table: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    rows = seed001_rows(table, params)
    return pd.DataFrame({
        "": rows["who"],
        "faster, 1 thread": [_ratio(r, "faster_1", 3, r["noisy_1"]) for _, r in rows.iterrows()],
        "faster, N threads": [_ratio(r, "faster_n", 3, r["noisy_n"]) for _, r in rows.iterrows()],
        "N": rows["threads_n"].astype(str),
        "size ratio": [_num(v, 3) for v in rows["size_ratio"]],
    })


def _seed003_numbers(claim: str, numbers: dict[str, Any]) -> list[str]:
    """The six numbers a row of seed 003's table quotes, in the order paper/sections/writing.tex
    reads them (\\wrtseeda to \\wrtseedf; empty past a claim's last): Scaling: the speed-ups, threads,
    medium, the compressions that scale as well or better and how many; Compression: LZMA's time
    over ZLIB's and over LZ4's, threads, medium; Saturation: MB/s reached and the slow medium's,
    threads, the share's interval, the share and the share it must reach (percent); BackPressure:
    the two peaks (MB), the fast medium, the compression, threads. Where a claim was not measured,
    threads and medium only."""
    common = [str(numbers["threads"]), paper.escape(numbers["medium"])]
    if claim == "Scaling" and "speedups" in numbers:
        speedups = ", ".join(rf"\wrtseedspeedup{{{paper.escape(c)}}}{{{paper.with_bounds(v, 3, unit=TIMES)}}}"
                             for c, v in numbers["speedups"].items())
        cells = [speedups, *common, ", ".join(paper.escape(c) for c in numbers["beaten"]), str(len(numbers["beaten"]))]
    elif claim == "Compression" and "over_zlib" in numbers:
        cells = [paper.number(numbers["over_zlib"], 2), paper.number(numbers["over_lz4"], 2), *common]
    elif claim == "Saturation" and "share" in numbers:
        share = numbers["share"]
        cells = [paper.number(numbers["mb_s"]), paper.number(numbers["medium_mb_s"]), common[0],
                 paper.interval(share, 2, 100, r"\%"), paper.number(100 * share.value, 2),
                 paper.number(100 * SEED003_SATURATION_SHARE)]
    elif claim == "BackPressure":
        cells = [paper.with_bounds(numbers[m], 3, unit="~MB", missing="--") for m in ("slow", "fast")]
        cells += [common[1], paper.escape(numbers["compression"]), common[0]]
    else:
        cells = common
    return [*cells, *[""] * (6 - len(cells))]


def seed003_table(claims: pd.DataFrame) -> pd.DataFrame:
    """seed003_claims for the paper, one row per conclusion of seed 003 as its state and numbers:
    the first cell is \\wrtseedrow{<claim>}{<state>}{six numbers}, which paper/sections/writing.tex
    words as the conclusion, leaving what this run measured (\\wrtseedrun) and whether the
    conclusion holds today (\\wrtseedtoday, by the variant of WrtSeed<claim> the state names)
    to the next two cells."""
    rows = [rf"\wrtseedrow{{{claim}}}{{{state}}}" + "".join(f"{{{n}}}" for n in _seed003_numbers(claim, numbers))
            for claim, state, numbers in zip(claims["claim"], claims["state"], claims["numbers"])]
    return pd.DataFrame({"seed 003 concluded": rows, "this run": [r"\wrtseedrun"] * len(rows),
                         "today": [r"\wrtseedtoday"] * len(rows)})


# A verdict's word in a table, by its interval (throughput.core.intervals): a seed's claim on this run.
VERDICT_WORDS = {Verdict.MET: "met", Verdict.MISSED: "missed", Verdict.INCONCLUSIVE: "inconclusive"}


def _word(verdict: Any, words: dict[Verdict, str] = VERDICT_WORDS) -> str:
    """A verdict's word; pandas keeps a Verdict in a frame as its plain value ("--": none)."""
    return words[Verdict(verdict)] if isinstance(verdict, str) else "--"


def seed001_size_table(frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """size_rows for the paper: MB per event, the simple format over ROOT with its interval and
    its verdict on "larger", ROOT's metadata share in percent."""
    rows = size_rows(frame, params)
    return pd.DataFrame({"": rows["who"], "events": [_num(v, 6) for v in rows["events"]],
                         "ROOT [MB/event]": [_num(v) for v in rows["root_mb"]],
                         "simple [MB/event]": [_num(v) for v in rows["simple_mb"]],
                         "simple / ROOT": [paper.estimate(v) for v in rows["ratio"]],
                         "larger": [_word(v) for v in rows["verdict"]],
                         "ROOT metadata [%]": [paper.with_bounds(v, 2, 100) for v in rows["metadata"]]})


def seed001_setup_table(frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """setup_rows for the paper: each writer's fixed cost per pass in ms (ROOT's also as a share
    of its pass), and the simple format's speed-up over ROOT + IMT with and without it, each
    with its interval and its verdict on "faster"."""
    rows = setup_rows(frame, params)
    return pd.DataFrame({
        "": [f"{PART_LABELS[r.part]}, {SHORT[r.method]}" for r in rows.itertuples()],
        "events": [_num(v, 6) for v in rows.get("entries", [])],
        "threads": [str(v) for v in rows.get("threads", [])],
        "ROOT set-up [ms]": [paper.with_bounds(v, 2, 1e3) for v in rows.get("root_setup", [])],
        "of its pass [%]": [paper.with_bounds(v, 2, 100) for v in rows.get("root_share", [])],
        "simple set-up [ms]": [paper.with_bounds(v, 2, 1e3) for v in rows.get("simple_setup", [])],
        "faster": [paper.estimate(v) if math.isfinite(v.value) else "n/a" for v in rows.get("faster", [])],
        "verdict": [_word(v) for v in rows.get("faster_verdict", [])],
        "faster, no set-up": [paper.estimate(v) if math.isfinite(v.value) else "n/a"
                              for v in rows.get("faster_without", [])],
        "verdict, no set-up": [_word(v) for v in rows.get("faster_without_verdict", [])]})


def _than(row: pd.Series | None) -> str:
    """A method against ROOT + IMT, from its paired `faster` ratio: higher or lower only where the
    interval excludes 1 (throughput.core.intervals.comparison), else notseparated; notmeasured
    without the ratio. The state of a Wrt...Than...State macro: the section words it (WrtThan)."""
    if row is None or not math.isfinite(row["faster"]):
        return paper.NOT_MEASURED
    return paper.comparison_state(estimate(row, "faster"))


def paper_macros(table: pd.DataFrame, params: dict[str, Any], frame: pd.DataFrame, dirs: dict[str, str],
                 max_threads_requested: int | None, compiler: str,
                 noise_settings: noise.Settings | None = None, archived: Sequence[Any] = (), *,
                 compression_share: Estimate = intervals.UNKNOWN,
                 uncompressed_speedup: Estimate = intervals.UNKNOWN) -> dict[str, str]:
    """Every number and state the paper's writing section quotes (names: letters only, prefix Wrt);
    `archived`: the archived machines read (throughput.machines.tables.load_archived), whose
    WrtMachines... macros say which hold writing runs (tables.section_macros); `compression_share`:
    seed 001's time in compression (analysis.compression_share, from the run the table leaves out);
    `uncompressed_speedup`: seed 001's serialization (analysis.uncompressed_speedup, likewise)."""
    noise_settings = noise_settings or noise.Settings()
    top, medium = params["max_threads"], target_medium(params)
    goal = efficiency_target(table, params)
    values = {
        # how many branches of random doubles: one, or several (WrtRandomBranchesCount); the section words each
        "WrtRandomMB": _num(params["random_mb"]),
        "WrtRandomBranchesState": "one" if params["random_branches"] == 1 else "several",
        "WrtRandomBranchesCount": str(params["random_branches"]),
        "WrtEvents": _num(params["events"]), "WrtMaxThreads": str(top),
        "WrtMaxThreadsRequested": str(max_threads_requested or top),
        "WrtRepetitions": str(params["repetitions"]), "WrtWarmup": str(params["warmup"]),
        "WrtSamples": str(noise_settings.samples_per_process), "WrtMinSampleS": f"{noise_settings.min_sample_s:g}",
        "WrtSlowMBs": _num(params["slow_mb_s"]), "WrtFlushMB": _num(params["flush_mb"]),
        **_disk_macros(dirs, params), "WrtCompiler": paper.escape(compiler),
        "WrtTargetMedium": medium, "WrtEffTarget": _num(EFFICIENCY_TARGET * 100, 2),
        "WrtRssMethod": paper.escape(frame["rss_method"].iloc[0]),
        "WrtLZFourVersion": paper.escape(frame["lz4_version"].iloc[0]),
    }
    labels = {run_name(r): f"{r['part']} {SHORT[r['method']]} {r['medium']} {r['compression']} {r['threads']}t"
                           + ("" if r["scale"] == 1 else f" x{r['scale']}") for r in plan(params)}
    values.update(noise_sentences.paper_macros("Wrt", frame, noise_settings, labels, section="writing"))
    events = frame[(frame["part"] == "events") & _single(frame)]
    values["WrtColumns"] = str(int(events["columns"].iloc[0])) if len(events) else "n/a"
    values["WrtEventBytes"] = _num(events["raw_bytes"].iloc[0] / events["entries"].iloc[0]) if len(events) else "n/a"
    ours = versus(table, "events", "root_imt") if "root_imt" in params["event_methods"] else None
    for method, name in (("simple", "Simple"), ("rntuple", "Rntuple")):
        rows = {t: (one(ours, method=method, medium=medium, threads=t) if ours is not None else None) for t in (1, top)}
        for t, suffix in ((1, "One"), (top, "N")):
            values[f"Wrt{name}Faster{suffix}"] = _ratio(rows[t], "faster") if rows[t] is not None else "n/a"
            values[f"Wrt{name}Than{suffix}State"] = _than(rows[t])
        values[f"Wrt{name}SizeRatio"] = _num(rows[1]["size_ratio"]) if rows[1] is not None else "n/a"
    for method, name in (("root_imt", "Imt"), ("simple", "Simple"), ("rntuple", "Rntuple")):
        row = one(table, part="events", method=method, medium=medium, threads=top)
        values[f"Wrt{name}Speedup"] = _ratio(row, "speedup", 2) if row is not None else "n/a"
        # the events/s the events table prints, with its interval
        values[f"Wrt{name}EventsPerSecond"] = (_figure(rate(row, row["entries"]), row["noisy"]) if row is not None
                                              else "n/a")
    # seed 001's "ROOT compresses concurrently" (the ledger's): only of a compressed run on several threads
    compressed = params["event_compression"] != "none" and top > 1
    values["WrtImtCompressedSpeedup"] = values["WrtImtSpeedup"] if compressed else "n/a"
    values.update(_object_macros(table, params, frame, medium, top))
    # seed 001's "time in compression is too little to make appreciable difference", in percent
    values["WrtObjCompressionShare"] = paper.with_bounds(compression_share, 2, 100, r"\%")
    values["WrtObjCompressionShareState"] = "measured" if math.isfinite(compression_share.value) else paper.NOT_MEASURED
    # seed 001's "serialization of the C++ objects is still done sequentially": IMT's gain with nothing to compress
    measured = math.isfinite(uncompressed_speedup.value)
    values["WrtObjUncompressedSpeedup"] = paper.estimate(uncompressed_speedup, 3) if measured else "n/a"
    values["WrtObjUncompressedSpeedupState"] = "measured" if measured else paper.NOT_MEASURED
    values.update(_size_macros(frame, params))
    values.update(_setup_macros(frame, params))
    values["WrtSimpleEffTwo"] = paper.estimate(goal["estimate"], 3) if goal["measured"] else "n/a"
    # the efficiency target's state (met, missed, inconclusive by its interval; notmeasured, and why):
    # paper/sections/writing.tex words each
    values["WrtTargetState"] = paper.state(goal["verdict"] if goal["measured"] else None)
    values["WrtTargetReasonState"] = goal["reason"]  # why not measured (analysis.efficiency_target), or none
    versus_rntuple = rntuple_versus_tbuffermerger(table, params)
    # the smallest and the largest of the paired ratios, each with its own interval (no summary of
    # the cases' point values: a median of them would carry none), simultaneous over the cases
    ordered = sorted(versus_rntuple["ratios"], key=lambda r: r.value)
    values["WrtRntupleVsTbmLevel"] = paper.number(100 * versus_rntuple["level"], 3)
    values["WrtRntupleVsTbmMin"] = paper.estimate(ordered[0]) if ordered else "n/a"
    values["WrtRntupleVsTbmMax"] = paper.estimate(ordered[-1]) if ordered else "n/a"
    values.update({f"WrtRntupleVsTbm{name.capitalize()}": str(versus_rntuple[name])
                   for name in ("slower", "faster", "notseparated")})
    values["WrtRntupleVsTbmCombinations"] = str(len(versus_rntuple["ratios"]))
    values["WrtTbmPeakMB"] = paper.with_bounds(versus_rntuple["peaks"]["tbuffermerger"], 3, unit="~MB")
    values["WrtRntuplePeakMB"] = paper.with_bounds(versus_rntuple["peaks"]["rntuple"], 3, unit="~MB")
    values.update(_back_pressure_macros(back_pressure(table, params)))
    # seed 003's compressions, which the ledger judges: on the fast medium at the most threads, at one
    # thread (compression work alone: One) and on the slow medium (where a smaller file should pay: Slow)
    for suffix, where in (("", {}), ("One", {"threads": 1}), ("Slow", {"medium": "slow"})):
        costs = compression_costs(table, params, **where)
        names = ("LzmaOverZlib", "LzmaOverLzFour") + (("SizeZlibOverLzma", "SizeLzFourOverLzma") if not suffix else ())
        values.update({f"Wrt{name}{suffix}": paper.estimate(costs[name]) if name in costs else "n/a" for name in names})
    # seed 003's media: a pass's time on the slow medium over the fast one's, uncompressed and with LZMA
    for compression, name in (("none", "None"), ("LZMA", "Lzma")):
        ratio = media_ratio(table, params, compression)
        values[f"WrtMediaRatio{name}"] = paper.estimate(ratio) if math.isfinite(ratio.value) else "n/a"
    # seed 003's saturation of a slow medium (the ledger's S003-saturate-media-few-threads), in percent
    values["WrtSaturationShare"] = paper.with_bounds(slow_medium_share(table, params), 2, 100, r"\%")
    values["WrtSaturationTarget"] = _num(100 * SEED003_SATURATION_SHARE, 2)
    values.update(section_macros("Wrt", archived, "writing"))
    return values


def _disk_macros(dirs: dict[str, str], params: dict[str, Any]) -> dict[str, str]:
    """What the disk medium is on this machine (measuring.disk_fit): WrtDiskState notmeasured,
    fsync or nofsync, the section words each; and WrtDiskFilesystem, the file system of the disk
    directory (n/a where not measured)."""
    disk = disk_fit(dirs, params)
    return {"WrtDiskState": disk["state"], "WrtDiskFilesystem": paper.escape(disk["filesystem"])}


def _back_pressure_macros(pressure: dict[str, Any]) -> dict[str, str]:
    """Seed 003's back-pressure claim on this run (analysis.back_pressure): WrtBackPressureState
    holds, toolittle, blocks, inconclusive, notmeasured or nopeak (the section words each), with
    TBufferMerger's peak memory above baseline on the slow medium and on the fast one, each with its
    interval (SlowMB, FastMB: their unit in them), which that is, the rule's factor and margin in MB,
    the slow one's excess over that bar, paired round by round, with its interval (ExcessMB), and the
    MB a pass writes against the MB it would have to queue to clear the bar (DataMB, NeededMB)."""
    return {"WrtBackPressureState": pressure["state"],
            "WrtBackPressureSlowMB": paper.with_bounds(pressure["slow"], 3, unit="~MB"),
            "WrtBackPressureFastMB": paper.with_bounds(pressure["fast"], 3, unit="~MB"),
            "WrtBackPressureExcessMB": paper.with_bounds(pressure["excess"], 3, unit="~MB"),
            "WrtBackPressureFastMedium": paper.escape(pressure["fast_medium"]),
            "WrtBackPressureFactor": paper.number(BACK_PRESSURE_FACTOR),
            "WrtBackPressureMarginMB": paper.number(BACK_PRESSURE_MARGIN_MB),
            **{f"WrtBackPressure{name}MB": paper.number(pressure[key]) if math.isfinite(pressure[key]) else "n/a"
               for name, key in (("Data", "data_mb"), ("Needed", "needed_mb"))}}


def _single(frame: pd.DataFrame) -> pd.Series:
    """The passes of the configured size (not a set-up run's twice as many)."""
    return frame["scale"].fillna(1).eq(1) if "scale" in frame else pd.Series(True, index=frame.index)


def _object_macros(table: pd.DataFrame, params: dict[str, Any], frame: pd.DataFrame, medium: str,
                   top: int) -> dict[str, str]:
    """The data-products workload's numbers (prefix WrtObj): its events and their bytes, each
    simple-format variant against ROOT + IMT, at 1 and at the most threads, with its size ratio
    (a ratio carries the noisy mark when either run behind it stayed noisy), and which of the
    two writers' files was larger in seed 001's size comparison."""
    objects = frame[(frame["part"] == "objects") & _single(frame)]
    values = {"WrtObjEvents": _num(objects["entries"].iloc[0]) if len(objects) else "n/a",
              "WrtObjEventBytes": (_num(objects["raw_bytes"].iloc[0] / objects["entries"].iloc[0])
                                   if len(objects) else "n/a")}
    measured = bool(len(objects)) and "root_imt" in params["object_methods"]
    ours = versus(table, "objects", "root_imt") if measured else None
    for method, name in (("simple_root", "RootSer"), ("simple", "Copied")):
        rows = {t: (one(ours, method=method, medium=medium, threads=t) if ours is not None else None) for t in (1, top)}
        for t, suffix in ((1, "One"), (top, "N")):
            row = rows[t]
            values[f"WrtObj{name}Faster{suffix}"] = (_ratio(row, "faster", noisy=row["faster_noisy"])
                                                     if row is not None else "n/a")
            values[f"WrtObj{name}Than{suffix}State"] = _than(row)
        values[f"WrtObj{name}SizeRatio"] = _num(rows[1]["size_ratio"]) if rows[1] is not None else "n/a"
    # seed 001's concurrent serialization, as it happened: the share of events whose products
    # more than one thread serialized, in the timed passes at the most threads (-1: not counted)
    concurrent = objects[(objects["method"] == "simple_root") & (objects["threads"] == top) & ~objects["warmup"]]
    if "events_split" in concurrent:
        concurrent = concurrent[concurrent["events_split"] >= 0]
    values["WrtObjSplitPercent"] = (_num(100 * concurrent["events_split"].sum() / concurrent["entries"].sum())
                                    if "events_split" in concurrent and len(concurrent) else "n/a")
    return values


# What a size ratio's interval says of the seed's "the simple format's files are larger" (met:
# its whole interval above 1): the state of a WrtSize<workload>State macro, which the section words.
SIZE_STATES = {Verdict.MET: "larger", Verdict.MISSED: "smaller", Verdict.INCONCLUSIVE: "notseparated"}
# The seed-001 workloads in the size and set-up macros' names (WrtSize<name>..., WrtSetup<name>...).
PART_NAMES = {"events": "Events", "objects": "Products"}


def _parts_state(parts: Sequence[str]) -> str:
    """Which seed-001 workloads a sentence covers: events, products, both, or notmeasured."""
    names = [PART_NAMES[p].lower() for p in dict.fromkeys(parts)]
    return "both" if len(names) == 2 else names[0] if names else paper.NOT_MEASURED


def _size_macros(frame: pd.DataFrame, params: dict[str, Any]) -> dict[str, str]:
    """Seed 001's sizes as states and numbers: WrtSizeState names the workloads measured
    (_parts_state), and for each, at N entries and one thread, WrtSize<workload>State (the simple
    format's files larger, smaller or notseparated from ROOT's by the paired ratio's interval,
    SIZE_STATES), its events (Count), the ratio with its interval (Ratio) and ROOT's metadata share
    in percent (MetadataPercent). The section words each state."""
    sizes = size_rows(frame, params)
    ours = sizes[~sizes["who"].str.startswith("seed")].drop_duplicates("who")  # N entries: listed first
    values = {"WrtSizeState": _parts_state(list(ours["part"]) if len(ours) else [])}
    for r in ours.itertuples():
        name = f"WrtSize{PART_NAMES[r.part]}"
        values.update({f"{name}State": SIZE_STATES[Verdict(r.verdict)], f"{name}Count": _num(r.events, 6),
                       f"{name}Ratio": paper.estimate(r.ratio),
                       f"{name}MetadataPercent": paper.with_bounds(r.metadata, 2, 100, PERCENT)})
    return values


def _setup_macros(frame: pd.DataFrame, params: dict[str, Any]) -> dict[str, str]:
    """Seed 001's set-up at one thread as states and numbers: WrtSetupState names the workloads
    measured apart (_parts_state), and for each WrtSetup<workload>Count (events), RootMs and
    RootPercent (ROOT's fixed cost per pass and its share of the pass), CostState (negative where
    the cost's whole interval is below zero: twice the events took more than twice as long;
    notnegative otherwise), Faster and FasterWithout (the simple format's speed-up over ROOT + IMT
    with and without the set-up) with FasterState and FasterWithoutState (met, missed,
    inconclusive: their verdicts on "faster" by their intervals); seed 003's regime as numbers
    and a state (WrtRandomSetup...: whether its passes were large enough, set-up and last flush
    under RANDOM_SETUP_SHARE of each, by their intervals). The section words each state."""
    setups = setup_rows(frame, params)
    one_thread = setups[setups["threads"] == 1] if len(setups) else setups
    values = {"WrtSetupState": _parts_state(list(one_thread["part"]) if len(one_thread) else [])}
    for r in one_thread.itertuples():
        name = f"WrtSetup{PART_NAMES[r.part]}"
        values.update({
            f"{name}Count": _num(r.entries, 6), f"{name}RootMs": paper.with_bounds(r.root_setup, 2, 1e3, "~ms"),
            f"{name}RootPercent": paper.with_bounds(r.root_share, 2, 100, PERCENT),
            f"{name}CostState": "negative" if r.root_setup.known and r.root_setup.high < 0 else "notnegative",
            f"{name}Faster": _est(r.faster), f"{name}FasterState": paper.state(r.faster_verdict),
            f"{name}FasterWithout": _est(r.faster_without),
            f"{name}FasterWithoutState": paper.state(r.faster_without_verdict)})
    random = random_setup_rows(frame, params)
    random = random[random["share"].map(lambda e: math.isfinite(e.value))] if len(random) else random
    # WrtRandomSetupState: measured, or notmeasured (writing.setup_parts leaves random doubles out);
    # paper/sections/writing.tex words each
    counts = random["verdict"].value_counts() if len(random) else pd.Series(dtype=int)
    shares = [e.value for e in random["share"]] if len(random) else [math.nan]
    values.update({"WrtRandomSetupState": "measured" if len(random) else paper.NOT_MEASURED,
                   "WrtRandomSetupMinPercent": _num(100 * min(shares), 2),
                   "WrtRandomSetupMaxPercent": _num(100 * max(shares), 2),
                   "WrtRandomSetupLimitPercent": _num(100 * RANDOM_SETUP_SHARE, 2),
                   "WrtRandomSetupRuns": str(len(random)),
                   **{f"WrtRandomSetup{name}": str(counts.get(verdict, 0))
                      for name, verdict in (("Under", Verdict.MET), ("Over", Verdict.MISSED),
                                            ("Undecided", Verdict.INCONCLUSIVE))}})
    return values


def _est(value: Estimate) -> str:
    return paper.estimate(value) if math.isfinite(value.value) else "n/a"


def machine_table(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each writer's speed-up over its own one-thread run at each machine's most threads, one
    column per machine (this one and the archived ones, each from its own `summary`); random
    doubles at compression none only, the I/O-bound end seed 003 measured. "--": not measured there."""
    columns: dict[str, dict[tuple, str]] = {}
    for label, table in tables.items():
        top = int(table["threads"].max())
        rows = table[(table["threads"] == top) & ((table["part"] != "random") | (table["compression"] == "none"))]
        columns[f"{label} ({top} threads)"] = {tuple(r[c] for c in GROUP): _ratio(r, "speedup", 2, r["speedup_noisy"])
                                               for _, r in rows.iterrows()}
    keys = list(dict.fromkeys(key for cells in columns.values() for key in cells))  # first seen first
    return pd.DataFrame({
        "workload": [PART_LABELS.get(k[0], k[0]) for k in keys], "writer": [SHORT.get(k[1], k[1]) for k in keys],
        "medium": [k[2] for k in keys], "compression": [k[3] for k in keys],
        **{title: [cells.get(k, "--") for k in keys] for title, cells in columns.items()},
    })
