"""Do two runs of the memory-bandwidth, the GPU-bandwidth or the reader-comparison
experiment agree? The noise-control benchmark.

    python -m throughput.repeatability RAW_DIR_A RAW_DIR_B [--tolerance 0.05] [--share 0.9]

Reads the raw results of two runs (results/<experiment>/raw of each; which
experiment, from the rows). Memory bandwidth: each one's single-thread -O table
and STREAM ratio table as the paper builds them. Reader comparison: every
reader's reading rate per value on every input set, branch and cache state, and
its paired ratio to the columnar reader. GPU bandwidth (two archives of one kind of
GPU node, say): every run's best rate, and explode's and combine's paired ratio
to the flat add. Both runs' cells are printed side by
side with the relative difference. Every cell is judged, noisy or not: it
agrees when the two runs' 95% intervals overlap or their values differ by at
most the tolerance; the exit status is 1 when fewer than `share` of all cells
agree.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from .core import results
from .experiments import memory_bandwidth as mb


def read_run(raw_dir: str | Path) -> pd.DataFrame:
    """The summary table of the raw results in `raw_dir` (its latest execution's): the reader
    comparison's (rows naming a reader) with its ratios, the GPU-bandwidth one's (rows naming a
    case), or the memory-bandwidth one's (rows naming a mode); anything else is named and refused."""
    paths = results.current_raw_files(raw_dir)
    if not paths:
        raise SystemExit(f"{raw_dir}: no raw results (*.parquet) there")
    frame = pd.concat([results.read_raw(p)[0] for p in paths], ignore_index=True)
    if "reader" in frame:
        from .experiments import reader_comparison as rc  # here: it imports ROOT's helpers and uproot
        return rc.ratios(rc.summary(frame))
    if "case" in frame:
        from .experiments import gpu_bandwidth as gb

        return gb.summary(gb.with_rates(frame, None))  # rates, not fractions: no nominal bandwidth needed
    if "mode" not in frame:
        raise SystemExit(f"{raw_dir}: rows of none of the experiments compared here "
                         "(memory bandwidth, GPU bandwidth, reader comparison)")
    return mb.summary(mb.with_rates(frame))


def _reader_cells(table: pd.DataFrame) -> pd.DataFrame:
    """Every reading rate per value (M values/s across the rounds, with its interval) and every
    ratio to the columnar reader (paired round by round) of a reader-comparison summary."""
    from .experiments import reader_comparison as rc  # as read_run

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
    from .experiments import gpu_bandwidth as gb

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


def compare(a: pd.DataFrame, b: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """Side by side: both values and intervals, the relative difference, and each cell's verdict:
    "agrees" when the intervals overlap (an unknown interval overlaps nothing) or the values
    differ by at most `tolerance`, else "DIFFERS"."""
    both = cells(a).merge(cells(b), on=["table", "cell"], suffixes=("_a", "_b"), validate="one_to_one")
    both["difference"] = (both["value_b"] - both["value_a"]).abs() / both["value_a"]
    overlap = (both["low_a"] <= both["high_b"]) & (both["low_b"] <= both["high_a"])  # False where NaN
    both["verdict"] = ["agrees" if o or d <= tolerance else "DIFFERS" for o, d in zip(overlap, both["difference"])]
    return both


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("raw_a")
    parser.add_argument("raw_b")
    parser.add_argument("--tolerance", type=float, default=0.05,
                        help="largest relative difference of two values that agree without overlapping intervals")
    parser.add_argument("--share", type=float, default=0.9, help="smallest share of agreeing cells that passes")
    args = parser.parse_args(argv)
    table = compare(read_run(args.raw_a), read_run(args.raw_b), args.tolerance)
    print(table.to_markdown(index=False, floatfmt=".4g"))
    agreeing = int((table["verdict"] == "agrees").sum())
    noisy = int((table["noisy_a"] | table["noisy_b"]).sum())
    print(f"\n{agreeing} of {len(table)} cells agree (intervals overlapping or values within {args.tolerance:.0%}); "
          f"{noisy} of them flagged noisy in either run, judged all the same")
    return 0 if agreeing >= args.share * len(table) else 1


if __name__ == "__main__":
    sys.exit(main())
