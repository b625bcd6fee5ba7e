"""Every reader of the comparison on a file the user names (``python -m throughput.readers``).

ROOT's ``rootreadspeed`` times one reader on a user's branches; this runs all of them
(the C++ methods, uproot, the Java readers, RNTuple and Numpy copies made here) on
the same file and branches, measured exactly as the experiment measures them
(``measuring.measure``: interleaved rounds, warm files, every run's load recorded
and a noisy run re-measured or flagged), and reports their rates, their ratio to
the fastest, and whether their checksums agree. Any numeric branch (float, double,
the integer types, bool; one value, a fixed array or a collection per event)."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import noise
from .analysis import UNREAD_RECORDS, check_agreement, fill_bytes, summary
from .inputs import compression_name, file_compression, file_compression_setting, make_numpy_copy, make_rntuple_copy
from .measuring import measure
from .readers import ReaderError, numeric_dtype
from .vocabulary import COMPRESSIONS, LABELS, READER_TABLE, READERS

ALL_READERS = READERS + ("rootreadspeed",)
SET = "own"  # the input set's name in the raw results


def check_request(files: list[str], tree: str | None, branches: list[str], readers: list[str]) -> tuple[str, dict]:
    """Before any work: every file, the tree, every branch (numbers) and reader exist.
    Returns the tree (the only TTree of the first file when `tree` is None) and each
    branch's value type; ReaderError names the culprit otherwise."""
    import uproot

    unknown = [r for r in readers if r not in ALL_READERS]
    if unknown:
        raise ReaderError(f"unknown reader {', '.join(unknown)} (known: {', '.join(ALL_READERS)})")
    if not files or not branches or "" in branches:
        raise ReaderError("name at least one file and one branch (--branch B[,C...])")
    types: dict[str, np.dtype] = {}
    for path in files:
        if not Path(path).is_file():
            raise ReaderError(f"no such file: {path}")
        file_compression(path)  # a ROOT file at all
        try:
            with uproot.open(path) as f:
                trees = sorted({key.split(";")[0] for key, classname in f.classnames().items()
                                if classname == "TTree"})
                if tree is None:
                    if len(trees) != 1:
                        raise ReaderError(f"file {path}: name the tree with --tree (it has {len(trees)}: "
                                          f"{', '.join(trees) or 'none'})")
                    tree = trees[0]
                if tree not in trees:
                    raise ReaderError(f"file {path}: no tree {tree!r} (its trees: {', '.join(trees) or 'none'})")
                t = f[tree]
                for branch in branches:
                    if branch not in t:
                        raise ReaderError(f"file {path}, tree {tree}: no branch {branch!r}")
                    dtype = numeric_dtype(t[branch].interpretation)
                    if dtype is None:
                        raise ReaderError(f"file {path}, branch {branch}: not a branch of numbers "
                                          f"({t[branch].interpretation}); the readers compare numbers")
                    if types.setdefault(branch, dtype) != dtype:
                        raise ReaderError(f"file {path}, branch {branch}: {dtype} here but {types[branch]} in "
                                          f"{files[0]}")
        except ReaderError:
            raise
        except Exception as error:  # uproot's many kinds, on a damaged file
            raise ReaderError(f"file {path}: uproot cannot read it: {type(error).__name__}: {error}") from error
    return tree, types


def prepare(files: list[str], tree: str, types: dict[str, np.dtype], readers: list[str],
            work: Path) -> dict[str, dict[str, Any]]:
    """The input sets, one per branch (its readers interleaved), with the copies the RNTuple
    and Numpy readers read, made under `work` (kept: a second run with the same --work reuses
    them and the measured runs). A reader that cannot read a branch says so in its own row."""
    setting = file_compression_setting(files[0])
    compression = compression_name(setting)
    # the RNTuple copy with the file's own algorithm and level (ZLIB where RNTuple lacks the algorithm)
    copy_compression, copy_level = (compression, setting % 100) if compression in COMPRESSIONS else ("ZLIB", 1)
    roots = [str(Path(f).resolve()) for f in files]
    copies: dict[str, list[str]] = {"rntuple": [], "numpy": []}
    for index, source in enumerate(roots):
        stem = f"{index}_{Path(source).stem}"
        if "rntuple" in readers:
            copy = work / "copies" / f"{stem}.ntuple.root"
            if not copy.exists():
                make_rntuple_copy(source, copy, copy_compression, copy_level, tree)
            copies["rntuple"].append(str(copy))
        if "numpy" in readers:
            copy = work / "copies" / f"{stem}.{'-'.join(types)}.npz"
            if not copy.exists():
                make_numpy_copy(source, copy, tree, list(types))
            copies["numpy"].append(str(copy))
    return {f"{SET}/{branch}": {"role": "own", "layout": "own", "tree": tree, "branches": [branch],
                                "readers": list(readers), "compression": compression, "root": roots, **copies}
            for branch in types}


def table(frame: pd.DataFrame, inputs: dict[str, dict[str, Any]], types: dict[str, np.dtype]) -> pd.DataFrame:
    """One row per branch and reader: its median rates, its value rate against the fastest
    reader of the branch, its checksum and whether it agrees; or why it did not read.
    Raises AssertionError (check_agreement) when readers that ran disagree."""
    ran = (frame["record"] == "timing").any()
    agreed = check_agreement(frame) if ran else pd.DataFrame(columns=["branch", "checksum"])
    agreed_checksum = dict(zip(agreed["branch"], agreed["checksum"]))
    rates = fill_bytes(summary(frame), inputs) if ran else pd.DataFrame(columns=["branch", "reader"])
    rows = []
    for branch in types:
        measured = rates[rates["branch"] == branch]
        fastest = measured["mhz_items_read"].max() if len(measured) else float("nan")
        for reader in [r.name for r in READER_TABLE]:
            row = measured[measured["reader"] == reader]
            mine = frame[(frame["reader"] == reader) & (frame["branch"] == branch)]
            unread = mine[mine["record"].isin(list(UNREAD_RECORDS))]
            base = {"branch": branch, "type": str(types[branch]), "reader": reader, "label": LABELS[reader]}
            if len(row):
                r = row.iloc[0]
                checksum = mine[mine["record"] == "timing"]["checksum"].dropna()
                rows.append({**base, "result": "measured", "events": int(r["events"]), "items": int(r["items"]),
                             "khz": r["khz_read"], "mhz_items": r["mhz_items_read"],
                             "mb_s": r["mb_s_uncompressed"], "of_fastest": r["mhz_items_read"] / fastest,
                             "open_ms": r["open_s"] * 1e3, "passes": int(r["passes"]), "noisy": bool(r["noisy"]),
                             "cv": r["cv"], "checksum": checksum.iloc[0] if len(checksum) else "",
                             "agrees": checksum.iloc[0] == agreed_checksum.get(branch) if len(checksum) else None})
            elif len(unread):
                u = unread.iloc[0]
                rows.append({**base, "result": f"{UNREAD_RECORDS[u['record']]}: {u['message']}"})
    return pd.DataFrame(rows)


def print_table(result: pd.DataFrame, frame: pd.DataFrame, files: list[str], tree: str) -> None:
    """The table on the terminal, with the load the runs saw (pandas' plain text: rich is
    not in the pinned environment, and the table needs no more)."""
    timing = frame[frame["record"] == "timing"]
    for branch, rows in result.groupby("branch", sort=False):
        print(f"\n{branch} ({rows['type'].iloc[0]}) in tree {tree} of {', '.join(files)}")
        lines = []
        for _, r in rows.iterrows():
            if r["result"] != "measured":
                lines.append({"reader": r["label"], "note": r["result"]})
                continue
            flag = " †" if r["noisy"] else ""
            lines.append({"reader": r["label"], "kHz": f"{r['khz']:.4g}{flag}",
                          "M values/s": f"{r['mhz_items']:.4g}{flag}",
                          "MB/s": "n/a" if pd.isna(r["mb_s"]) else f"{r['mb_s']:.4g}",
                          "of fastest": f"{r['of_fastest']:.2f}",
                          "open ms": "" if pd.isna(r["open_ms"]) else f"{r['open_ms']:.3g}",
                          "checksum": r["checksum"] or "(none)",
                          "agrees": {True: "yes", False: "NO", None: "-"}[r["agrees"]]})
        text = pd.DataFrame(lines).fillna("")
        text = text[[c for c in text.columns if c != "note"] + ["note"] * ("note" in text)]
        print(text.to_string(index=False, justify="left",
                             formatters={c: f"{{:<{max(len(c), text[c].str.len().max())}}}".format
                                         for c in ("reader", "note") if c in text}))
    if len(timing):
        print(f"\nMedians of {int(result['passes'].max())} interleaved passes per reader after warm-up, warm files; "
              f"rates of the reading time (opening left out), MB/s of uncompressed bytes. kHz: 10^3 events/s. "
              f"†: its passes still spread more than the noise limit after re-measuring. Load seen: 1-min load "
              f"average up to {timing['load_avg_1min'].max():.2f}, other processes up to "
              f"{timing['others_cores'].max():.2f} cores, steal up to {100 * timing['steal_fraction'].max():.1f}%.")


def run(files: list[str], branches: list[str], tree: str | None = None, readers: list[str] | None = None,
        repetitions: int = 5, warmup: int = 1, work: str | Path | None = None,
        progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Check the request, make the copies, measure every reader; return the table, the raw
    rows and the tree read. `work` keeps the copies and raw runs (a temporary folder if None)."""
    readers = list(readers or ALL_READERS)
    if repetitions < 1 or warmup < 0:
        raise ReaderError(f"--repetitions must be >= 1 and --warmup >= 0, got {repetitions} and {warmup}")
    tree, types = check_request(files, tree, branches, readers)
    with tempfile.TemporaryDirectory(prefix="throughput-readers-") as temporary:
        folder = Path(work) if work else Path(temporary)
        inputs = prepare(files, tree, types, readers, folder)
        params = {"readers": [r for r in readers if r != "rootreadspeed"], "rootreadspeed": "rootreadspeed" in readers,
                  "warmup": warmup, "sample_every": 100000, "repetitions": repetitions}
        frame = measure(params, inputs, folder / "raw", noise.Settings(), progress=progress)
        return table(frame, inputs, types), frame, tree
