"""The input files: what a file holds (layout, compression, a branch's counter,
a collection's attributes), making them (Numpy copies here; MiniAOD-like files and
RNTuple copies by throughput.inputs.datasets: the workflow's dataset commands), and
every input of a standalone notebook run (a file's layout, compression and count: spec)."""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import numpy as np

from ...inputs import datasets
from ...core.results import atomic_path
from .readers import checksum, hex_checksum, numeric_dtype
from .spec import ReaderError, file_count, input_sets
from .vocabulary import LAYOUTS, branch_name, tree_name

# The generators live with every other generated input (throughput.inputs.datasets); these names stay
# the reader comparison's too (its command line, notebook and tests).
make_aod_like = datasets.make_aod_like
make_rntuple_copy = datasets.rntuple_copy


def tree_metadata(path: str | os.PathLike, tree: str = "Events") -> Any:
    """uproot's model of a file's tree, for its metadata only (entries, branches, their counters and
    bytes; the file is closed), read once per version of the file in a process: uproot takes about a
    second to read a NanoAOD-like tree's ~950 branches, and a notebook's tables and macros asked
    for the same few trees about ten times."""
    status = os.stat(path)  # a file written again (atomically: another inode) is read again
    return _tree_metadata(os.fspath(path), tree, (status.st_ino, status.st_mtime_ns, status.st_size))


@functools.lru_cache(maxsize=16)  # about 10 MB a NanoAOD-like tree
def _tree_metadata(path: str, tree: str, version: tuple[int, int, int]) -> Any:
    import uproot

    with uproot.open(path) as f:
        return f[tree]


def tree_compression_factor(paths: list[str], tree: str = "Events") -> float:
    """The files' tree compression factor as ROOT's TTree::Print gives it (seed 000's cmssw/branches.txt):
    every branch's uncompressed bytes over its compressed bytes, summed over the files, read back
    from their baskets (uproot)."""
    uncompressed = compressed = 0
    for path in paths:
        branches = list(tree_metadata(path, tree).itervalues(recursive=True))  # a split object's members are sub-branches
        uncompressed += sum(b.uncompressed_bytes for b in branches)
        compressed += sum(b.compressed_bytes for b in branches)
    return uncompressed / compressed if compressed else float("nan")


def aod_sources(validation: dict[str, Any]) -> dict[str, str]:
    """make_aod_like's validation record's "sources": {generated flat branch: the real file's branch,
    without its collection, suffixed "!=0" where a boolean takes a UChar_t's value != 0}."""
    return dict(item.split("=", 1) for item in validation["sources"].split(";"))


def make_numpy_copy(source: str | os.PathLike, output: str | os.PathLike, tree: str,
                    branches: list[str] | None = None) -> dict[str, Any]:
    """The values of each of `branches` (numbers: flat, fixed arrays or jagged) as flat
    arrays of their own type in a deflate-compressed .npz (np.savez_compressed), with
    the number of events; written atomically. Returns what was written."""
    import awkward as ak
    import uproot

    with uproot.open(source) as f:
        if tree not in f:
            raise ReaderError(f"file {source}: no tree '{tree}'")
        t = f[tree]
        missing = [b for b in branches or [] if b not in t]
        if missing:
            raise ReaderError(f"file {source}: no branch {', '.join(missing)} in tree '{tree}'")
        arrays = {}
        for b in branches:
            dtype = numeric_dtype(t[b].interpretation)
            if dtype is None:
                raise ReaderError(f"file {source}, branch {b}: not a branch of numbers ({t[b].interpretation})")
            arrays[b] = np.asarray(ak.flatten(t[b].array(library="ak"), axis=None), dtype=dtype)
        arrays["__events__"] = np.array([t.num_entries], dtype=np.int64)
    with atomic_path(output) as temporary:
        with open(temporary, "wb") as stream:
            np.savez_compressed(stream, **arrays)
    return {"events": int(arrays["__events__"][0]), "branches": sorted(b for b in arrays if b != "__events__"),
            "checksums": {b: hex_checksum(checksum(v)) for b, v in arrays.items() if b != "__events__"}}


# Which of ROOT's compressed-block formats carry a checksum of their own, checked while
# decompressing (read in ROOT's core/zip/src/RZip.cxx, core/lz4/src/ZipLZ4.cxx,
# core/lzma/src/ZipLZMA.c and core/zstd/src/ZipZSTD.cxx): ZLIB ("ZL") is a zlib stream
# (deflateInit) whose Adler-32 trailer inflate checks; LZ4 ("L4") keeps an xxhash64 of the
# compressed bytes in ROOT's header, checked before decompressing; LZMA ("XZ") is an xz stream
# written with LZMA_CHECK_CRC32, checked by the stream decoder. ZSTD ("ZS") frames are written
# by ZSTD_compressCCtx with default parameters, without zstd's optional content checksum;
# ROOT's old algorithm ("CS") is raw deflate; a basket stored uncompressed (level 0, or where
# compressing did not make it smaller) has none. uproot checks the same three (Python's zlib,
# its own xxhash64 comparison, the xz decoder).
BLOCK_FORMATS = {b"ZL": ("ZLIB", "Adler-32"), b"L4": ("LZ4", "xxhash64"), b"XZ": ("LZMA", "CRC32"),
                 b"ZS": ("ZSTD", None), b"CS": ("ROOT's old ZLIB", None)}


def basket_formats(path: str, tree: str, branch: str) -> list[tuple[str, str | None]]:
    """(format, its checksum or None) of every basket of `branch` and of its counter, from
    each basket's first compressed block (BLOCK_FORMATS); "uncompressed" where the basket is
    stored as it is. A basket kept inside the tree (the real NanoAOD file's last) is stored
    as the tree's own key is."""
    import uproot

    formats = []
    counter = counter_of(path, tree, branch)
    with uproot.open(path) as f, open(path, "rb") as raw:
        t = f[tree]
        for b in [t[branch]] + ([t[counter]] if counter else []):
            for index in range(b.num_baskets):
                try:
                    key = b.basket_key(index)
                except ValueError:  # an embedded basket: no key of its own
                    key = f.key(tree)
                if key.fNbytes - key.fKeylen == key.fObjlen:
                    formats.append(("uncompressed", None))
                    continue
                raw.seek(key.fSeekKey + key.fKeylen)
                magic = raw.read(2)
                formats.append(BLOCK_FORMATS.get(magic, (f"unknown ({magic!r})", None)))
    return formats


def counter_of(path: str, tree: str, branch: str) -> str | None:
    """The branch holding the counter of a jagged branch (None for a flat one): the counter
    branch of a leaf list (nJet), the collection's branch of a split member (C, whose leaf
    C_ counts C.p4.pt)."""
    t = tree_metadata(path, tree)
    count = t[branch].member("fLeaves")[0].member("fLeafCount")
    if count is None:
        return None
    name = count.member("fName")
    if name in t:
        return name
    return next((b.name for b in t.itervalues(recursive=True)
                 if any(leaf.member("fName") == name for leaf in b.member("fLeaves"))), name)


def collection_attributes(path: str, tree: str, branches: list[str]) -> dict[str, int]:
    """Per branch: the branches of its collection (those sharing its counter), itself included."""
    by_counter: dict[str | None, int] = {}
    counter_of_branch = {}
    for b in tree_metadata(path, tree).itervalues(recursive=True):  # a split collection's members are sub-branches
        leaves = b.member("fLeaves")
        count = leaves[0].member("fLeafCount") if len(leaves) == 1 else None
        name = None if count is None else count.member("fName")
        counter_of_branch[b.name] = name
        if name is not None:
            by_counter[name] = by_counter.get(name, 0) + 1
    return {branch: by_counter.get(counter_of_branch[branch], 1) if counter_of_branch[branch] else 1
            for branch in branches}


# --- inputs for a standalone notebook run ----------------------------------------------------------

def prepare_inputs(params: dict[str, Any], datasets_section: dict[str, Any], data_dir: str | Path,
                   progress: bool = True) -> dict[str, dict[str, Any]]:
    """Every input set the parameters ask for (spec.input_sets, as the workflow names them, under
    `data_dir`), each file made where missing: NanoAOD-like and MiniAOD-like files with their
    RNTuple and Numpy copies, the compression scan, and copies of the real files. Snakemake makes
    the same files with the same functions through its rules (workflow/rules/datasets.smk)."""
    compression, per_file = params["compression"], datasets_section["events_per_file"]
    real_files = {Path(name).stem: datasets.real_file(name, datasets_section) for name in params["real_files"]}
    sets = input_sets(params, per_file, compression, real_files, Path(data_dir))

    def level(algorithm: str) -> int:
        return datasets.level(datasets_section, algorithm) if algorithm != "none" else 0

    def sizes(events: int, per: int) -> list[int]:
        return [min(per, events - k * per) for k in range(file_count(events, per))]

    def make(spec: dict[str, Any], path: str, index: int) -> None:  # one ROOT file of a generated set
        algorithm = spec["compression"]
        if spec["layout"] == "nanoaod":
            events = params["nanoaod_events"] if spec["role"] == "main" else params["scan_events"]
            datasets.make_nanoaod_like(path, sizes(events, per_file)[index], algorithm, datasets_section,
                                       index=index, progress=progress)
        elif spec["layout"] == "aod":
            make_aod_like(path, sizes(params["aod_events"], params["aod_events_per_file"])[index], algorithm,
                          level(algorithm), datasets_section["seed"] + index, progress,
                          source=datasets.source_path(datasets_section))
        else:  # aod_objects: one file
            make_aod_like(path, params["object_events"], algorithm, level(algorithm), datasets_section["seed"],
                          progress, objects=True, source=datasets.source_path(datasets_section))

    for spec in sets.values():
        for index, path in enumerate(spec["root"]):
            if not Path(path).exists():  # a real file always is
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                make(spec, path, index)
        layout = spec["layout"]
        for root, copy in zip(spec["root"], spec["rntuple"]):
            if not Path(copy).exists():
                Path(copy).parent.mkdir(parents=True, exist_ok=True)
                make_rntuple_copy(root, copy, spec["compression"], level(spec["compression"]), tree_name(layout))
        branches = [branch_name(layout, c) for c in LAYOUTS[layout][2]]
        for root, copy in zip(spec["root"], spec["numpy"]):
            if not Path(copy).exists():
                Path(copy).parent.mkdir(parents=True, exist_ok=True)
                make_numpy_copy(root, copy, tree_name(layout), branches)
    return sets
