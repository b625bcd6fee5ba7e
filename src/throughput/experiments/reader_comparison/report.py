"""What the paper shows: its tables as frames of LaTeX cells (a reader that
could not read an input gets the reason in its cell), Figure 1 and Table 1 as
plots, and every number its section quotes (macros Rc...), measured, never
typed."""
from __future__ import annotations

import itertools
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...core import experiment, intervals, noise, provenance
from ...report import ledger, noise_sentences, paper
from ...core.intervals import Estimate, Verdict
from ...machines.tables import section_macros
from .analysis import (DECIDING_FIGURES, UNREAD_RECORDS, _rate, cold_over_warm, collection_shapes, opening_ms,
                       rank_correlation, rate_estimate, slowdown, start_spike, summary_row, timeline, warm_paired_ratio,
                       warmup_factor, whole_pass_khz, draw_muon_ratio)
from ...inputs.datasets import EMPTY_PRODUCT_BRANCH
from .inputs import collection_attributes, tree_compression_factor, tree_metadata
from .processes import ROOT4J_COMMIT, ROOTREADSPEED_COPIES
from .spec import main_sets, named_set
from .vocabulary import (COLLECTIONS, COLORS, COMPRESSIONS, LABELS, NUMPY_TARGET, READER_BY_NAME, READERS,
                         TIMELINE_READERS, branch_name, tree_name)
from ...report.seeds import READER_TABLE1 as SEED_TABLE1

# --- tables for the paper (cells as LaTeX strings) -----------------------------------------------


def _num(value: float, digits: int = 3) -> str:
    return paper.number(value, digits) if math.isfinite(value) else "--"


def _estimate(value: Estimate, digits: int = 3) -> str:
    """An estimate with its interval (paper.estimate), or "--" where it could not be made."""
    return paper.estimate(value, digits) if math.isfinite(value.value) else "--"


def _listed(names: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)


def failure_summary(message: str) -> str:
    """A table cell's short form of a reader's error: its exception's name (the
    part after the reader's 'failed:', without Java's package), else the text."""
    text = _without_location(message.rsplit("failed: ", 1)[-1])
    text = text.split(":", 1)[0].strip() if "Exception" in text or "Error" in text else text
    text = text.rsplit(".", 1)[-1] if text.startswith(("java.", "org.", "edu.")) else text
    return text if len(text) <= 40 else text[:39] + "…"


def _without_location(message: str) -> str:
    """A reader's message without its leading "file F, branch B: " (the tables say which input)."""
    return re.sub(r"^file \S+ (\([^)]*\) )?.*?branch \S+: ", "", message)


def failures_frame(unreadable: pd.DataFrame) -> pd.DataFrame:
    """One row per reader and input it could not read, with the reader's whole reason."""
    columns = ["reader", "input", "cache", "outcome", "reason"]
    if unreadable.empty:
        return pd.DataFrame([["every reader", "every input", "both", "read", "--"]], columns=columns)
    rows = unreadable.drop_duplicates(["set", "cache", "reader", "record", "message"])
    # the input and branch have their own columns: not repeated from the reader's message
    reasons = [_without_location(m) for m in rows["message"]]
    return pd.DataFrame({"reader": [LABELS[r] for r in rows["reader"]],
                         "input": [escape_name(s) for s in rows["set"]], "cache": list(rows["cache"]),
                         "outcome": [UNREAD_RECORDS[r] for r in rows["record"]],
                         "reason": [_escape(m) for m in reasons]}, columns=columns)


def _escape(text: str) -> str:

    return paper.escape(text)


def _readers_present(table: pd.DataFrame, extra: tuple[str, ...] = ("rootreadspeed",)) -> list[str]:
    present = set(table["reader"])
    return [r for r in READERS + extra if r in present]


def _cell(table: pd.DataFrame, unreadable: pd.DataFrame, set_name: str, cache: str, reader: str, branch: str,
          column: str) -> str:
    """One rate as a table cell; where the reader could not read this input, the
    outcome and its short reason ("failed: ...", "cannot read: ..."; the whole
    reason is in the failures table)."""
    match = unreadable[(unreadable["set"] == set_name) & (unreadable["reader"] == reader)
                       & (unreadable["branch"] == branch) & (unreadable["cache"] == cache)]
    if len(match):
        kind, message = match["record"].iloc[0], match["message"].iloc[0]
        if kind == "not_measured":
            return "not measured"
        return _escape(f"{UNREAD_RECORDS[kind]}: {failure_summary(message)}")
    return _row_cell(summary_row(table, set_name, cache, reader, branch), column)


def _row_cell(row: pd.Series | None, column: str) -> str:
    """One summary row's figure as a table cell, marked when it stayed noisy: a kHz column across the
    processes with its interval (the value alone from one round), "--" where not measured."""
    if row is None:
        return "--"
    if column in RATE_PARTS:  # kHz across the processes, with its interval
        return paper.flagged(_estimate(rate_estimate(row, row["events"] / 1e3, RATE_PARTS[column])), bool(row["noisy"]))
    return paper.flagged(_num(row[column]), bool(row["noisy"]))


# The kHz columns of the summary and the part of a pass each divides by (rate_estimate).
RATE_PARTS = {"khz_read": "read", "khz": "wall"}


def table1_frame(table: pd.DataFrame, unreadable: pd.DataFrame, shapes: pd.DataFrame, set_name: str,
                 layout: str) -> pd.DataFrame:
    """Seed 000's Table 1 beside ours: kHz per process (events per ms, reading
    only) per particle type for every reader, one input set, warm cache."""
    collections = [c for c in COLLECTIONS if c in shapes.index]
    header = {c: SEED_TABLE1.loc[c, "particle"] for c in collections}
    rows = [
        {"": "particles per event, seed", **{header[c]: _num(SEED_TABLE1.loc[c, "per_event"], 2) for c in collections}},
        {"": "particles per event, here", **{header[c]: _num(shapes.loc[c, "per_event"], 2) for c in collections}},
        {"": "attributes (branches), seed", **{header[c]: str(SEED_TABLE1.loc[c, "attributes"]) for c in collections}},
        # counted in the file: the flat MiniAOD-like layout has a branch per element of a small array
        {"": "branches, here", **{header[c]: str(int(shapes.loc[c, "attributes"])) for c in collections}},
        {"": "CMSSW EDAnalyzer (seed)", **{header[c]: _num(SEED_TABLE1.loc[c, "cmssw"]) for c in collections}},
        {"": "TTree::Draw (seed)", **{header[c]: _num(SEED_TABLE1.loc[c, "draw"]) for c in collections}},
        {"": "FemtoCode reader (seed)", **{header[c]: _num(SEED_TABLE1.loc[c, "femtocode"]) for c in collections}},
    ]
    # readers that read this input, and those that could not (their cells say why)
    present = set(table[table["set"] == set_name]["reader"]) | set(unreadable[unreadable["set"] == set_name]["reader"])
    for reader in [r for r in READERS + ("rootreadspeed",) if r in present]:
        column = "khz" if reader == "rootreadspeed" else "khz_read"
        label = LABELS[reader] + (" (with opening)" if reader == "rootreadspeed" else "")
        rows.append({"": label, **{header[c]: _cell(table, unreadable, set_name, "warm", reader,
                                                    branch_name(layout, c), column) for c in collections}})
    return pd.DataFrame(rows)


def object_frames(table: pd.DataFrame, unreadable: pd.DataFrame, agreed: pd.DataFrame,
                  inputs: dict[str, dict[str, Any]], compression: str) -> dict[str, pd.DataFrame]:
    """The split-object file's tables: every reader on it (Table 1's rows) and where a
    CMSSW-like read's time goes; one row saying why where the run had no such file."""
    objects_set, flat_set = named_set("aod_objects", compression), named_set("aod", compression)
    if objects_set not in inputs or not (table["set"] == objects_set).any():
        missing = pd.DataFrame([{"": "not measured: no split-object file in this run "
                                     "(config key reader_comparison.object_events is 0)"}])
        return {"table1_objects": missing, "object_split_table": missing}
    shapes = collection_shapes(inputs, agreed, objects_set)
    return {"table1_objects": table1_frame(table, unreadable, shapes, objects_set, "aod_objects"),
            "object_split_table": object_split_frame(table, flat_set, objects_set)}


class _SplitRates:
    """One branch's warm reading rates (kHz) of `readers` in one input set, with ratios marked
    noisy (as the tables mark them) when their own printed interval is wider than the noise
    section's limit. The readers of one set are measured interleaved, so their ratios compare."""

    def __init__(self, table: pd.DataFrame, set_name: str, branch: str,
                 readers: tuple[str, ...] = ("baskets", "columnar", "members", "cmssw")):
        self.table, self.set_name, self.branch = table, set_name, branch
        self.khz = {r: _rate(table, set_name, "warm", r, branch, "khz_read") for r in readers}
        self.noisy = {r: _rate(table, set_name, "warm", r, branch, "noisy") == 1.0 for r in readers}

    def rate(self, reader: str) -> str:
        """`reader`'s reading rate (kHz) across its processes, with its interval."""
        return _row_cell(summary_row(self.table, self.set_name, "warm", reader, self.branch), "khz_read")

    def rounds(self, reader: str) -> dict[Any, float] | None:
        """`reader`'s reading time of one pass in each round (None: it did not read the branch)."""
        rows = self.table[(self.table["set"] == self.set_name) & (self.table["cache"] == "warm")
                          & (self.table["reader"] == reader) & (self.table["branch"] == self.branch)]
        return rows["read_by_round"].iloc[0] if len(rows) == 1 else None

    def ratio(self, faster: str, slower: str) -> str:
        """How many times `slower` takes `faster`'s time (kHz of faster over kHz of slower), paired
        round by round with its interval."""
        # the same events read by both: the ratio of their reading times
        slow, fast = self.rounds(slower), self.rounds(faster)
        ratio = intervals.paired_by_round(slow, fast) if slow and fast else intervals.UNKNOWN
        return paper.flagged(_estimate(ratio), noise.Settings().is_noisy(ratio.relative_half_width))


def _floor_share(empty: _SplitRates, split: _SplitRates) -> Estimate:
    """The share of the CMSSW-like reader's time per event on a collection that reading the empty
    product takes (the same events, one process: paired round by round)."""
    floor, whole = empty.rounds("cmssw"), split.rounds("cmssw")
    return intervals.paired_by_round(floor, whole) if floor and whole else intervals.UNKNOWN


def _members_share(split: _SplitRates) -> Estimate:
    """The share of the CMSSW-like reader's time above the columnar reader's that reading every
    member without objects already takes: (members - columnar) / (cmssw - columnar) of their reading
    times in each round (one interleaved group), their mean with its t interval (a share of two
    differences may lie near zero: intervals.mean_across); UNKNOWN without a round of all three in
    which the CMSSW-like reader is the slower."""
    columnar, members, cmssw = (split.rounds(r) for r in ("columnar", "members", "cmssw"))
    if not (columnar and members and cmssw):
        return intervals.UNKNOWN
    shares = [(members[r] - columnar[r]) / (cmssw[r] - columnar[r])
              for r in sorted(set(columnar) & set(members) & set(cmssw))
              if all(math.isfinite(t[r]) for t in (columnar, members, cmssw)) and cmssw[r] > columnar[r]]
    return intervals.mean_across(shares) if shares else intervals.UNKNOWN


def object_split_frame(table: pd.DataFrame, flat_set: str, objects_set: str) -> pd.DataFrame:
    """Where a CMSSW-like read's time goes, per particle type, measured on the
    split std::vector<class> file: the baskets of the pT member and its count decompressed
    (baskets), the member read entry by entry (columnar), every member into flat
    buffers without objects (members), and every member streamed into ROOT-built
    objects (cmssw); their ratios, beside the seed's CMSSW / FemtoCode
    ratio and the flat MiniAOD-like file's CMSSW-like / columnar one (kHz, reading)."""
    def steps(split: _SplitRates) -> dict[str, str]:
        return {"baskets only": split.rate("baskets"),
                "member alone": split.rate("columnar"), "all members": split.rate("members"),
                "objects": split.rate("cmssw"),
                "per entry / baskets": split.ratio("baskets", "columnar"),
                "reading all / one": split.ratio("columnar", "members"),
                "objects / reading all": split.ratio("members", "cmssw"),
                "objects / one": split.ratio("columnar", "cmssw")}

    rows = []
    empty = _SplitRates(table, objects_set, EMPTY_PRODUCT_BRANCH)
    for c in COLLECTIONS:
        split = _SplitRates(table, objects_set, branch_name("aod_objects", c))
        if math.isnan(split.khz["columnar"]):
            continue
        flat = _SplitRates(table, flat_set, branch_name("aod", c), ("columnar", "cmssw"))
        rows.append({"": SEED_TABLE1.loc[c, "particle"], **steps(split),
                     "flat file": flat.ratio("columnar", "cmssw"),
                     "seed": _num(SEED_TABLE1.loc[c, "femtocode"] / SEED_TABLE1.loc[c, "cmssw"]),
                     "floor share": _estimate(_floor_share(empty, split))})
    if rows and not math.isnan(empty.khz["columnar"]):  # the per-event floor, in the same columns
        rows.append({"": "empty product", **steps(empty), "flat file": "--", "seed": "--", "floor share": "--"})
    return pd.DataFrame(rows)


def ratio_frame(rated: pd.DataFrame, sets: list[str], collection: str) -> pd.DataFrame:
    """Per reader and input set, one collection: reading rate, its ratios to the
    columnar reader and Numpy, whole-pass ratio to rootreadspeed, MB/s
    compressed and not."""
    rows = []
    for set_name in sets:
        part = rated[(rated["set"] == set_name) & (rated["cache"] == "warm") & (rated["collection"] == collection)]
        for reader in _readers_present(part):
            row = part[part["reader"] == reader].iloc[0]
            # rates across the processes with their interval: events, values, bytes per second
            rate = lambda amount, part="read": paper.flagged(  # noqa: E731
                _estimate(rate_estimate(row, amount, part)), row["noisy"])
            ratio = lambda reference: paper.flagged(_estimate(Estimate(  # noqa: E731
                row[f"vs_{reference}"], row[f"vs_{reference}_low"], row[f"vs_{reference}_high"], 0), 2),
                row[f"vs_{reference}_noisy"])
            rows.append({"input": escape_name(set_name), "reader": LABELS[reader],
                         "kHz": rate(row["events"] / 1e3), "kHz with opening": rate(row["events"] / 1e3, "wall"),
                         "M values/s": rate(row["items"] / 1e6),
                         "/ columnar": ratio("columnar"), "/ Numpy": ratio("numpy"),
                         "/ rootreadspeed": ratio("rootreadspeed"),
                         "MB/s compr.": rate(row["bytes_compressed"] / 1e6),
                         "MB/s uncompr.": rate(row["bytes_uncompressed"] / 1e6)})
    return pd.DataFrame(rows)


def escape_name(text: str) -> str:
    """An input set's name as the tables show it: "MiniAOD-like, ZLIB", "HZZ (real), LZ4"."""

    kind, _, rest = text.partition("/")
    names = {"aod": "MiniAOD-like", "nanoaod": "NanoAOD-like", "aod_objects": "MiniAOD-like objects"}
    if kind in names:
        return paper.escape(f"{names[kind]}, {rest}")
    return paper.escape(text)


def compression_frame(table: pd.DataFrame, unreadable: pd.DataFrame, inputs: dict[str, dict[str, Any]],
                      collection: str) -> pd.DataFrame:
    """NanoAOD-like files in every compression: reading rate (kHz) of one collection per reader."""
    branch = branch_name("nanoaod", collection)
    sets = {spec["compression"]: name for name, spec in inputs.items()
            if spec["layout"] == "nanoaod" and spec["role"] in ("main", "scan")}
    order = [c for c in COMPRESSIONS if c in sets]
    part = table[table["set"].isin(sets.values())]
    rows = []
    for reader in _readers_present(part):
        column = "khz" if reader == "rootreadspeed" else "khz_read"
        rows.append({"reader": LABELS[reader], **{c: _cell(table, unreadable, sets[c], "warm", reader, branch, column)
                                                  for c in order}})
    return pd.DataFrame(rows)


def real_frame(table: pd.DataFrame, unreadable: pd.DataFrame, inputs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The real files: reading rate (kHz) per reader for each file (HZZ: jets' Px; NanoAOD: jets' pT)."""
    sets = [name for name, spec in inputs.items() if spec["role"] == "real"]
    columns = {}
    for name in sets:
        spec = inputs[name]
        label = ("HZZ " if spec["layout"] == "hzz" else "NanoAOD ") + spec["compression"]
        if label in columns.values():
            label += " (" + Path(spec["root"][0]).stem.replace("uproot-HZZ", "").strip("-") + ")"
        columns[name] = label
    part = table[table["set"].isin(sets)]
    present = set(part["reader"]) | set(unreadable[unreadable["set"].isin(sets)]["reader"])
    rows = []
    for reader in [r for r in READERS if r in present]:
        rows.append({"reader": LABELS[reader], **{
            columns[name]: _cell(table, unreadable, name, "warm", reader, branch_name(inputs[name]["layout"], "Jet"),
                                 "khz_read") for name in sets}})
    return pd.DataFrame(rows)


def cold_frame(table: pd.DataFrame, sets: list[str], collection: str | None) -> pd.DataFrame:
    """Warm against cold page cache for one collection (whole passes, opening included: a cold
    open reads from the device), each rate across its processes with its interval, and their
    ratio with Welch's interval (the cache states are separate groups, not paired)."""
    rows = []
    for set_name in sets:
        part = table[(table["set"] == set_name) & (table["collection"] == collection)]
        for reader in _readers_present(part, extra=()):
            branch = part["branch"].iloc[0]
            warm, cold = (summary_row(table, set_name, cache, reader, branch) for cache in ("warm", "cold"))
            if warm is None or cold is None:
                continue
            rows.append({"input": escape_name(set_name), "reader": LABELS[reader],
                         "warm kHz": _estimate(whole_pass_khz(warm)), "cold kHz": _estimate(whole_pass_khz(cold)),
                         "cold / warm": _estimate(cold_over_warm(table, set_name, reader, branch), 2)})
    if not rows:
        rows.append({"input": "no cold-cache runs", "reader": "", "warm kHz": "", "cold kHz": "", "cold / warm": ""})
    return pd.DataFrame(rows)


def open_frame(table: pd.DataFrame, sets: list[str]) -> pd.DataFrame:
    """Milliseconds to open one file and find the branch per reader, and its share of a whole
    pass, across the processes with their intervals (analysis.opening_ms)."""
    rows = []
    for set_name in sets:
        part = table[(table["set"] == set_name) & (table["cache"] == "warm") & (table["reader"] != "rootreadspeed")]
        # the memory method opens no file: it has no row here
        for reader in [r for r in _readers_present(part, extra=()) if READER_BY_NAME[r].format != "memory"]:
            rows.append({"input": escape_name(set_name), "reader": LABELS[reader],
                         "ms per file": _estimate(opening_ms(table, set_name, reader)),
                         "share of the pass": _estimate(opening_ms(table, set_name, reader, share=True), 2)})
    return pd.DataFrame(rows)


# --- figures and numbers for the paper ------------------------------------------------------------

BYTES_PER_VALUE = 4  # float32, decompressed


def plot_timeline(ax, line: pd.DataFrame) -> None:
    """Figure 1's analogue: ns per value against values read since the process
    started, warm-up pass hollow; right axis MB/s of decompressed values."""
    for reader in [r for r in TIMELINE_READERS if r in set(line["reader"])]:
        part = line[line["reader"] == reader].sort_values("items")
        ax.plot(part["items"], part["ns_per_item"], "-", color=COLORS[reader], alpha=0.5, lw=1)
        for warm, style in ((True, "none"), (False, COLORS[reader])):
            sel = part[part["warmup"] == warm]
            ax.plot(sel["items"], sel["ns_per_item"], "o", ms=4, color=COLORS[reader], markerfacecolor=style,
                    label=f"{LABELS[reader]}{' (warm-up pass)' if warm else ''}")
    ax.set_yscale("log")
    ax.set_xlabel("values read since the process started")
    ax.set_ylabel("ns per value")
    right = ax.secondary_yaxis("right", functions=(lambda ns: BYTES_PER_VALUE * 1e3 / np.maximum(ns, 1e-9),
                                                   lambda mb: BYTES_PER_VALUE * 1e3 / np.maximum(mb, 1e-9)))
    right.set_ylabel("MB/s of decompressed values")
    ax.legend(fontsize="xx-small", ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.14))


def plot_table1(ax, table: pd.DataFrame, set_name: str, layout: str) -> None:
    """Table 1 as bars: reading rate (kHz, log) per particle type and reader; the seed's three columns as markers."""
    part = table[(table["set"] == set_name) & (table["cache"] == "warm")]
    collections = [c for c in COLLECTIONS if c in set(part["collection"])]
    readers = [r for r in READERS if r in set(part["reader"])]
    width = 0.8 / max(1, len(readers))
    for i, reader in enumerate(readers):
        values = [_rate(table, set_name, "warm", reader, branch_name(layout, c), "khz_read") for c in collections]
        ax.bar(np.arange(len(collections)) + (i - (len(readers) - 1) / 2) * width, values, width,
               label=LABELS[reader], color=COLORS[reader])
    for column, marker in (("cmssw", "v"), ("draw", "s"), ("femtocode", "^")):
        ax.plot(range(len(collections)), [SEED_TABLE1.loc[c, column] for c in collections], marker, color="k",
                ms=7, markerfacecolor="none", label={"cmssw": "seed: CMSSW", "draw": "seed: TTree::Draw",
                                                     "femtocode": "seed: FemtoCode reader"}[column])
    ax.set_xticks(range(len(collections)), [SEED_TABLE1.loc[c, "particle"] for c in collections],
                  fontsize="small")
    ax.set_yscale("log")
    ax.set_ylabel("kHz per process (reading)")


# The parts of the columnar reader's time (analysis._columnar_split), in the order the figure stacks them.
TIME_SPLIT = (("baskets_share", "ROOT reads and decompresses the baskets", "#4c72b0"),
              ("checksum_share", "checksum (every reader's, Numpy's too)", "#dd8452"),
              ("sampling_share", "rate samples (clock reads)", "#c44e52"),
              ("per_entry_share", "per-entry TBranch::GetEntry calls", "#8172b3"))


def plot_time_split(ax, goals: dict[str, dict[str, Any]]) -> None:
    """Where the columnar reader's reading time goes, one stacked bar per layout
    ({label: targets(...)}), ns per value; the Numpy baseline's time below it."""
    labels = list(goals)
    for row, label in enumerate(labels):
        goal = goals[label]
        if goal["baskets_share"] != goal["baskets_share"]:  # no baskets limit beside it: one unsplit bar
            ax.barh(2 * row, goal["columnar_ns_per_item"], color="white", edgecolor="0.3", hatch="//",
                    label="not split (no baskets limit measured)")
        else:
            left = 0.0
            for key, text, colour in TIME_SPLIT:
                width = goal[key] * goal["columnar_ns_per_item"]
                ax.barh(2 * row, width, left=left, color=colour, label=text)
                left += width
        ax.barh(2 * row + 0.8, goal["numpy_ns_per_item"], color="0.6", label="Numpy baseline")
    ax.set_yticks([2 * r for r in range(len(labels))] + [2 * r + 0.8 for r in range(len(labels))],
                  [f"{label}: columnar C++" for label in labels] + [f"{label}: Numpy" for label in labels],
                  fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("ns per value (reading, warm cache)")
    handles, texts = ax.get_legend_handles_labels()
    unique = dict(zip(texts, handles))  # one entry per part, whichever layout drew it first
    ax.legend(unique.values(), unique.keys(), fontsize="x-small", loc="upper center", ncol=2,
              bbox_to_anchor=(0.5, -0.25))


def timeline_figure(frame: pd.DataFrame, params: dict[str, Any]):
    """Figure 1's analogue (plot_timeline) for the timeline's collection, MiniAOD-like, warm cache."""
    import matplotlib.pyplot as plt  # here, not at the top: only a notebook draws (0.5 s to import)

    aod_set, _ = main_sets(params["compression"])
    fig, ax = plt.subplots(figsize=(9, 6))
    plot_timeline(ax, timeline(frame, aod_set, branch_name("aod", params["timeline_collection"])))
    ax.set_title(f"{params['timeline_collection']} pT, MiniAOD-like layout, warm cache", fontsize="small")
    return fig


def table1_figure(table: pd.DataFrame, params: dict[str, Any]):
    """Table 1 as bars (plot_table1), the MiniAOD-like and NanoAOD-like layouts side by side."""
    import matplotlib.pyplot as plt  # here, not at the top: only a notebook draws (0.5 s to import)

    fig, axes = plt.subplots(1, 2, figsize=(16, 7), sharey=True)
    for ax, set_name, layout in zip(axes, main_sets(params["compression"]), ("aod", "nanoaod")):
        plot_table1(ax, table, set_name, layout)
        ax.set_title(escape_name(set_name), fontsize="small")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize="x-small", bbox_to_anchor=(0.5, -0.12))
    return fig


def time_split_figure(goals: dict[str, dict[str, Any]], params: dict[str, Any]):
    """Where the columnar reader's time goes in both layouts (plot_time_split of the layouts'
    targets, analysis.layout_targets), warm cache."""
    import matplotlib.pyplot as plt  # here, not at the top: only a notebook draws (0.5 s to import)

    fig, ax = plt.subplots(figsize=(9, 4))
    plot_time_split(ax, goals)
    ax.set_title(f"{params['timeline_collection']} pT, warm cache", fontsize="small")
    return fig


def _own_work_macros(goal: dict[str, Any], layout: str) -> dict[str, str]:
    """What of the columnar reader's time is its own work (the checksum and the rate samples, round
    by round with its interval: analysis.own_work_share) against the gap to the Numpy baseline (the
    share of its time Numpy does not spend: one less Numpy's time over its own, paired round by
    round, with its interval): removing its own work can close at most that much. RcOwnWork<layout>State
    (the section words each): notsplit (no baskets limit measured), nogap (Numpy not measured, or the
    gap's whole interval at or below zero), less (its own work's whole interval below the gap's),
    atleast (at or above it) or notseparated (the intervals overlap, or one round gave none); with
    both shares in percent and their bounds."""
    own = goal["own_work"]
    gap = goal["numpy"].one_less()  # the columnar reader's rate over Numpy's = Numpy's time over its own
    if math.isnan(own.value):
        state = "notsplit"
    elif math.isnan(gap.value) or (gap.known and gap.high <= 0):
        state = "nogap"
    elif own.known and gap.known and own.high < gap.low:
        state = "less"
    elif own.known and gap.known and own.low >= gap.high:
        state = "atleast"
    else:
        state = "notseparated"
    return {f"RcOwnWork{layout}State": state, f"RcOwnWork{layout}Percent": _percent_with_bounds(own),
            f"RcOwnWork{layout}GapPercent": _percent_with_bounds(gap)}


def _percent_with_bounds(share: Estimate) -> str:
    """A share that may lie near zero or below it (a difference of two times) in percent with its
    two bounds (paper.with_bounds); "--" where not measured."""
    return paper.with_bounds(share, 2, 100, r"\%", missing="--")


def _numpy_macros(goal: dict[str, Any], layout: str) -> dict[str, str]:
    """The numpy target's state on one layout (RcNumpy<layout>State; the section words each):
    notmeasured (the columnar reader or the Numpy baseline was not run), met, inconclusive,
    missed, or missednosplit (missed, with no baskets limit measured beside it to split the gap).
    A missed one's gap splits, from the baskets limit, as a product of ratios: the columnar
    reader's time is the baskets' (read, decompressed, checksummed with no per-entry call) plus its
    per-entry calls; RcNumpy<layout>GapState says which takes most of the columnar reader's time,
    by the per-entry calls' share paired round by round (analysis.per_entry_share): perentry where its
    whole interval is at or above one half, baskets where below, notseparated where the interval holds
    one half (or one round gave none).
    With the ratio's interval, the baskets' rate over Numpy's (paired round by round, with its interval)
    and the values per event."""
    baskets = goal["baskets_numpy_ratio"]
    if math.isnan(goal["numpy_ratio"]):
        state = paper.NOT_MEASURED
    elif goal["numpy_verdict"] is not Verdict.MISSED:
        state = paper.state(goal["numpy_verdict"])
    else:
        state = "missednosplit" if math.isnan(baskets) else "missed"
    gap = paper.NOT_MEASURED
    if state == "missed":  # by the interval of the per-entry calls' share, never its value alone
        gap = {Verdict.MET: "perentry", Verdict.MISSED: "baskets"}.get(intervals.at_least(goal["per_entry"], 0.5),
                                                                         "notseparated")
    # the ratio's interval as its two bounds (paper/paper.tex words them)
    interval = paper.interval(goal["numpy"]) if state in ("met", "inconclusive") else "--"
    return {f"RcNumpy{layout}State": state, f"RcNumpy{layout}GapState": gap,
            f"RcNumpy{layout}Interval": interval,
            f"RcNumpy{layout}Baskets": _estimate(goal["baskets_numpy"], 2),  # paired round by round
            f"RcNumpy{layout}PerEvent": (rf"\num{{{goal['per_event']:.1f}}}" if math.isfinite(goal["per_event"])
                                         else "--")}


def _busy_macros(load: float) -> dict[str, str]:
    """Whether the machine was busy while the readers ran (RcNumpyBusyState: busy where the mean
    one-minute load was over 1.5, else quiet) and that load: said beside a missed numpy target."""
    return {"RcNumpyBusyState": "busy" if load > 1.5 else "quiet", "RcNumpyMeanLoad": rf"\num{{{load:.1f}}}"}


def _columnar_macros(columnar_vs_cmssw: Estimate) -> dict[str, str]:
    """The columnar reader against the CMSSW-like one (their paired ratio): RcColumnarState higher
    (still faster), lower (no longer faster), notseparated, or notcompared where no round held
    both; the section words each."""
    if not columnar_vs_cmssw.processes:
        return {"RcColumnarState": "notcompared"}
    return {"RcColumnarState": paper.comparison_state(columnar_vs_cmssw)}


def _attributes_macros(slowdown: list[float], attributes: list[int] | None) -> dict[str, str]:
    """Does the CMSSW-like reader's slowdown follow the attributes it reads (per particle type,
    `attributes` counted in the file, None where fewer than three types were read)?
    RcAttributesState toofew, same (every type has as many attributes), cannotreach (with so
    few types the exact test's smallest p-value, 1/n!, is above 5%: no outcome could be a
    finding, so none is reported, only the types it needs, RcAttributesNeeded), or by the exact
    permutation test at 5% grows, shrinks or notshown, with the number of types, the rank
    correlation, the one-sided p-value of growing and the smallest one the types can give;
    the section words each."""
    if attributes is None:
        return {"RcAttributesState": "toofew"}
    if len(set(attributes)) < 2:
        return {"RcAttributesState": "same"}
    types, needed = len(slowdown), next(n for n in itertools.count(2) if 1 / math.factorial(n) <= 0.05)
    if 1 / math.factorial(types) > 0.05:
        return {"RcAttributesState": "cannotreach", "RcAttributesTypes": str(types),
                "RcAttributesPSmallest": f"{1 / math.factorial(types):.2g}", "RcAttributesNeeded": str(needed)}
    rho, p_grows, p_shrinks = rank_correlation(slowdown, attributes)
    state = "grows" if p_grows <= 0.05 else "shrinks" if p_shrinks <= 0.05 else "notshown"
    return {"RcAttributesState": state, "RcAttributesTypes": str(len(slowdown)), "RcAttributesRho": f"{rho:.2f}",
            "RcAttributesPGrows": f"{p_grows:.2g}", "RcAttributesPSmallest": f"{1 / math.factorial(len(slowdown)):.2g}"}


def _rootreadspeed_macros(goals: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The rootreadspeed target's outcome over the layouts measured ({label: targets(...)}):
    RcRrsState names which verdicts occur, "slower" (some missed), then "met", then "open"
    (inconclusive), e.g. slowermet, metopen (notmeasured: rootreadspeed was not run); the section
    words each. RcRrsMissed, RcRrsMet and RcRrsOpen: the layouts of each verdict ("--": none)."""
    goals = {label: goal for label, goal in goals.items() if goal["rootreadspeed_ratio"] == goal["rootreadspeed_ratio"]}
    by = {verdict: [label for label, goal in goals.items() if goal["rootreadspeed_verdict"] is verdict]
          for verdict in Verdict}
    met, missed, open_ = by[Verdict.MET], by[Verdict.MISSED], by[Verdict.INCONCLUSIVE]
    state = "slower" * bool(missed) + "met" * bool(met) + "open" * bool(open_)
    return {"RcRrsState": state or paper.NOT_MEASURED,
            **{name: paper.escape(" and ".join(labels)) if labels else "--"
               for name, labels in (("RcRrsMissed", missed), ("RcRrsMet", met), ("RcRrsOpen", open_))}}


def _outcome_macros(name: str, reader: str, table: pd.DataFrame, unreadable: pd.DataFrame) -> dict[str, str]:
    """Which input sets `reader` read in this run, and which not: Rc<name>OutcomeState notrun (it
    read none and failed on none: not among the configured readers), read (no set unread) or
    readsome; the sets read (Rc<name>ReadSets, with Rc<name>ReadSetsState none, one or several:
    paper.count_state) and the unread ones (Rc<name>Unread, "--": none), each
    \\rcunread{outcome}{set}{reason} with the failures table's outcome and the short reason
    (failure_summary), escaped; paper/sections/reader_comparison.tex words each state."""
    read = sorted(set(table[table["reader"] == reader]["set"]))
    unread = unreadable[unreadable["reader"] == reader].drop_duplicates(["set", "record"])
    state = "notrun" if not read and unread.empty else "readsome" if len(unread) else "read"
    items = [rf"\rcunread{{{paper.escape(UNREAD_RECORDS[row.record])}}}{{{paper.escape(row.set)}}}"
             rf"{{{paper.escape(failure_summary(row.message))}}}" for row in unread.itertuples()]
    return {f"Rc{name}OutcomeState": state, f"Rc{name}ReadSets": str(len(read)),
            f"Rc{name}ReadSetsState": paper.count_state(len(read)), f"Rc{name}Unread": "; ".join(items) or "--"}


def _cannot_macros(name: str, reader: str, unreadable: pd.DataFrame) -> dict[str, str]:
    """Which compressions `reader` cannot read in this run (its cannot_read records): Rc<name>CannotState
    none or some, and the compressions (Rc<name>Cannot, "--": none) in COMPRESSIONS' order, each an
    item \\rcuncompressed (the compression none) or \\rccompressed{compression}, escaped, joined
    by \\rcand; paper/sections/reader_comparison.tex words each."""
    cannot = unreadable[(unreadable["reader"] == reader) & (unreadable["record"] == "cannot_read")]
    compressions = sorted(set(cannot["compression"]), key=lambda c: COMPRESSIONS.index(c) if c in COMPRESSIONS else 9)
    items = [r"\rcuncompressed" if c == "none" else rf"\rccompressed{{{paper.escape(c)}}}" for c in compressions]
    return {f"Rc{name}CannotState": "some" if items else "none", f"Rc{name}Cannot": r"\rcand ".join(items) or "--"}


def paper_macros(params: dict[str, Any], table: pd.DataFrame, rated: pd.DataFrame, unreadable: pd.DataFrame,
                 inputs: dict[str, dict[str, Any]], compiler: str, *, frame: pd.DataFrame, goals: dict[str, Any],
                 noise_settings: Any, archived: list[Any]) -> dict[str, str]:
    """Every number and sentence the paper section quotes, named Rc...; measured, never typed: the
    runs' numbers, the warm passes' page-cache residency and the noise control (both from the
    measured rows, `frame`), and which archived machines are shown. Each part is its own function:
    what was read and how, the seed-000 targets of each layout (`goals`: analysis.layout_targets),
    the readers' ratios, the CMSSW-like reader's attributes, and the rows' own accounts (looks,
    residency, noise, machines)."""
    compression = params["compression"]
    aod, nano = main_sets(compression)
    timeline = params["timeline_collection"]
    looks = experiment.Looks.of(params)
    return {
        **_object_macros(params, table, inputs),
        **_read_macros(params, table, inputs, aod, nano, compiler, noise_settings),
        **_target_macros(goals),
        **_busy_macros(float(table["load_avg_1min"].mean())),
        **_reader_ratio_macros(table, frame, unreadable, aod, nano, timeline, looks),
        **_cmssw_attribute_macros(table, aod, timeline, inputs),
        **ledger.looks_macros("Rc", looks, frame, ledger.deciding("reader_comparison", DECIDING_FIGURES)),
        **residency_macros(frame),
        **noise_sentences.paper_macros("Rc", frame, noise_settings, section="reader_comparison"),
        **section_macros("Rc", archived, "reader_comparison"),
    }


def _read_macros(params: dict[str, Any], table: pd.DataFrame, inputs: dict[str, dict[str, Any]], aod: str, nano: str,
                 compiler: str, noise_settings: Any) -> dict[str, str]:
    """What the run read and how: its input sets (events, files and branches counted in the
    files, the compressions scanned, the real files; `aod` and `nano` the main sets), the particle
    types, rounds and sampling."""
    def events(name: str) -> float:  # the events the set's files hold, counted in them (not as read:
        if name not in inputs:       # a sample may stop before the files' end, at noise.max_sample_s)
            return math.nan
        return float(sum(tree_metadata(path, tree_name(inputs[name]["layout"])).num_entries
                         for path in inputs[name]["root"]))

    scans = [v["compression"] for v in inputs.values() if v["role"] == "scan"]
    scan_events = max([events(k) for k, v in inputs.items() if v["role"] == "scan"], default=0)
    scan_sentence = (f"NanoAOD-like files in {', '.join(scans)} ({scan_events:.0f} events each)" if scans
                     else "no other compression in this run")
    hzz = [("uncompressed" if v["compression"] == "none" else v["compression"])
           for v in inputs.values() if v["role"] == "real" and v["layout"] == "hzz"]
    nano_real = any(v["role"] == "real" and v["layout"] == "nanoaod" for v in inputs.values())
    real_parts = ([f"the HZZ file ({', '.join(hzz)})"] if hzz else []) + (["the real NanoAOD file"] if nano_real else [])
    files = lambda name: len(inputs[name]["root"]) if name in inputs else 0  # noqa: E731
    real_events = {}  # layout -> events in the file (every compression of the HZZ file holds the same events)
    for name, spec in inputs.items():
        if spec["role"] == "real" and (table["set"] == name).any():
            real_events.setdefault(spec["layout"], events(name))
    real_caption = ", ".join(f"{'HZZ' if layout == 'hzz' else 'NanoAOD'} {_num(v)} events"
                             for layout, v in real_events.items()) or "none in this run"

    def branches(name):  # branches of the set's first file, counted in the file
        if name not in inputs:
            return "--"
        return _num(len(tree_metadata(inputs[name]["root"][0], tree_name(inputs[name]["layout"])).keys()))

    return {
        "RcNumpyTarget": _num(100 * NUMPY_TARGET),
        "RcNanoBranches": branches(nano), "RcAodBranches": branches(aod),
        "RcRealEvents": real_caption,
        "RcCompression": paper.escape(params["compression"]),
        # events in the files (the workflow's NanoAOD-like files hold datasets.events_per_file events each)
        "RcNanoEvents": _num(events(nano)), "RcNanoFiles": str(files(nano)),
        "RcAodEvents": _num(events(aod)), "RcAodFiles": str(files(aod)),
        "RcScanSentence": paper.escape(scan_sentence),
        "RcRealFiles": paper.escape(" and ".join(real_parts) if real_parts else "none in this run"),
        # the particle types read (the config's collections; the seed read six)
        "RcCollectionsRead": paper.escape(_listed([SEED_TABLE1.loc[c, "particle"] for c in params["collections"]])),
        "RcRepetitions": str(params["repetitions"]), "RcWarmup": str(params["warmup"]),
        "RcRootreadspeedCopies": paper.escape(_listed([str(c) for c in ROOTREADSPEED_COPIES])),
        "RcMinSampleS": f"{noise_settings.min_sample_s:g}",  # what rootreadspeed's last listing reads for
        "RcSampleEvery": _num(params["sample_every"]),
        "RcTimelineCollection": paper.escape(SEED_TABLE1.loc[params["timeline_collection"], "particle"]),
        "RcCompiler": paper.escape(compiler),
    }


def _target_macros(goals: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Seed 000's targets on each layout's timeline branch (analysis.layout_targets): the Numpy
    baseline's ratios and states, the ns per value, Figure 6's split of the columnar reader's time,
    and the fastest C++ method against rootreadspeed."""
    goal_aod, goal_nano = goals["MiniAOD-like"], goals["NanoAOD-like"]
    by_layout = (("Aod", goal_aod), ("Nano", goal_nano))
    return {
        # paired round by round, with the 95% interval its verdict comes from
        "RcNumpyRatioAod": _estimate(goal_aod["numpy"], 2), "RcNumpyRatioNano": _estimate(goal_nano["numpy"], 2),
        "RcNumpyRatioWithOpenAod": _estimate(goal_aod["numpy_with_open"], 2),
        # each layout's state (the section explains the MiniAOD-like one's gap)
        **_numpy_macros(goal_aod, "Aod"), **_numpy_macros(goal_nano, "Nano"),
        # ns per value across the processes; the per-entry calls' share of the columnar reader's time
        # paired round by round with the baskets limit; each with its interval
        **{f"Rc{reader.capitalize()}Ns{name}": _estimate(goal[f"{reader}_ns"])
           for name, goal in by_layout for reader in ("columnar", "baskets", "numpy")},
        # a share that may lie near zero: its two bounds, not a relative plus-or-minus
        "RcPerEntryShareAod": _percent_with_bounds(goal_aod["per_entry"]),
        "RcPerEntryShareNano": _percent_with_bounds(goal_nano["per_entry"]),
        # the four parts of Figure 6's split (medians)
        "RcPerEntryPercentAod": _num(100 * goal_aod["per_entry_share"], 2),
        "RcPerEntryPercentNano": _num(100 * goal_nano["per_entry_share"], 2),
        **{f"Rc{part}Percent{name}": _num(100 * goal[key], 2)
           for name, goal in by_layout
           for part, key in (("Checksum", "checksum_share"), ("Sampling", "sampling_share"),
                             ("Decompress", "baskets_share"))},
        **_own_work_macros(goal_aod, "Aod"), **_own_work_macros(goal_nano, "Nano"),  # the section words each
        "RcBasketsVsNumpyAod": _estimate(goal_aod["baskets_numpy"], 2),  # paired round by round
        "RcBasketsVsNumpyNano": _estimate(goal_nano["baskets_numpy"], 2),
        # every C++ method tested against rootreadspeed at once (analysis.fastest_against)
        "RcRrsCandidates": str(goal_aod["rootreadspeed_candidates"]),
        "RcRrsLevel": _num(100 * intervals.bonferroni(goal_aod["rootreadspeed_candidates"]), 3),
        "RcFastestCpp": paper.escape(LABELS.get(goal_aod["fastest_cpp"], "none")),
        "RcRrsRatioAod": _estimate(goal_aod["rootreadspeed"], 2),
        "RcFastestCppNano": paper.escape(LABELS.get(goal_nano["fastest_cpp"], "none")),
        "RcRrsRatioNano": _estimate(goal_nano["rootreadspeed"], 2),
        **_rootreadspeed_macros(goals),  # the section words it
    }


def _reader_ratio_macros(table: pd.DataFrame, frame: pd.DataFrame, unreadable: pd.DataFrame, aod: str, nano: str,
                         timeline: str, looks: experiment.Looks) -> dict[str, str]:
    """Each reader against the columnar one on the MiniAOD-like timeline branch (how many times
    slower, or its rate's ratio), its first pass over its later ones, its opening time, the cold
    read, seed 000's Table 1 for the CMSSW-like reader and TTree::Draw's muon anomaly, and the
    Java readers' states."""
    branch = branch_name("aod", timeline)

    def times(reader: str, slower: bool = False, digits: int = 2) -> str:
        """`reader`'s reading rate per value on the MiniAOD-like set over the columnar reader's (or
        how many times slower: `slower`), paired round by round, with its interval (for a figure
        that decides a claim, at the level its looks split: core.experiment.Looks)."""
        if slower:
            deciding = reader in DECIDING_FIGURES.values()
            return _estimate(slowdown(table, aod, branch, reader,
                                      looks.confidence if deciding else intervals.CONFIDENCE), digits)
        return _estimate(warm_paired_ratio(table, aod, branch, reader, "columnar"), digits)

    def warmup(reader: str) -> str:
        """`reader`'s first pass over its timed ones on the timeline's branch, within each process, across
        the processes with its interval."""
        return _estimate(warmup_factor(frame, aod, branch, reader), 2)

    def open_ms(reader):
        return _estimate(opening_ms(table, nano, reader))

    return {
        "RcJavaVsCpp": times("laurelin", slower=True),
        "RcUprootVsCpp": times("uproot", slower=True),
        "RcCmsswVsColumnar": times("cmssw", slower=True, digits=3),
        **_table_one_cmssw_macros(table, aod),
        "RcDrawVsColumnar": times("draw", slower=True),
        # TTree::Draw's muon anomaly (seed 000: a factor of 50), its first call, and its rate against Numpy's
        "RcDrawSlowdownMuon": _estimate(slowdown(table, aod, branch_name("aod", "Muon"), "draw"), 2),
        "RcDrawWarmup": warmup("draw"),
        "RcDrawOverNumpyAod": _estimate(warm_paired_ratio(table, aod, branch, "draw", "numpy"), 2),
        # the muons' rate over the others' median, round by round, with its interval
        "RcDrawMuon": _estimate(draw_muon_ratio(table, aod, "aod"), 2),
        "RcRdfVsColumnar": times("rdataframe", slower=True),
        "RcRntupleVsColumnar": times("rntuple"),
        "RcBulkVsColumnar": times("bulk"),
        # the same values passed over from memory, over the columnar reader's pass that loads them from
        # the files (seed 000's cache gain): paired round by round in the same process
        "RcMemoryVsColumnar": times("memory", digits=3),
        "RcOpenColumnarMs": open_ms("columnar"), "RcOpenUprootMs": open_ms("uproot"),
        "RcOpenLaurelinMs": open_ms("laurelin"), "RcOpenNumpyMs": open_ms("numpy"),
        "RcColdColumnar": _estimate(cold_over_warm(table, nano, "columnar", branch_name("nanoaod", timeline)), 2),
        **_cannot_macros("Laurelin", "laurelin", unreadable),  # the section words its states
        "RcJavaWarmup": warmup("laurelin"),
        "RcRootFourJVsCpp": times("root4j", slower=True),
        "RcRootFourJWarmup": warmup("root4j"),
        # its first rate sample of a process over the same sample of its later passes, C++ beside it
        # (NanoAOD-like: a pass of the MiniAOD-like timeline branch holds fewer values than one sample)
        **{f"Rc{name}StartSpike": _estimate(start_spike(frame, nano, branch_name("nanoaod", timeline), reader), 2)
           for name, reader in (("RootFourJ", "root4j"), ("Cpp", "columnar"))},
        "RcOpenRootFourJMs": open_ms("root4j"),
        **_outcome_macros("RootFourJ", "root4j", table, unreadable),  # the section words its states
        "RcRootFourJCommit": paper.escape(ROOT4J_COMMIT[:7]),
        "RcCppWarmup": warmup("columnar"),
    }


def _cmssw_attribute_macros(table: pd.DataFrame, aod: str, timeline: str,
                            inputs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Does the CMSSW-like reader's slowdown follow the attributes it reads? Its rank correlation
    over the particle types of the MiniAOD-like files (attributes counted in the file), and the
    columnar reader against the CMSSW-like one on the timeline branch, paired round by round (one
    set's readers share rounds)."""
    cmssw_slowdown = {c: _rate(table, aod, "warm", "columnar", branch_name("aod", c), "khz_read")
                      / _rate(table, aod, "warm", "cmssw", branch_name("aod", c), "khz_read") for c in COLLECTIONS}
    cmssw_slowdown = {c: v for c, v in cmssw_slowdown.items() if not math.isnan(v)}
    attributes = None
    if len(cmssw_slowdown) >= 3 and aod in inputs:
        counts = collection_attributes(inputs[aod]["root"][0], tree_name("aod"),
                                       [branch_name("aod", c) for c in cmssw_slowdown])
        attributes = [counts[branch_name("aod", c)] for c in cmssw_slowdown]
    columnar_vs_cmssw = warm_paired_ratio(table, aod, branch_name("aod", timeline), "columnar", "cmssw")
    return {**_columnar_macros(columnar_vs_cmssw),  # states; the section words each
            **_attributes_macros(list(cmssw_slowdown.values()), attributes)}


def _table_one_cmssw_macros(table: pd.DataFrame, aod: str) -> dict[str, str]:
    """Seed 000's Table 1 on the MiniAOD-like set, per particle type: how many times slower the
    CMSSW-like reader is than the columnar one (RcCmsswSlowdown<Type>, paired round by round at the
    study's level; "--" for a type not read), its rate in kHz (RcCmsswKhz<Type>, across its
    processes) and the decompressed bytes it reads over the columnar reader's (RcCmsswBytes<Type>:
    what every pass reads alike, exact)."""
    found = {}
    for c in COLLECTIONS:
        branch = branch_name("aod", c)
        cmssw, columnar = (summary_row(table, aod, "warm", reader, branch) for reader in ("cmssw", "columnar"))
        found[f"RcCmsswSlowdown{c}"] = _estimate(slowdown(table, aod, branch, "cmssw"), 3)
        found[f"RcCmsswKhz{c}"] = "--" if cmssw is None else _estimate(rate_estimate(cmssw, cmssw["events"] / 1e3), 3)
        ratio = (cmssw["bytes_uncompressed"] / columnar["bytes_uncompressed"]
                 if cmssw is not None and columnar is not None else math.nan)
        found[f"RcCmsswBytes{c}"] = paper.exact(ratio, 3) if math.isfinite(ratio) and ratio > 0 else "--"
    return found


def _object_macros(params: dict[str, Any], table: pd.DataFrame, inputs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The split-object file's numbers (Rc...Object...), for the timeline's particle type:
    CMSSW-like / columnar on objects and the two steps between them (one interleaved group)."""
    objects_set, aod_set = named_set("aod_objects", params["compression"]), named_set("aod", params["compression"])
    c = params["timeline_collection"]
    split = _SplitRates(table, objects_set, branch_name("aod_objects", c))
    n = lambda v, d=3: _num(v, d)  # noqa: E731
    measured = objects_set in inputs and not math.isnan(split.khz["columnar"])
    events = float(table[table["set"] == objects_set]["events"].max()) if measured else float("nan")
    bulk = table[(table["set"] == objects_set) & (table["reader"] == "bulk")]
    return {
        "RcObjectEvents": n(events),
        "RcObjectState": "measured" if measured else paper.NOT_MEASURED,
        "RcObjectCmsswVsColumnar": split.ratio("columnar", "cmssw"),
        "RcObjectMembersVsColumnar": split.ratio("columnar", "members"),
        "RcObjectBuildVsMembers": split.ratio("members", "cmssw"),
        "RcObjectMembersShare": _percent_with_bounds(_members_share(split)),
        "RcObjectSeedRatio": n(SEED_TABLE1.loc[c, "femtocode"] / SEED_TABLE1.loc[c, "cmssw"]),
        # the tree compression factors, read back from the files (the seed's: SeedRcTreeCompression)
        "RcObjectTreeCompression": n(tree_compression_factor(inputs[objects_set]["root"]) if objects_set in inputs
                                     else float("nan")),
        "RcAodTreeCompression": n(tree_compression_factor(inputs[aod_set]["root"]) if aod_set in inputs
                                  else float("nan")),
        "RcObjectBulkState": "read" if len(bulk) else "refused" if measured else paper.NOT_MEASURED,
        **_floor_macros(table, objects_set, split, events),
    }


def _floor_macros(table: pd.DataFrame, objects_set: str, split: _SplitRates, events: float) -> dict[str, str]:
    """The CMSSW-like reader's per-event floor: its reading time per event on the empty product
    (microseconds, across processes), and that floor's share of its time per event on the
    timeline's particle type (paired round by round)."""
    empty = _SplitRates(table, objects_set, EMPTY_PRODUCT_BRANCH)
    floor = empty.rounds("cmssw")
    per_event = (intervals.across_timed(floor.values()).scaled(1e6 / events) if floor and math.isfinite(events)
                 else intervals.UNKNOWN)
    return {"RcObjectFloorUs": paper.flagged(_estimate(per_event), empty.noisy["cmssw"]),
            "RcObjectFloorShare": paper.flagged(_estimate(_floor_share(empty, split)),
                                                empty.noisy["cmssw"] or split.noisy["cmssw"])}


def residency_macros(frame: pd.DataFrame) -> dict[str, str]:
    """The lowest resident fraction any warm pass started from, and the
    threshold it had to reach (config key warm_min_resident)."""
    warm = frame[(frame["record"] == "timing") & (frame["cache"] == "warm")]
    lowest = warm["residency"].min() if "residency" in warm else float("nan")
    threshold = float(os.environ.get(provenance.WARM_MIN_RESIDENT_ENV, provenance.DEFAULT_WARM_MIN_RESIDENT))
    return {"RcWarmResidencyLowest": _num(100 * lowest, 4), "RcWarmMinResident": _num(100 * threshold, 4)}


def machine_frame(tables: dict[str, pd.DataFrame], aod_set: str, nano_set: str, collection: str) -> pd.DataFrame:
    """Table 1's readers on every machine shown (this one and the archived ones, each from its
    own `summary`): kHz per process (reading only, warm; rootreadspeed whole passes) of `collection`
    in the MiniAOD-like and the NanoAOD-like set, across the machine's processes with its interval (the
    value alone from one round), two columns per machine; a noisy figure is marked, "--": not measured
    there."""
    present = set().union(*(set(t["reader"]) for t in tables.values()))
    rows = []
    for reader in [r for r in READERS + ("rootreadspeed",) if r in present]:
        column = "khz" if reader == "rootreadspeed" else "khz_read"
        row = {"reader": LABELS[reader] + (" (with opening)" if reader == "rootreadspeed" else "")}
        for label, table in tables.items():
            for set_name, layout, name in ((aod_set, "aod", "MiniAOD-like"), (nano_set, "nanoaod", "NanoAOD-like")):
                row[f"{label}: {name}"] = _row_cell(
                    summary_row(table, set_name, "warm", reader, branch_name(layout, collection)), column)
        if any(cell != "--" for key, cell in row.items() if key != "reader"):
            rows.append(row)
    return pd.DataFrame(rows)
