"""Raw results: one Parquet file per run, provenance in its metadata.

Files are written under a temporary name and renamed into place, so a run
that is killed leaves either the previous file or none, never half of one.
A run whose file exists with the same parameters, measured on this machine
with the same packages, is reused rather than measured again: an interrupted
notebook picks up where it stopped.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

PROVENANCE_KEY = b"throughput.provenance"  # stored in every raw result and archive: never renamed
PARAMS_KEY = b"throughput.params"
# Which raw files of a folder the latest execution used (stored or measured): the runs of
# another configuration stay, so switching back reuses them, but they are not this one's.
CURRENT_RUNS = "current_runs.json"
# One execution: the process that measures (a notebook's kernel, `throughput.node`).
EXECUTION = f"{os.getpid()}-{time.time_ns()}"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it to `path` only on success."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    # Same suffix as the final file, so tools that go by it (papermill, savefig) accept it.
    temporary = final.with_name(f".{final.stem}.tmp-{os.getpid()}{final.suffix}")
    try:
        yield temporary
        os.replace(temporary, final)
    finally:
        temporary.unlink(missing_ok=True)


def write_raw(frame: pd.DataFrame, path: str | os.PathLike, provenance: dict[str, Any],
              params: dict[str, Any]) -> Path:
    """Write one run's rows with its provenance and parameters, atomically; it becomes one
    of its folder's current runs."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = dict(table.schema.metadata or {})
    metadata[PROVENANCE_KEY] = json.dumps(provenance, sort_keys=True, default=str).encode()
    metadata[PARAMS_KEY] = json.dumps(params, sort_keys=True, default=str).encode()
    with atomic_path(path) as temporary:
        pq.write_table(table.replace_schema_metadata(metadata), temporary)
    _note_current(Path(path))
    return Path(path)


def _note_current(path: Path) -> None:
    """Add `path` to its folder's current runs; the first note of a new execution starts the list afresh."""
    ledger = path.parent / CURRENT_RUNS
    try:
        stored = json.loads(ledger.read_text())
    except (OSError, ValueError):
        stored = {}
    names = set(stored.get("runs", [])) if stored.get("execution") == EXECUTION else set()
    if path.name not in names:
        with atomic_path(ledger) as temporary:
            temporary.write_text(json.dumps({"execution": EXECUTION, "runs": sorted(names | {path.name})}, indent=1))


def current_raw_files(raw_dir: str | os.PathLike) -> list[Path]:
    """The raw files of `raw_dir` that the latest execution used (every one where no
    execution recorded them: results from before the record was kept)."""
    raw_dir = Path(raw_dir)
    try:
        names = json.loads((raw_dir / CURRENT_RUNS).read_text())["runs"]
    except (OSError, ValueError, KeyError):
        return sorted(raw_dir.glob("*.parquet"))
    return sorted(raw_dir / name for name in names if (raw_dir / name).is_file())


def read_raw(path: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any], dict[str, Any]]:
    """The rows, provenance and parameters of one raw result file."""
    table = pq.read_table(path)
    metadata = table.schema.metadata or {}
    if PROVENANCE_KEY not in metadata or PARAMS_KEY not in metadata:
        raise ValueError(f"{path}: not a raw result of this study (no provenance in its metadata)")
    return (table.to_pandas(), json.loads(metadata[PROVENANCE_KEY]), json.loads(metadata[PARAMS_KEY]))


# nvcc names its temporary files tmpxft_<pid>_<counter> and a CUDA binary carries that name, so
# two builds of one source differ in these bytes alone (3 bytes in gpu_bandwidth_cuda, seen here).
_NVCC_TEMPORARY_NAME = re.compile(rb"tmpxft_[0-9a-f]{8}_[0-9a-f]{8}")


@functools.lru_cache(maxsize=None)
def _sha256_of(path: str, size: int, mtime_ns: int, blank_nvcc_names: bool) -> str:
    if blank_nvcc_names:  # a kernel binary: a few MB, read whole to blank the names
        return hashlib.sha256(_NVCC_TEMPORARY_NAME.sub(b"tmpxft_", Path(path).read_bytes())).hexdigest()
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _hashed_once(path: str | os.PathLike, blank_nvcc_names: bool) -> str:
    stat = os.stat(path)
    return _sha256_of(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns, blank_nvcc_names)


def sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's content (an input, a source, an archived file), hashed once per
    path, size and modification time in a process."""
    return _hashed_once(path, blank_nvcc_names=False)


def kernel_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a kernel binary, as part of its runs' reuse key: its content with nvcc's
    temporary file names blanked, so a rebuild of the same source (a fresh lease that builds
    again) reuses the runs stored by the first build, while any other change is measured again.
    Equal to `sha256` for a binary that names no such file (every g++ build)."""
    return _hashed_once(path, blank_nvcc_names=True)


def sources_sha256(*paths: str | os.PathLike) -> str:
    """One SHA-256 over the content of the Python sources that measure a method in-process (its
    module and the shared timing loop): part of such a run's reuse key, as a kernel's binary
    hash is of a kernel's, so an edited measuring loop is measured again, not reused."""
    return hashlib.sha256("".join(sha256(p) for p in paths).encode()).hexdigest()


def input_identity(paths: Iterable[str | os.PathLike]) -> list[list[str]]:
    """How a stored run knows its inputs (part of its reuse key): each file's name and
    content hash. An input regenerated with other bytes is measured again; the same
    bytes under another folder are not."""
    return [[Path(p).name, sha256(p)] for p in paths]


def reuse_key(params: dict[str, Any]) -> dict[str, Any]:
    """What a stored run must have been measured with to be reused: `params`
    (the experiment's parameters, kernel binary and input hashes), this
    machine's fingerprint and the package versions. A run measured on another
    machine, or copied in from one, is never taken as this machine's."""
    from . import provenance  # here: provenance imports psutil, which reading results does not need

    key = {**params, "machine": provenance.fingerprint(), "packages": provenance.package_versions()}
    return json.loads(json.dumps(key, sort_keys=True, default=str))


def stored_rows(path: str | os.PathLike, key: dict[str, Any]) -> pd.DataFrame | None:
    """The rows stored at `path` if they were measured with `key`, else None."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        frame, _, stored = read_raw(path)
    except (ValueError, OSError, pa.ArrowInvalid):
        return None  # unreadable: measure again and replace it
    if stored != key:
        return None
    _note_current(path)
    return frame


def read_metadata(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, Any]]:
    """The provenance and parameters (reuse key) of one raw result file, without reading its rows."""
    metadata = pq.read_schema(path).metadata or {}
    if PROVENANCE_KEY not in metadata or PARAMS_KEY not in metadata:
        raise ValueError(f"{path}: not a raw result of this study (no provenance in its metadata)")
    return json.loads(metadata[PROVENANCE_KEY]), json.loads(metadata[PARAMS_KEY])


def read_provenance(path: str | os.PathLike) -> dict[str, Any]:
    """The provenance of one raw result file, without reading its rows."""
    return read_metadata(path)[0]
