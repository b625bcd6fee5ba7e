"""Every reader on your own file: ``python -m throughput.readers FILE [FILE ...] --branch B [--tree T]
[--readers columnar,uproot,...] [--repetitions 5] [--work DIR] [--csv OUT]``.

Runs every reader of the reader comparison (C++ columnar, bulk I/O, TTreeReader, TTree::Draw,
RDataFrame, the CMSSW-like reader, RNTuple and Numpy copies, uproot, the Java readers and
rootreadspeed) on the branches named, interleaved as the experiment measures, and prints
their rates, ratios and whether their checksums agree, and whether the values are the
file's registered reference values (or why they are unverified). A reader that fails is a
row saying why. Exit code: 0 when every reader that ran agrees, 2 on bad input (the message
names it), 3 when readers disagree or agree on other values than the file's reference, 4 when
no reader could read a branch (a damaged file: each row says why).
(The logic lives in throughput.experiments.reader_comparison.own_file.)"""
from __future__ import annotations

import argparse
import sys

from .core import harness
from .experiments.reader_comparison.own_file import ALL_READERS, WrongValues, print_table, run
from .experiments.reader_comparison.spec import ReaderError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m throughput.readers", description=__doc__.split("\n\n")[1])
    parser.add_argument("files", nargs="+", help="ROOT files holding the same tree")
    parser.add_argument("--branch", required=True, help="branch (or comma-separated branches) of numbers")
    parser.add_argument("--tree", default=None, help="the tree (default: the files' only TTree)")
    parser.add_argument("--readers", default=",".join(ALL_READERS), help=f"comma-separated, of {', '.join(ALL_READERS)}")
    parser.add_argument("--repetitions", type=int, default=5, help="measured passes per reader (interleaved)")
    parser.add_argument("--warmup", type=int, default=1, help="passes per reader before the measured one")
    parser.add_argument("--work", default=None, help="keep the RNTuple and Numpy copies and raw runs here "
                                                     "(a rerun reuses them); default: a temporary folder")
    parser.add_argument("--csv", default=None, help="also write the table here")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    try:
        result, frame, tree, notes = run(args.files, args.branch.split(","), args.tree, args.readers.split(","),
                                         args.repetitions, args.warmup, args.work, progress=not args.no_progress)
    except (ReaderError, harness.KernelError) as error:
        print(f"throughput.readers: error: {error}", file=sys.stderr)
        return 2
    except WrongValues as error:  # they agree, but not with the file's reference
        print(f"throughput.readers: the values read are not the file's reference values:\n{error}", file=sys.stderr)
        return 3
    except AssertionError as error:  # readers that ran disagree (check_agreement names them)
        print(f"throughput.readers: the readers disagree:\n{error}", file=sys.stderr)
        return 3
    print_table(result, frame, args.files, tree, notes)
    if args.csv:
        result.to_csv(args.csv, index=False)
    unread = sorted(set(result["branch"]) - set(result.loc[result["result"] == "measured", "branch"]))
    if unread:
        print(f"throughput.readers: no reader could read {', '.join(unread)} (each row above says why)",
              file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
