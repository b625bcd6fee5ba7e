"""Do two runs of the memory-bandwidth experiment agree? The noise-control benchmark.

    python -m throughput.repeatability RAW_DIR_A RAW_DIR_B [--tolerance 0.1]

Reads the raw results of two runs (results/memory_bandwidth/raw of each),
builds each one's single-thread -O table and STREAM ratio table as the paper
does, and prints them side by side with the relative difference. A cell that
either run flagged as noisy is shown but not judged; the exit status is 1 when
an unflagged cell differs by more than the tolerance.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from . import results
from .experiments import memory_bandwidth as mb


def read_run(raw_dir: str | Path) -> pd.DataFrame:
    """The summary table (mb.summary) of the raw results in `raw_dir` (its latest execution's)."""
    paths = results.current_raw_files(raw_dir)
    if not paths:
        raise SystemExit(f"{raw_dir}: no raw results (*.parquet) there")
    return mb.summary(mb.with_rates(pd.concat([results.read_raw(p)[0] for p in paths], ignore_index=True)))


def cells(table: pd.DataFrame) -> pd.DataFrame:
    """The -O table's and the ratio table's measured cells: what, value, noisy."""
    opt = mb.opt_table(table)
    ratios = mb.ratio_table(table)
    return pd.concat([
        pd.DataFrame({"table": "-O", "cell": opt["mode"] + " -" + opt["opt"], "value": opt["ours_s"],
                      "noisy": opt["noisy"]}),
        pd.DataFrame({"table": "ratio", "value": ratios["ratio"], "noisy": ratios["noisy"],
                      "cell": [f"{m}{' -' + o if o != 'n/a' else ''} {mode} t{t}" for m, o, mode, t in
                               zip(ratios["method"], ratios["opt"], ratios["mode"], ratios["threads"])]}),
    ], ignore_index=True)


def compare(a: pd.DataFrame, b: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """Side by side: both values, relative difference, and the verdict of each cell."""
    both = cells(a).merge(cells(b), on=["table", "cell"], suffixes=("_a", "_b"), validate="one_to_one")
    both["difference"] = (both["value_b"] - both["value_a"]).abs() / both["value_a"]
    both["verdict"] = ["flagged (not judged)" if na or nb else ("agrees" if d <= tolerance else "DIFFERS")
                       for na, nb, d in zip(both["noisy_a"], both["noisy_b"], both["difference"])]
    return both


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("raw_a")
    parser.add_argument("raw_b")
    parser.add_argument("--tolerance", type=float, default=0.10)
    args = parser.parse_args(argv)
    table = compare(read_run(args.raw_a), read_run(args.raw_b), args.tolerance)
    print(table.to_markdown(index=False, floatfmt=".4g"))
    judged = table[table["verdict"] != "flagged (not judged)"]
    print(f"\n{(judged['verdict'] == 'agrees').sum()} of {len(judged)} unflagged cells agree within "
          f"{args.tolerance:.0%}; {len(table) - len(judged)} cells flagged noisy in either run")
    return 0 if (judged["verdict"] == "agrees").all() else 1


if __name__ == "__main__":
    sys.exit(main())
