"""The generated input files, shared by the reader, writing and RDataFrame experiments:
NanoAOD-like and MiniAOD-like files and their RNTuple copies.

Files are made by the `make_nanoaod_like` kernel (kernels/datasets/), which
resamples the events of a real CMS NanoAOD file: the same 947 branches with
the same types, the real multiplicities and value distributions, with floats
smeared slightly (so resampled events are not copies) and put back where the
real file's values lie (its discrete values, else its branch's precision:
NanoAOD stores many floats with fewer mantissa bits), so that they compress
as the real file's do (`float_compression_against_real` measures it). File k of a set
uses seed + k, so every file of a set differs and every set is reproducible.
MiniAOD-like files (seed 000's particle types, flat or as split objects) are made by
`make_aod_like` (kernels/datasets/), every value a real particle's of the same file.
RNTuple copies are made with ROOT's RNTupleImporter (`tree_to_rntuple`).

Snakemake makes them through workflow/rules/datasets.smk, whose commands call the
functions here; a standalone notebook calls the same functions directly.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .. import REPO
from ..core import harness
from ..setup import machine_fit, paths
from . import references

COMPRESSIONS = ("none", "ZLIB", "LZ4", "ZSTD", "LZMA")
# The branches the readers measure (one attribute per particle collection),
# whose reference values each generated file carries.
VALUE_BRANCHES = tuple(f"{c}_pt" for c in ("Photon", "Electron", "Muon", "Tau", "Jet", "FatJet"))
# The objects layout's empty product (kernels/common/aod_classes.cmake): a split vector with no
# object in any event, whose member the CMSSW-like reader reads for the per-event floor.
EMPTY_PRODUCT_BRANCH = "Empty.pt"
# The same in a MiniAOD-like file of split objects, whose PAT-like classes hold the pT in their
# Lorentz vector (kernels/common/aod_classes.cmake: aod::kPtMember); a member is named
# <collection>.<member>.
OBJECT_PT_MEMBER = "p4.pt"
OBJECT_VALUE_BRANCHES = (*(f"{b.split('_', 1)[0]}.{OBJECT_PT_MEMBER}" for b in VALUE_BRANCHES), EMPTY_PRODUCT_BRANCH)


# The real CMS NanoAOD file whose events are resampled, by its scikit-hep-testdata name.
NANOAOD_SOURCE = "nanoAOD_2015_CMS_Open_Data_ttbar.root"
# datasets.source null: the copies in ../shared/data beside the repository (CI, these offline machines) ...
SHARED_COPIES = paths.SHARED / "data"
# ... and where scikit-hep-testdata puts a real file that is not among them (a machine with network).
DOWNLOADS = REPO / "data" / "real"


class RealFileError(RuntimeError):
    """A real file that is neither in the local copy nor downloadable."""


def source_dir(section: dict[str, Any]) -> Path:
    """The folder of local copies of the real files: datasets.source (validated, it is absolute; a relative
    path is from the working directory, as for every path key), or ../shared/data beside the repository
    when it is null."""
    if section.get("source") is None:
        return SHARED_COPIES
    return Path(os.path.expanduser(section["source"])).absolute()


def real_file(name: str, section: dict[str, Any]) -> Path:
    """A real file of scikit-hep-testdata, the field's way to get them. A datasets.source
    that is set is the only place looked at (no network, nothing made). Null takes the
    copy in ../shared/data beside the repository when it is there (offline machines, CI),
    else scikit-hep-testdata downloads it once into data/real/."""
    import skhep_testdata

    local = source_dir(section)
    if (local / name).is_file():
        return Path(skhep_testdata.data_path(name, cache_dir=str(local)))
    if section.get("source") is not None:
        raise RealFileError(f"real file {name!r}: not in {local} (config key 'datasets.source' = "
                            f"{section['source']!r}; null takes {SHARED_COPIES}, or downloads)")
    made = [folder for folder in (DOWNLOADS, *DOWNLOADS.parents) if not folder.exists()]  # deepest first
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    try:
        return Path(skhep_testdata.data_path(name, cache_dir=str(DOWNLOADS)))
    except Exception as error:  # requests' network errors, an unknown name
        for folder in made:  # a failed download leaves no folder behind
            if not any(folder.iterdir()):
                folder.rmdir()
        raise RealFileError(f"real file {name!r}: no copy in {local} (config key 'datasets.source' = null) and "
                            f"scikit-hep-testdata could not fetch it: {type(error).__name__}: {error}") from error


def source_path(section: dict[str, Any]) -> Path:
    """The real NanoAOD file the generator resamples."""
    return real_file(NANOAOD_SOURCE, section)


def check_config(section: dict[str, Any], fit: machine_fit.Fitter) -> None:
    """datasets.source, when set, must be a folder holding the real files the study reads: the
    NanoAOD file every generated input is resampled from, and reader_comparison.real_files
    (checked here, never fetched: a typo costs no download). Null: ../shared/data beside the
    repository, a real file not there is downloaded when a job needs it."""
    problems = fit.problems
    folder = source_dir(section)
    if section["source"] is None:
        if folder.exists() and not folder.is_dir():
            problems.append(f"config key 'datasets.source' = None: {folder} (its default folder) is not a folder")
        return
    where = f"config key 'datasets.source' = {section['source']!r}"
    if not folder.is_dir():
        problems.append(f"{where}: {'not a folder' if folder.exists() else 'no such folder'} (it holds local copies "
                        f"of the real files, e.g. {NANOAOD_SOURCE}; null takes {SHARED_COPIES}, or downloads)")
        return
    wanted = [NANOAOD_SOURCE, *fit.study.get("reader_comparison", {}).get("real_files", [])]
    missing = [name for name in dict.fromkeys(wanted) if not (folder / name).is_file()]
    if missing:
        problems.append(f"{where}: no {', '.join(missing)} in it (the NanoAOD file every generated input is "
                        "resampled from, and reader_comparison.real_files)")


def level(section: dict[str, Any], compression: str) -> int:
    return 0 if compression == "none" else section["levels"][compression]


def make_nanoaod_like(output: str | os.PathLike, events: int, compression: str, section: dict[str, Any],
                      index: int = 0, progress: bool = True, resample: bool = True) -> dict[str, Any]:
    """Write `events` resampled events to `output`; return the kernel's validation record.
    `resample` False takes the source's events in their order (cycled): the same events as
    the real file's, so a test compares only what the generator does to their values."""
    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown compression {compression!r} (one of {', '.join(COMPRESSIONS)})")
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    with tqdm(total=events, desc=f"{Path(output).name}", unit="event", disable=not progress) as bar:
        run = harness.run_kernel("make_nanoaod_like", {
            "source": source_path(section), "output": output, "events": events,
            "compression": compression, "level": level(section, compression),
            "seed": section["seed"] + index, "jitter": section["jitter"], "resample": int(resample),
        }, on_progress=lambda record: bar.update(record["done"] - bar.n))
    # the values the readers must find in it, kept outside the file (throughput.inputs.references)
    references.record(output, "Events", VALUE_BRANCHES)
    return run.validation


def make_aod_like(output: str | os.PathLike, events: int, compression: str, level: int, seed: int,
                  progress: bool = True, objects: bool = False,
                  source: str | os.PathLike | None = None) -> dict[str, Any]:
    """Write `events` MiniAOD-like events (kernel make_aod_like), as flat leaf-list branches or, with
    `objects`, as split std::vector<aod::Type> of the generated classes, every value a real particle's
    of `source` (the real NanoAOD file; None: the one datasets.source's default names); return its
    validation record, with the real branch of each generated one ("sources") and the tree's
    uncompressed and compressed bytes read back ("tot_bytes", "zip_bytes")."""
    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown compression {compression!r} (one of {', '.join(COMPRESSIONS)})")
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    if source is None:
        source = source_path({"source": None})
    with tqdm(total=events, desc=Path(output).name, unit="event", disable=not progress) as bar:
        run = harness.run_kernel("make_aod_like", {
            "output": output, "events": events, "compression": compression,
            "level": 0 if compression == "none" else level, "seed": seed,
            "layout": "objects" if objects else "flat", "source": str(source),
        }, on_progress=lambda record: bar.update(record["done"] - bar.n))
    references.record(output, "Events", OBJECT_VALUE_BRANCHES if objects else VALUE_BRANCHES)
    return run.validation


def rntuple_copy(source: str | os.PathLike, output: str | os.PathLike, compression: str, level: int,
                 tree: str = "Events") -> dict[str, Any]:
    """The same events as an RNTuple (kernel tree_to_rntuple, ROOT's RNTupleImporter); return
    the validation record. Every RNTuple copy of the study is made here."""
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    return harness.run_kernel("tree_to_rntuple", {
        "source": source, "output": output, "tree": tree, "compression": compression,
        "level": 0 if compression == "none" else max(level, 1),
    }).validation


def to_rntuple(tree_file: str | os.PathLike, output: str | os.PathLike, compression: str,
               section: dict[str, Any]) -> dict[str, Any]:
    """Copy the Events tree of `tree_file` into an RNTuple at the datasets section's level."""
    return rntuple_copy(tree_file, output, compression, level(section, compression))


# Branches with fewer values than this compress by chance, not by their data: not compared.
MIN_COMPARED_VALUES = 200


def _float_words(values) -> np.ndarray:
    """Float values (an awkward array, flattened) as a basket holds them: big-endian 32-bit words."""
    import awkward as ak  # here: Snakemake and the config import this module, and need neither

    return np.asarray(ak.flatten(values, axis=None), dtype=">f4")


def zero_low_mantissa_bits(words: np.ndarray) -> int:
    """The fewest trailing zero bits of the 23-bit mantissa over float `words` (what the
    make_nanoaod_like kernel keeps per branch; 23 where every mantissa is zero)."""
    # the bits of each value, whatever the array's byte order (a view would reinterpret bytes)
    mantissas = np.asarray(words, dtype=np.float32).view(np.uint32).astype(np.int64) & 0x7FFFFF
    mantissas = mantissas[mantissas != 0]
    if not len(mantissas):
        return 23
    return int(np.log2(mantissas & -mantissas).astype(int).min())


# The compressors a float branch's words are compared with (float_compression_against_real), each
# at level 1 as ROOT's baskets are at the study's default: ZLIB (the real file's), LZMA, and LZ4
# as a block (cramjam's, uproot's own codec library, as ROOT frames LZ4 blocks in its baskets).
def _compressors() -> dict[str, Any]:
    import lzma
    import zlib

    import cramjam

    return {"ZLIB": lambda data: len(zlib.compress(data, 1)),
            "LZMA": lambda data: len(lzma.compress(data, preset=1)),
            "LZ4": lambda data: len(bytes(cramjam.lz4.compress_block(data)))}


COMPARED_COMPRESSIONS = ("ZLIB", "LZ4", "LZMA")


def float_compression_against_real(generated: str | os.PathLike, source: str | os.PathLike,
                                   tree: str = "Events", chunks: int = 10,
                                   compression: str = "ZLIB") -> pd.DataFrame:
    """Per float branch: its precision (zero low mantissa bits) and compression factor in the
    real file `source` and in a `generated` NanoAOD-like file, and their ratio, by one compressor
    (float_compression_by_compressor, which says how)."""
    return float_compression_by_compressor(generated, source, (compression,), tree, chunks)[compression]


def float_compression_by_compressor(generated: str | os.PathLike, source: str | os.PathLike,
                                    compressions: tuple[str, ...] = COMPARED_COMPRESSIONS, tree: str = "Events",
                                    chunks: int = 10) -> dict[str, pd.DataFrame]:
    """Per compressor of `compressions` (COMPARED_COMPRESSIONS), per float branch: its precision
    (zero low mantissa bits) and compression factor in the real file `source` and in a
    `generated` NanoAOD-like file, and their ratio; both files read once for all compressors. The
    factor is a branch's words over their compressed size at level 1, as ROOT compresses baskets
    of them: the real file keeps its baskets inside the tree, so its branches record no sizes of
    their own, and a factor measured the same way on both sides compares their data, not their
    basket layout. The generated file is taken in chunks of as many events as the real file has
    (at most `chunks` of them, all bytes over all compressed bytes), so a resampled file's factor
    is not one draw's. Branches with fewer than MIN_COMPARED_VALUES values on either side are
    listed with `compared` False."""
    import uproot  # as awkward in _float_words

    compressors = _compressors()
    unknown = [c for c in compressions if c not in compressors]
    if unknown:
        raise ValueError(f"compression {unknown[0]!r}: one of {', '.join(COMPARED_COMPRESSIONS)}")

    rows: dict[str, list[dict[str, Any]]] = {c: [] for c in compressions}
    with uproot.open(source) as real_file, uproot.open(generated) as made_file:
        real, made = real_file[tree], made_file[tree]
        step = real.num_entries
        stops = list(range(step, min(made.num_entries, chunks * step) + 1, step)) or [made.num_entries]
        for branch in real.branches:
            if branch.typename.replace("[]", "") != "float" or branch.name not in made:
                continue
            source_words = _float_words(real[branch.name].array(library="ak"))
            values = made[branch.name].array(entry_stop=stops[-1], library="ak")
            pieces = [_float_words(values[start:stop]) for start, stop in zip([0, *stops[:-1]], stops)]
            made_words = np.concatenate(pieces)
            made_bytes = sum(piece.nbytes for piece in pieces)
            common = {"branch": branch.name, "values_real": len(source_words),
                      "values_generated": int(np.median([len(piece) for piece in pieces])),
                      "zero_bits_real": zero_low_mantissa_bits(source_words),
                      "zero_bits_generated": zero_low_mantissa_bits(made_words)}
            for compression in compressions:
                size = compressors[compression]
                made_compressed = sum(size(piece.tobytes()) for piece in pieces if len(piece))
                rows[compression].append({
                    **common,
                    "factor_real": source_words.nbytes / size(source_words.tobytes()) if len(source_words) else np.nan,
                    "factor_generated": made_bytes / made_compressed if made_compressed else np.nan})
    frames = {}
    for compression, found in rows.items():
        frame = pd.DataFrame(found)
        frame["ratio"] = frame["factor_generated"] / frame["factor_real"]
        frame["compared"] = ((frame["values_real"] >= MIN_COMPARED_VALUES)
                             & (frame["values_generated"] >= MIN_COMPARED_VALUES))
        frames[compression] = frame
    return frames


def main(argv: list[str] | None = None) -> None:
    """Command line for the workflow's dataset rules."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m throughput.inputs.datasets", description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["nanoaod", "aod", "rntuple"])
    parser.add_argument("output")
    parser.add_argument("--input", help="for rntuple: the TTree file to copy")
    parser.add_argument("--compression", required=True, choices=COMPRESSIONS)
    parser.add_argument("--index", type=int, default=0, help="file number within its set (seed offset)")
    parser.add_argument("--events", type=int, help="events (default: datasets.events_per_file)")
    parser.add_argument("--objects", action="store_true",
                        help="for aod: collections as split std::vector of the generated classes")
    parser.add_argument("--section", required=True, help="the validated datasets config section, as JSON")
    args = parser.parse_args(argv)
    section = json.loads(args.section)
    events = args.events or section["events_per_file"]
    if args.kind == "nanoaod":
        make_nanoaod_like(args.output, events, args.compression, section, index=args.index)
    elif args.kind == "aod":
        make_aod_like(args.output, events, args.compression, level(section, args.compression),
                      section["seed"] + args.index, objects=args.objects, source=source_path(section))
    else:
        to_rntuple(args.input, args.output, args.compression, section)


if __name__ == "__main__":
    main()
