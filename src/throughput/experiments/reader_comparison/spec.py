"""What Snakemake and the configuration check take from the reader comparison: its config
section's check (names known, real files present, generated data fitting on disk), a file's
layout, compression and count, and what the Java readers are built from. Cheap to import (no
numpy, uproot, awkward, pandas: checked by tests/unit/test_architecture.py); the measured code,
analysis and report import from here."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ... import REPO
from ...setup import machine_fit
from ...setup.spec import Spec
from ...inputs.layout import (AOD_BYTES_PER_EVENT_ESTIMATE, BYTES_PER_EVENT_ESTIMATE, COPY_SUFFIX, data_files,
                              file_count, real_copy)


class ReaderError(RuntimeError):
    """A Python reader could not read a file or branch (the message names both)."""


def real_layout(name: str) -> str:
    """Layout of a real file in ../shared/data by its name."""
    return "hzz" if name.startswith("uproot-HZZ") else "nanoaod"


def compression_name(setting: int) -> str:
    """ROOT's compression setting (algorithm*100 + level; < 100: old-style ZLIB) as a name."""
    if setting % 100 == 0:
        return "none"
    return {0: "ZLIB", 1: "ZLIB", 2: "LZMA", 4: "LZ4", 5: "ZSTD"}.get(setting // 100, f"algorithm {setting // 100}")


def file_compression(path: str | os.PathLike) -> str:
    """Compression of a ROOT file (its algorithm's name), from fCompress in its header."""
    return compression_name(file_compression_setting(path))


def file_compression_setting(path: str | os.PathLike) -> int:
    """fCompress of a ROOT file's header (algorithm*100 + level; ROOT's documented layout)."""
    import struct

    with open(path, "rb") as stream:
        header = stream.read(45)
    if len(header) < 45 or header[:4] != b"root":
        raise ReaderError(f"{path}: not a ROOT file (no 'root' magic in its header)")
    version = struct.unpack(">i", header[4:8])[0]
    offset = 41 if version > 1000000 else 33
    return struct.unpack(">i", header[offset:offset + 4])[0]


def check_config(section: dict[str, Any], fit: machine_fit.Fitter) -> None:
    """Names and sizes that fit (called by throughput.configuration): collections
    known, real files present, generated data fitting on disk."""
    problems = fit.problems
    for key in ("cold_collections", "scan_collections"):
        unknown = [c for c in section[key] if c not in section["collections"]]
        if unknown:
            problems.append(f"config key 'reader_comparison.{key}' = {section[key]!r}: {', '.join(unknown)} "
                            f"not in reader_comparison.collections {section['collections']!r}")
    if section["timeline_collection"] not in section["collections"]:
        problems.append(f"config key 'reader_comparison.timeline_collection' = {section['timeline_collection']!r}: "
                        f"not in reader_comparison.collections {section['collections']!r}")
    import skhep_testdata

    for name in section["real_files"]:
        if name not in skhep_testdata.known_files:
            problems.append(f"config key 'reader_comparison.real_files': {name!r} is not a file of "
                            f"scikit-hep-testdata (where the real files come from)")
    # Generated data: TTree files and their RNTuple copies (about the same size).
    need = 2 * (section["nanoaod_events"] * BYTES_PER_EVENT_ESTIMATE["ZLIB"]
                + (section["aod_events"] + section["object_events"] / 2) * AOD_BYTES_PER_EVENT_ESTIMATE["ZLIB"]
                + sum(section["scan_events"] * BYTES_PER_EVENT_ESTIMATE[c]
                      for c in section["compression_scan"]))
    problem = machine_fit.disk_problem(need, "config key 'reader_comparison': the generated files of nanoaod_events, "
                                              "aod_events, object_events and scan_events")
    if problem:
        problems.append(problem)


def named_set(layout: str, compression: str) -> str:
    """A generated input set's name, its layout and its compression (aod/ZLIB); a real file's set
    is real/<stem>."""
    return f"{layout}/{compression}"


def main_sets(compression: str) -> tuple[str, str]:
    """The MiniAOD-like and NanoAOD-like sets of the main comparison (Table 1's two layouts)."""
    return named_set("aod", compression), named_set("nanoaod", compression)


def input_sets(section: dict[str, Any], events_per_file: int, compression: str,
               real_files: dict[str, str | os.PathLike],
               data_dir: str | os.PathLike = "data") -> dict[str, dict[str, Any]]:
    """Every input set of the reader comparison, {set: {role, layout, compression, root, rntuple,
    numpy}}, making no file: `section` is the config's reader_comparison, NanoAOD-like files hold
    `events_per_file` events, the main sets are in `compression`, `real_files` gives each real
    file by stem, and the generated files are under `data_dir`. The workflow's rules
    (rules/reader_comparison.smk) and a standalone notebook (inputs.prepare_inputs, which makes
    what is missing) take their sets from here."""
    def generated(layout: str, algorithm: str, count: int, role: str) -> dict[str, Any]:
        return {"role": role, "layout": layout, "compression": algorithm,
                **{kind: data_files(data_dir, layout, algorithm, count, kind) for kind in COPY_SUFFIX}}

    aod, nano = main_sets(compression)
    sets = {nano: generated("nanoaod", compression, file_count(section["nanoaod_events"], events_per_file), "main"),
            aod: generated("aod", compression, file_count(section["aod_events"], section["aod_events_per_file"]),
                           "main")}
    if section["object_events"]:  # one file of split std::vector<aod::Type>
        sets[named_set("aod_objects", compression)] = generated("aod_objects", compression, 1, "objects")
    for other in section["compression_scan"]:
        if other != compression:
            sets[named_set("nanoaod", other)] = generated("nanoaod", other,
                                                         file_count(section["scan_events"], events_per_file), "scan")
    for name in section["real_files"]:
        stem = Path(name).stem
        sets[f"real/{stem}"] = {"role": "real", "layout": real_layout(stem),
                                "compression": file_compression(real_files[stem]), "root": [str(real_files[stem])],
                                "rntuple": [real_copy(data_dir, stem, ".ntuple.root")],
                                "numpy": [real_copy(data_dir, stem, ".npz")]}
    return sets


def java_available() -> str | None:
    """None if Java and Maven are there, else the reason the Java reader cannot run."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    return f"not measured here: {' and '.join(missing)} not installed" if missing else None


# What each Java reader is built from: a newer file than its jar rebuilds it, and their
# hash is part of its runs' reuse key (measuring.JAVA_BUILDS).
# One Maven parent (JAVA_DIR/pom.xml: versions, plugins, build layout) with the sibling
# modules common, laurelin and root4j; a reader is built with `-pl MODULE -am`.
SOURCE_DIR = REPO / "kernels" / "reader_comparison"  # its kernels and Java readers
JAVA_DIR = SOURCE_DIR / "java"  # the parent pom.xml and its modules
JAVA_COMMON = JAVA_DIR / "common"  # options, records, passes
ROOT4J_DIR = JAVA_DIR / "root4j"  # the reader module and root4j.patch
LAURELIN_SOURCES = (JAVA_DIR / "pom.xml", JAVA_COMMON, JAVA_DIR / "laurelin")
ROOT4J_SOURCES = (JAVA_DIR / "pom.xml", JAVA_COMMON, ROOT4J_DIR)


def source_files(sources: tuple[Path, ...]) -> list[Path]:
    """The files of `sources` (files, and folders searched recursively), in order."""
    return [p for source in sources
            for p in ([source] if source.is_file() else sorted(q for q in source.rglob("*") if q.is_file()))]


# This experiment's kernels and outputs, declared once (throughput.setup.spec); seed 000, Table 1 and Figure 1.
SPEC = Spec("reader_comparison",
            kernels=("read_branch", "make_aod_like", "page_cache"),
            figures=("timeline", "table1", "time_split"),
            tables=("table1_aod", "table1_nanoaod", "ratio_table", "open_table", "compression_table",
                   "real_table", "failures_table", "cold_table", "table1_objects", "object_split_table",
                   "machine_table"),
            shows_archived=True, check_config=check_config,
            borrows=(("compression", "datasets", "compression"),))  # the main comparison's files
