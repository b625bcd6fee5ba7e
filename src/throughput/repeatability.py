"""Do two runs of the memory-bandwidth, the GPU-bandwidth or the reader-comparison
experiment agree? The noise-control benchmark.

    python -m throughput.repeatability RAW_DIR_A RAW_DIR_B [--margin 0.10] [--share 0.9] [--too-wide 0.1]

Reads the raw results of two runs (results/<experiment>/raw of each; which
experiment, from the rows). Memory bandwidth: each one's single-thread -O table
and STREAM ratio table as the paper builds them. Reader comparison: every
reader's reading rate per value on every input set, branch and cache state, and
its paired ratio to the columnar reader. GPU bandwidth (two archives of one kind of
GPU node, say): every run's best rate, and explode's and combine's paired ratio
to the flat add. Both runs' cells are printed side by
side with the between-run ratio and its 95% interval. Every cell is judged,
noisy or not, by equivalence (docs/statistics.md): it agrees when the whole
interval of the ratio B/A lies inside 1 +- margin (10% by default; the 95%
interval inside the margin is two one-sided tests, each at 2.5%), it differs
when the whole interval lies outside, and otherwise it is too wide to judge,
counted as such (an interval the two runs cannot tell, or a cell of one process,
without one). The exit status is 1 when fewer than `share` of the judged cells
agree, when more than `too_wide` of all cells are too wide to judge, or when
the two runs share no cell. (Overlapping intervals used to count as agreeing:
with intervals of +-12%, a true shift of 20% then "agreed" two times in three.)
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from .core import results
# each experiment's package imports its measured code and analysis on first use of a name
# (throughput.setup.spec.load_later), so importing all three here costs nothing until one is read
from .experiments import gpu_bandwidth as gb
from .experiments import memory_bandwidth as mb
from .experiments import reader_comparison as rc


def read_run(raw_dir: str | Path) -> pd.DataFrame:
    """The summary table of the raw results in `raw_dir` (its latest execution's): the reader
    comparison's (rows naming a reader) with its ratios, the GPU-bandwidth one's (rows naming a
    case), or the memory-bandwidth one's (rows naming a mode); anything else is named and refused."""
    paths = results.current_raw_files(raw_dir)
    if not paths:
        raise SystemExit(f"{raw_dir}: no raw results (*.parquet) there")
    frame = pd.concat([results.read_raw(p)[0] for p in paths], ignore_index=True)
    if "reader" in frame:
        return rc.ratios(rc.summary(frame))
    if "case" in frame:
        return gb.summary(gb.with_rates(frame, None))  # rates, not fractions: no nominal bandwidth needed
    if "mode" not in frame:
        raise SystemExit(f"{raw_dir}: rows of none of the experiments compared here "
                         "(memory bandwidth, GPU bandwidth, reader comparison)")
    return mb.summary(mb.with_rates(frame))


def _reader_cells(table: pd.DataFrame) -> pd.DataFrame:
    """Every reading rate per value (M values/s across the rounds, with its interval) and every
    ratio to the columnar reader (paired round by round) of a reader-comparison summary."""
    rows = []
    for _, row in table.iterrows():
        cell = f"{row['set']} {row['cache']} {row['reader']} {row['branch']}"
        rate = rc.rate_estimate(row, row["items"] / 1e6)
        if rate.processes:
            rows.append({"table": "M values/s", "cell": cell, "value": rate.value, "low": rate.low,
                         "high": rate.high, "noisy": bool(row["noisy"])})
        if row["reader"] != "columnar" and math.isfinite(row["vs_columnar"]):
            rows.append({"table": "/ columnar", "cell": cell, "value": row["vs_columnar"],
                         "low": row["vs_columnar_low"], "high": row["vs_columnar_high"],
                         "noisy": bool(row["vs_columnar_noisy"])})
    return pd.DataFrame(rows)


def _gpu_cells(table: pd.DataFrame) -> pd.DataFrame:
    """Every GPU-bandwidth run's best rate (G values/s, each process's best pass across the
    processes) and the jagged table's paired ratios of explode and combine to the flat add."""
    rates = pd.DataFrame({
        "table": "G values/s", "value": table["ghz_best"], "low": table["ghz_low"], "high": table["ghz_high"],
        "noisy": table["noisy"].astype(bool),
        "cell": [f"{g} {m} {c} {d} t{t}" for g, m, c, d, t in
                 zip(table["group"], table["method"], table["case"], table["dtype"], table["threads"])]})
    jagged = gb.jagged_table(table)
    ratios = [pd.DataFrame({"table": f"{op} / flat", "value": jagged[f"{op}_ratio"],
                            "low": jagged[f"{op}_ratio_low"], "high": jagged[f"{op}_ratio_high"],
                            "noisy": jagged[f"{op}_ratio_noisy"].astype(bool),
                            "cell": [f"{m} {d} t{t}" for m, d, t in
                                     zip(jagged["method"], jagged["dtype"], jagged["threads"])]})
              for op in ("explode", "combine")]
    return pd.concat([rates, *ratios], ignore_index=True)


def cells(table: pd.DataFrame) -> pd.DataFrame:
    """The measured cells a run's tables print: what, value, its interval, noisy (the -O table's
    and the ratio table's for memory bandwidth; rates and ratios for the reader comparison and
    the GPU bandwidth)."""
    if "reader" in table:
        return _reader_cells(table)
    if "case" in table:
        return _gpu_cells(table)
    opt = mb.opt_table(table)
    ratios = mb.ratio_table(table)
    return pd.concat([
        pd.DataFrame({"table": "-O", "cell": opt["mode"] + " -" + opt["opt"], "value": opt["ours_s"],
                      "low": opt["ours_low"], "high": opt["ours_high"], "noisy": opt["noisy"]}),
        pd.DataFrame({"table": "ratio", "value": ratios["ratio"], "low": ratios["ratio_low"],
                      "high": ratios["ratio_high"], "noisy": ratios["noisy"],
                      "cell": [f"{m}{' -' + o if o != 'n/a' else ''} {mode} t{t}" for m, o, mode, t in
                               zip(ratios["method"], ratios["opt"], ratios["mode"], ratios["threads"])]}),
    ], ignore_index=True)


AGREES, DIFFERS, TOO_WIDE = "agrees", "DIFFERS", "too wide"


def between_runs(value_a, low_a, high_a, value_b, low_b, high_b) -> tuple[float, float, float]:
    """The ratio B/A of one cell and its 95% interval, from each run's: every interval here is
    symmetric in logarithms (Student's t on the logarithms across processes, or on the paired
    per-round log-ratios), so the two half-widths add in quadrature on the log scale. NaN bounds
    where either run has no interval."""
    ratio = value_b / value_a
    half = math.hypot(math.log(high_a / low_a) / 2, math.log(high_b / low_b) / 2) \
        if min(low_a, high_a, low_b, high_b) > 0 else math.nan
    return ratio, ratio * math.exp(-half), ratio * math.exp(half)


def verdict(low: float, high: float, margin: float) -> str:
    """By equivalence: the interval of B/A inside [1/(1 + margin), 1 + margin] agrees, wholly
    outside it differs, anything else (a wider or unknown interval) is too wide to judge."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return TOO_WIDE
    if low >= 1 / (1 + margin) and high <= 1 + margin:
        return AGREES
    if high < 1 / (1 + margin) or low > 1 + margin:
        return DIFFERS
    return TOO_WIDE


def compare(a: pd.DataFrame, b: pd.DataFrame, margin: float = 0.10) -> pd.DataFrame:
    """Side by side: both values and intervals, the ratio B/A with its 95% interval, and each cell's
    verdict (`verdict`); `overlap` says what the old rule would have called it (intervals
    overlapping or values within 5%), for comparison only."""
    both = cells(a).merge(cells(b), on=["table", "cell"], suffixes=("_a", "_b"), validate="one_to_one")
    both["difference"] = (both["value_b"] - both["value_a"]).abs() / both["value_a"]
    ratios = [between_runs(*row) for row in both[["value_a", "low_a", "high_a", "value_b", "low_b", "high_b"]]
              .itertuples(index=False, name=None)]
    both["ratio"], both["ratio_low"], both["ratio_high"] = zip(*ratios) if ratios else ([], [], [])
    both["verdict"] = [verdict(low, high, margin) for low, high in zip(both["ratio_low"], both["ratio_high"])]
    overlapping = (both["low_a"] <= both["high_b"]) & (both["low_b"] <= both["high_a"])  # False where NaN
    both["overlap"] = overlapping | (both["difference"] <= 0.05)
    return both


def judge(table: pd.DataFrame, share: float, too_wide: float) -> tuple[bool, str]:
    """Whether the comparison passes, and the sentence that says so: at least `share` of the judged
    cells agree, at most `too_wide` of all cells are too wide to judge, and there is a cell at all."""
    counts = table["verdict"].value_counts()
    agreeing, differing, wide = (int(counts.get(v, 0)) for v in (AGREES, DIFFERS, TOO_WIDE))
    judged = agreeing + differing
    problems = []
    if table.empty:
        problems.append("the two runs share no cell")
    if judged and agreeing < share * judged:
        problems.append(f"fewer than {share:.0%} of the judged cells agree")
    if wide > too_wide * len(table):
        problems.append(f"more than {too_wide:.0%} of the cells are too wide to judge (more rounds narrow them)")
    if not table.empty and not judged:
        problems.append("no cell could be judged")
    sentence = (f"{agreeing} agree, {differing} differ, {wide} too wide to judge, of {len(table)} cells; "
                f"{int(table['overlap'].sum()) if len(table) else 0} would agree by overlapping intervals or "
                f"values within 5%")
    return not problems, sentence + ("" if not problems else ": FAILS, " + "; ".join(problems))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("raw_a")
    parser.add_argument("raw_b")
    parser.add_argument("--margin", type=float, default=0.10,
                        help="a cell agrees when the 95%% interval of its ratio B/A lies inside 1 +- margin")
    parser.add_argument("--share", type=float, default=0.9, help="smallest share of the judged cells that agree")
    parser.add_argument("--too-wide", type=float, default=0.1,
                        help="largest share of all cells too wide to judge that passes")
    args = parser.parse_args(argv)
    for name in ("margin", "share", "too_wide"):
        if not 0 < getattr(args, name) < (10 if name == "margin" else 1.0001):
            parser.error(f"--{name.replace('_', '-')} = {getattr(args, name)}: out of range")
    table = compare(read_run(args.raw_a), read_run(args.raw_b), args.margin)
    shown = table.drop(columns=["overlap"])
    print(shown.to_markdown(index=False, floatfmt=".4g"))
    passed, sentence = judge(table, args.share, args.too_wide)
    noisy = int((table["noisy_a"] | table["noisy_b"]).sum())
    print(f"\n{sentence} (margin +-{args.margin:.0%}); {noisy} flagged noisy in either run, judged all the same")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
