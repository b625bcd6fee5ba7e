"""Each input file's reference values, kept outside the file.

Readers agreeing with each other is not enough: a few flipped bytes inside a
basket of an uncompressed or ZSTD file are read as values (e.g. -6.4e30) by
every reader alike, and they all agree. So every input carries a reference,
per value branch: the number of entries and values and the readers' checksum
(reader_comparison.checksum) of the values in the branch's own type (its "type";
a reference without one, taken before types were kept, checksummed the values
cast to float32: the same for the float32 branches it was taken of). It is taken
once, when the file is made (read back right after its generator wrote and
validated it) or, for a real file,
the first time the study registers it. A generated file's reference lies
beside it; a real file's (its folder is a shared, read-only copy) under
data/references/. Every reader's result is
compared with it (reader_comparison.check_references; a user's own file in
``python -m throughput.readers``, where one is registered).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from .. import REPO
from ..core.results import atomic_path

SUFFIX = ".reference.json"
REGISTERED = REPO / "data" / "references"


class ReferenceError(RuntimeError):
    """An input without a reference, or with one that does not describe it."""


def reference_path(path: str | os.PathLike, registered: bool | None = None) -> Path:
    """Beside a generated file; under data/references/ for a registered (real) one.
    `registered=None`: wherever one exists, beside first."""
    path = Path(path).resolve()
    beside, home = path.with_name(path.name + SUFFIX), REGISTERED / (path.name + SUFFIX)
    if registered is None:
        return home if not beside.is_file() and home.is_file() else beside
    return home if registered else beside


# What a reference without a "type" checksummed: every value cast to float32.
UNTYPED = "float32"


def compute(path: str | os.PathLike, tree: str, branches: Iterable[str]) -> dict[str, Any]:
    """Entries, values and checksum of each branch (its values in its own type, as every
    reader checksums them), read with uproot and awkward."""
    # here, with the readers: the references are read (reuse checks) far more often than made
    import awkward as ak
    import numpy as np
    import uproot

    from .checksums import checksum, hex_checksum

    values = {}
    with uproot.open(path) as handle:
        events = handle[tree]
        for branch in branches:
            flat = np.asarray(ak.flatten(events[branch].array(), axis=None))
            values[branch] = {"entries": int(events.num_entries), "items": int(flat.size), "type": str(flat.dtype),
                              "checksum": hex_checksum(checksum(flat))}
    stat = Path(path).stat()
    return {"file": Path(path).name, "size": stat.st_size, "tree": tree, "branches": values}


def record(path: str | os.PathLike, tree: str, branches: Iterable[str], registered: bool = False) -> Path:
    """Take the reference of a file just made (or registered) and store it."""
    target = reference_path(path, registered)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as temporary:
        temporary.write_text(json.dumps(compute(path, tree, branches), indent=1, sort_keys=True) + "\n")
    return target


def load(path: str | os.PathLike) -> dict[str, Any]:
    """The stored reference of `path`; ReferenceError when there is none or it is for another file."""
    target = reference_path(path)
    if not target.is_file():
        raise ReferenceError(f"{path}: no reference values ({target} is missing); re-make the file, or register "
                             f"a real file with references.register")
    stored = json.loads(target.read_text())
    size = Path(path).stat().st_size
    if stored.get("size") != size:
        raise ReferenceError(f"{path}: its reference {target} is of a file of {stored.get('size')} bytes, "
                             f"this one has {size}: re-make it")
    return stored


def register(path: str | os.PathLike, tree: str, branches: Iterable[str]) -> dict[str, Any]:
    """A real file's reference: taken the first time, read afterwards."""
    if not reference_path(path).is_file():
        record(path, tree, branches, registered=True)
    return load(path)


def expected(paths: list[str], branch: str) -> dict[str, Any]:
    """What a reader of `branch` over `paths` must report: entries and values added
    up, checksums added mod 2^64 (the checksum is a sum, so it adds over files)."""
    entries = items = total = 0
    for path in paths:
        stored = load(path)
        if branch not in stored["branches"]:
            raise ReferenceError(f"{path}: its reference has no branch {branch!r} "
                                 f"(it has {', '.join(sorted(stored['branches']))})")
        one = stored["branches"][branch]
        entries, items = entries + one["entries"], items + one["items"]
        total = (total + int(one["checksum"], 16)) % 2**64
    return {"entries": entries, "items": items, "checksum": f"{total:016x}"}
