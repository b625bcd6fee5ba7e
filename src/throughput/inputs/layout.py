"""Where every generated input file lives under a data folder: the workflow's `data`
(workflow/rules/datasets.smk names the files its rules make with these) or a standalone
notebook's results_dir/data. Shared by the experiments that read the same files (the reader
comparison's sets, the writing experiment's NanoAOD-like and MiniAOD-like inputs), and how large
they are per event; pure and cheap to import (Snakemake and the configuration check import it
while they plan)."""
from __future__ import annotations

import math
import os

# Bytes per event of a generated NanoAOD-like file, measured here on 10000 events at the default levels
# and jitter (none: on 20000 events, before floats kept the real file's precision, which does not
# change an uncompressed file); used only to check free disk before generating.
BYTES_PER_EVENT_ESTIMATE = {"none": 4550, "ZLIB": 1370, "LZ4": 1770, "ZSTD": 1220, "LZMA": 920}
# The same for a MiniAOD-like file (flat layout, small arrays included; make_aod_like on 2000 events,
# real values, at each compression's default level).
AOD_BYTES_PER_EVENT_ESTIMATE = {"none": 21300, "ZLIB": 6800, "LZ4": 9540, "ZSTD": 6320, "LZMA": 4030}

# The copies of a generated ROOT file: itself, its RNTuple copy beside it, its Numpy copy.
COPY_SUFFIX = {"root": ".root", "rntuple": ".ntuple.root", "numpy": ".npz"}


def file_count(events: int, per_file: int) -> int:
    """Files of `per_file` events that hold `events` (at least one)."""
    return max(1, math.ceil(events / per_file))


def data_files(data_dir: str | os.PathLike, layout: str, compression: str, count: int,
               kind: str = "root") -> list[str]:
    """The files of one generated set (layout "nanoaod", "aod" or "aod_objects"): its ROOT files,
    their RNTuple copies beside them, or their Numpy copies (`kind` root, rntuple or numpy)."""
    if kind == "numpy":
        folder = f"{data_dir}/reader_comparison/numpy/{layout}/{compression}"
    elif layout == "nanoaod":  # shared by the reader comparison and the writing experiment
        folder = f"{data_dir}/nanoaod/{compression}"
    else:  # under the reader comparison's folder, where they were first made (existing files stay valid)
        folder = f"{data_dir}/reader_comparison/{layout}/{compression}"
    return [f"{folder}/part{k}{COPY_SUFFIX[kind]}" for k in range(count)]


def real_copy(data_dir: str | os.PathLike, stem: str, suffix: str) -> str:
    """The copy of real file `stem` as an RNTuple (".ntuple.root") or Numpy (".npz") file."""
    return f"{data_dir}/reader_comparison/real/{stem}{suffix}"
