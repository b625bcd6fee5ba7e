"""NanoAOD-like input files, shared by the reader, writing and RDataFrame experiments.

Files are made by the `make_nanoaod_like` kernel (kernels/datasets/), which
resamples the events of a real CMS NanoAOD file: the same 947 branches with
the same types, the real multiplicities and value distributions, with floats
smeared slightly so that compression ratios stay realistic. File k of a set
uses seed + k, so every file of a set differs and every set is reproducible.
RNTuple copies are made with ROOT's RNTupleImporter (`tree_to_rntuple`).

Snakemake makes them through workflow/rules/datasets.smk; notebooks and
tests can call the functions here directly.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from . import REPO, harness

COMPRESSIONS = ("none", "ZLIB", "LZ4", "ZSTD", "LZMA")
# Bytes per event of a generated file, measured here on 20000 events at
# level 4 (jitter 0.01); used only to check free disk before generating.
BYTES_PER_EVENT_ESTIMATE = {"none": 4550, "ZLIB": 1880, "LZ4": 2370, "ZSTD": 1900, "LZMA": 1590}


def source_path(section: dict[str, Any]) -> Path:
    """The real NanoAOD file named by datasets.source (relative paths are from the repository)."""
    path = Path(section["source"])
    return path if path.is_absolute() else (REPO / path).resolve()


def check_config(section: dict[str, Any], available_memory: int, problems: list[str]) -> None:
    """The source file must exist (see throughput.config.validate)."""
    source = source_path(section)
    if not source.is_file():
        problems.append(f"config key 'datasets.source' = {section['source']!r}: no such file ({source})")


def level(section: dict[str, Any], compression: str) -> int:
    return 0 if compression == "none" else section["levels"][compression]


def check_disk(files: int, events_per_file: int, compression: str, directory: str | os.PathLike,
               key: str, problems: list[str]) -> None:
    """Add a problem naming `key` when `files` generated files would not fit on disk."""
    need = files * events_per_file * BYTES_PER_EVENT_ESTIMATE[compression]
    free = shutil.disk_usage(Path(directory).resolve()).free
    if need > 0.8 * free:
        problems.append(f"config key '{key}': {files} files of {events_per_file} events ({compression}) need about "
                        f"{need / 1e9:.1f} GB on disk, {free / 1e9:.1f} GB free in {Path(directory).resolve()}")


def make_nanoaod_like(output: str | os.PathLike, events: int, compression: str, section: dict[str, Any],
                      index: int = 0, progress: bool = True) -> dict[str, Any]:
    """Write `events` resampled events to `output`; return the kernel's validation record."""
    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown compression {compression!r} (one of {', '.join(COMPRESSIONS)})")
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    with tqdm(total=events, desc=f"{Path(output).name}", unit="event", disable=not progress) as bar:
        run = harness.run_kernel("make_nanoaod_like", {
            "source": source_path(section), "output": output, "events": events,
            "compression": compression, "level": level(section, compression),
            "seed": section["seed"] + index, "jitter": section["jitter"],
        }, on_progress=lambda record: bar.update(record["done"] - bar.n))
    return run.validation


def to_rntuple(tree_file: str | os.PathLike, output: str | os.PathLike, compression: str,
               section: dict[str, Any]) -> dict[str, Any]:
    """Copy the Events tree of `tree_file` into an RNTuple; return the validation record."""
    return harness.run_kernel("tree_to_rntuple", {
        "source": tree_file, "output": output, "compression": compression,
        "level": level(section, compression),
    }).validation


def main(argv: list[str] | None = None) -> None:
    """Command line for the workflow's dataset rules."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m throughput.datasets", description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["nanoaod", "rntuple"])
    parser.add_argument("output")
    parser.add_argument("--input", help="for rntuple: the TTree file to copy")
    parser.add_argument("--compression", required=True, choices=COMPRESSIONS)
    parser.add_argument("--index", type=int, default=0, help="file number within its set (seed offset)")
    parser.add_argument("--events", type=int, help="events (default: datasets.events_per_file)")
    parser.add_argument("--section", required=True, help="the validated datasets config section, as JSON")
    args = parser.parse_args(argv)
    section = json.loads(args.section)
    if args.kind == "nanoaod":
        make_nanoaod_like(args.output, args.events or section["events_per_file"], args.compression, section,
                          index=args.index)
    else:
        to_rntuple(args.input, args.output, args.compression, section)


if __name__ == "__main__":
    main()
