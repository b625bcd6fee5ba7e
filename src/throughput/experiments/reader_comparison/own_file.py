"""Every reader of the comparison on a file the user names (``python -m throughput.readers``).

ROOT's ``rootreadspeed`` times one reader on a user's branches; this runs all of them
(the C++ methods, uproot, the Java readers, RNTuple and Numpy copies made here) on
the same file and branches, measured exactly as the experiment measures them
(``measuring.measure_runs``: interleaved rounds, warm files, every run's load recorded
and a noisy run re-measured or flagged, the machine's measurement lock held), and
reports their rates, their ratio to the fastest, and whether their checksums agree.
Any numeric branch (float, double, the integer types, bool; one value, a fixed array
or a collection per event).

Readers that agree can all be wrong alike: a damaged byte in a basket without a
checksum of its own (uncompressed, ZSTD) is read as a value by every one of them.
So the values are compared with the file's registered reference where there is one
(throughput.inputs.references), and where there is none the output says whose values are
unverified and why."""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...core import harness, measurement_lock, noise
from ...inputs import references
from .analysis import UNREAD_RECORDS, check_agreement, fill_bytes, summary
from .inputs import basket_formats, counter_of, make_numpy_copy, make_rntuple_copy
from .measuring import measure_runs, plan
from .processes import telling_line
from .readers import numeric_dtype
from .spec import ReaderError, compression_name, file_compression, file_compression_setting
from .vocabulary import COMPRESSIONS, JAVA_READERS, LABELS, READER_TABLE, READERS

ALL_READERS = READERS + ("rootreadspeed",)
SET = "own"  # the input set's name in the raw results


class WrongValues(AssertionError):
    """The readers agree, but not with the file's registered reference values."""


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
                classes = f.classnames()
                trees = sorted({key.split(";")[0] for key, classname in classes.items() if classname == "TTree"})
                ntuples = sorted({key.split(";")[0] for key, classname in classes.items()
                                  if classname.endswith("RNTuple")})
                if tree in ntuples or (tree is None and not trees and ntuples):
                    raise ReaderError(rntuple_refusal(path, tree or ntuples[0]))
                if tree is None:
                    if len(trees) != 1:
                        raise ReaderError(f"file {path}: name the tree with --tree (it has {len(trees)}: "
                                          f"{', '.join(trees) or 'none'})")
                    tree = trees[0]
                if tree not in trees:
                    raise ReaderError(f"file {path}: no tree {tree!r} (its trees: {', '.join(trees) or 'none'}"
                                      f"{'; its RNTuples: ' + ', '.join(ntuples) if ntuples else ''})")
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


def rntuple_refusal(path: str, name: str) -> str:
    """Why an RNTuple is not read here, and what reads it."""
    return (f"file {path}: {name!r} is an RNTuple, not a TTree. This command reads a TTree with every reader "
            f"(its RNTuple reader reads an RNTuple copy it makes of the tree); read an RNTuple with ROOT's "
            f"RNTupleReader (ROOT::RNTupleReader::Open(\"{name}\", file), or ROOT.RDataFrame(\"{name}\", file)) "
            f"or with uproot (uproot.open(file)[\"{name}\"].arrays())")


def prepare(files: list[str], tree: str, types: dict[str, np.dtype], readers: list[str],
            work: Path) -> dict[str, dict[str, Any]]:
    """The input sets, one per branch (its readers interleaved), with the copies the RNTuple
    and Numpy readers read, made under `work` (kept: a second run with the same --work reuses
    them and the measured runs). A reader that cannot read a branch says so in its own row;
    a copy that cannot be made (ROOT's RNTupleImporter on a class without a dictionary)
    leaves its reader out, with the reason in "copy_failures"."""
    setting = file_compression_setting(files[0])
    compression = compression_name(setting)
    # the RNTuple copy with the file's own algorithm and level (ZLIB where RNTuple lacks the algorithm)
    copy_compression, copy_level = (compression, setting % 100) if compression in COMPRESSIONS else ("ZLIB", 1)
    roots = [str(Path(f).resolve()) for f in files]
    copies: dict[str, list[str]] = {"rntuple": [], "numpy": []}
    makers = {"rntuple": ("ntuple.root", lambda source, copy: make_rntuple_copy(source, copy, copy_compression,
                                                                                copy_level, tree)),
              "numpy": (f"{'-'.join(types)}.npz", lambda source, copy: make_numpy_copy(source, copy, tree,
                                                                                       list(types)))}
    failures: dict[str, str] = {}
    for reader, (suffix, make) in makers.items():
        for index, source in enumerate(roots if reader in readers else []):
            copy = work / "copies" / f"{index}_{Path(source).stem}.{suffix}"
            try:
                if not copy.exists():
                    make(source, copy)
            except Exception as error:  # any failure to make it is the reader's row, not a stop
                text = str(error) if isinstance(error, (harness.KernelError, ReaderError)) else \
                    f"{type(error).__name__}: {error}"
                failures[reader] = f"its copy of {source} could not be made: {telling_line(text)}"
                copies[reader] = []
                break
            copies[reader].append(str(copy))
    return {f"{SET}/{branch}": {"role": "own", "layout": "own", "tree": tree, "branches": [branch],
                                "readers": list(readers), "compression": compression, "root": roots, **copies,
                                "copy_failures": failures}
            for branch in types}


def copy_failure_rows(inputs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """A "failed" row per branch for each reader whose copy could not be made."""
    return pd.DataFrame([{"record": "failed", "reader": reader, "method": reader, "branch": branch,
                          "message": reason, "rep": float("nan")}
                         for spec in inputs.values() for branch in spec["branches"]
                         for reader, reason in spec["copy_failures"].items()])


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


def reference_values(files: list[str], branch: str, dtype: np.dtype) -> tuple[dict[str, Any] | None, str]:
    """What the readers of `branch` over `files` must find, from the files' registered
    references (throughput.inputs.references: beside a file or under data/references/), and the
    references' paths; (None, why) where a file has none, or the one registered under its
    name is of another file, or it lacks the branch. Its "checksum" is None where the
    reference checksummed other values than the readers do (an old, float32 one of a branch
    of another type): then only the counts compare. A reference beside the file that is of
    a file of another size raises WrongValues."""
    sources = []
    for path in files:
        target = references.reference_path(path)
        if not target.is_file():
            return None, (f"no reference values registered for {path} (neither "
                          f"{references.reference_path(path, registered=False)} nor "
                          f"{references.reference_path(path, registered=True)})")
        try:
            stored = references.load(path)
        except references.ReferenceError as error:
            if target == references.reference_path(path, registered=False):
                raise WrongValues(str(error)) from error
            return None, f"the reference registered as {target} is of another file: {error}"
        if branch not in stored["branches"]:
            return None, f"the reference {target} of {path} has no branch {branch!r}"
        sources.append((target, stored["branches"][branch].get("type", references.UNTYPED)))
    want = references.expected(files, branch)
    checksummed = sorted({kind for _, kind in sources})
    if checksummed != [str(dtype)]:
        want["checksum"], want["checksummed"] = None, ", ".join(checksummed)
    return want, ", ".join(str(target) for target, _ in sources)


def verify(result: pd.DataFrame, files: list[str], tree: str, types: dict[str, np.dtype]) -> tuple[pd.DataFrame,
                                                                                                   dict[str, str]]:
    """Whether each branch's values are what the files hold: the result with a "verified"
    column (reference, basket checksums, counts only, unverified) and per branch a note saying
    how, or why not. Raises WrongValues naming files, branch, the reference's values and the
    readers' where they differ (the readers agree with each other: check_agreement ran)."""
    result = result.copy()
    result["verified"] = ""
    notes, problems = {}, []
    for branch, dtype in types.items():
        rows = result[(result["branch"] == branch) & (result["result"] == "measured")] if len(result) else result
        rows = rows[rows["checksum"].fillna("").astype(bool)] if len(rows) else rows  # rootreadspeed gives none
        if rows.empty:
            continue
        found = {"entries": int(rows["events"].iloc[0]), "items": int(rows["items"].iloc[0]),
                 "checksum": rows["checksum"].iloc[0]}
        labels = ", ".join(rows["label"])
        want, source = reference_values(files, branch, dtype)
        if want is not None:
            compared = [k for k in ("entries", "items", "checksum") if want[k] is not None]
            if any(found[k] != want[k] for k in compared):
                problems.append(f"file{'s' * (len(files) > 1)} {', '.join(files)}, branch {branch}: the readers "
                                f"({labels}) found {found['items']} values in {found['entries']} events, checksum "
                                f"{found['checksum']}; the reference ({source}) expects {want['items']} values in "
                                f"{want['entries']} events, checksum {want['checksum'] or '(of other values)'}: the "
                                f"file is damaged or changed since its reference was taken")
                continue
            if want["checksum"] is not None:
                kind, notes[branch] = "reference", (f"Values checked: every reader found the reference values of "
                                                    f"{source} ({want['items']} values, checksum {want['checksum']}).")
            else:
                kind, notes[branch] = "counts only", (
                    f"Values unverified ({labels}): the counts match the reference {source}, but its checksum is "
                    f"of {want['checksummed']} values and the branch holds {dtype}; register a new reference to "
                    f"check them.")
            result.loc[rows.index, "verified"] = kind
            continue
        formats = [f for path in files for f in basket_formats(path, tree, branch)]
        counter = counter_of(files[0], tree, branch)
        unchecked = [name for name, check in formats if check is None]
        checkers = [r for r in rows["reader"] if r not in JAVA_READERS]  # ROOT and uproot check them
        if not unchecked and checkers:
            checks = sorted({f"{name}: {check}" for name, check in formats})
            result.loc[rows.index, "verified"] = "basket checksums"
            notes[branch] = (f"Values checked by the baskets' own checksums ({', '.join(checks)}), which ROOT and "
                             f"uproot verify while decompressing, and every reader agrees; {source}.")
            continue
        result.loc[rows.index, "verified"] = "unverified"
        kinds = ", ".join(f"{unchecked.count(name)} {name}" for name in sorted(set(unchecked)))
        why = (f"{len(unchecked)} of the {len(formats)} baskets of {branch}{' and its counter' * bool(counter)}"
               f" carry no checksum ({kinds}: ROOT writes none in uncompressed and ZSTD baskets), so damaged bytes "
               f"there are read as values by every reader alike" if unchecked else
               "only the Java readers ran, and whether they check the baskets' checksums is not known here")
        register = ", ".join(f"references.register({path!r}, {tree!r}, {list(types)!r})" for path in files)
        # registering takes whatever the file holds now, damage included: only an intact copy
        notes[branch] = (f"Values unverified ({labels}): {source}; {why}. To check them, register a reference "
                         f"from a copy known to be intact (as its producer wrote it, or matching its published "
                         f"checksum), never from a copy that may be damaged, since the reference takes the "
                         f"values the file holds now: python -c \"from throughput.inputs import references; "
                         f"{register}\"")
    if problems:
        raise WrongValues("\n".join(problems))
    return result, notes


def print_table(result: pd.DataFrame, frame: pd.DataFrame, files: list[str], tree: str,
                notes: dict[str, str] | None = None) -> None:
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
        if (notes or {}).get(branch):
            print(notes[branch])
    if len(timing):
        print(f"\nMedians of {int(result['passes'].max())} interleaved passes per reader after warm-up, warm files; "
              f"rates of the reading time (opening left out), MB/s of uncompressed bytes. kHz: 10^3 events/s. "
              f"†: its passes still spread more than the noise limit after re-measuring. Load seen: 1-min load "
              f"average up to {timing['load_avg_1min'].max():.2f}, other processes up to "
              f"{timing['others_cores'].max():.2f} cores, steal up to {100 * timing['steal_fraction'].max():.1f}%.")


def run(files: list[str], branches: list[str], tree: str | None = None, readers: list[str] | None = None,
        repetitions: int = 5, warmup: int = 1, work: str | Path | None = None,
        progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, str, dict[str, str]]:
    """Check the request, make the copies, measure every reader, check the values (verify);
    return the table, the raw rows, the tree read and the notes on the values of each branch.
    `work` keeps the copies and raw runs (a temporary folder if None). Raises AssertionError
    where readers disagree, WrongValues where they agree on other values than the reference."""
    readers = list(readers or ALL_READERS)
    if repetitions < 1 or warmup < 0:
        raise ReaderError(f"--repetitions must be >= 1 and --warmup >= 0, got {repetitions} and {warmup}")
    tree, types = check_request(files, tree, branches, readers)
    with _lock(files), tempfile.TemporaryDirectory(prefix="throughput-readers-") as temporary:
        folder = Path(work) if work else Path(temporary)
        inputs = prepare(files, tree, types, readers, folder)
        params = {"readers": [r for r in readers if r != "rootreadspeed"], "rootreadspeed": "rootreadspeed" in readers,
                  "warmup": warmup, "sample_every": 100000, "repetitions": repetitions}
        measured = [measure_runs(params, inputs, folder / "raw", noise.Settings(), progress=progress)] \
            if plan(params, inputs) else []  # none where the only readers asked for lost their copies
        frame = pd.concat([f for f in (*measured, copy_failure_rows(inputs)) if len(f)], ignore_index=True)
        result, notes = verify(table(frame, inputs, types), files, tree, types)
        return result, frame, tree, notes


def _lock(files: list[str]) -> contextlib.AbstractContextManager:
    """The machine's measurement lock (throughput.core.measurement_lock), taken after the request
    is checked; not again where this process or its parent holds it (a notebook's cell)."""
    if os.environ.get(measurement_lock.HELD_ENV):
        return contextlib.nullcontext()
    return measurement_lock.held(f"python -m throughput.readers {' '.join(files)}")
