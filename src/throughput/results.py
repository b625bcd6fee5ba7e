"""Raw results: one Parquet file per run, provenance in its metadata.

Files are written under a temporary name and renamed into place, so a run
that is killed leaves either the previous file or none, never half of one.
A run whose file exists with the same parameters is reused rather than
measured again: an interrupted notebook picks up where it stopped.
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

PROVENANCE_KEY = b"throughput.provenance"
PARAMS_KEY = b"throughput.params"


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
    """Write one run's rows with its provenance and parameters, atomically."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = dict(table.schema.metadata or {})
    metadata[PROVENANCE_KEY] = json.dumps(provenance, sort_keys=True, default=str).encode()
    metadata[PARAMS_KEY] = json.dumps(params, sort_keys=True, default=str).encode()
    with atomic_path(path) as temporary:
        pq.write_table(table.replace_schema_metadata(metadata), temporary)
    return Path(path)


def read_raw(path: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any], dict[str, Any]]:
    """The rows, provenance and parameters of one raw result file."""
    table = pq.read_table(path)
    metadata = table.schema.metadata or {}
    if PROVENANCE_KEY not in metadata or PARAMS_KEY not in metadata:
        raise ValueError(f"{path}: not a raw result of this study (no provenance in its metadata)")
    return (table.to_pandas(), json.loads(metadata[PROVENANCE_KEY]), json.loads(metadata[PARAMS_KEY]))


def measure_once(path: str | os.PathLike, params: dict[str, Any],
                 measure: Callable[[], tuple[pd.DataFrame, dict[str, Any]]]) -> pd.DataFrame:
    """Return the rows stored at `path` if they were measured with `params`,
    else call `measure()` (which returns rows and provenance) and store them."""
    path = Path(path)
    canonical = json.loads(json.dumps(params, sort_keys=True, default=str))
    if path.exists():
        try:
            frame, _, stored = read_raw(path)
        except (ValueError, OSError, pa.ArrowInvalid):
            stored = None  # unreadable: measure again and replace it
        if stored == canonical:
            return frame
    frame, provenance = measure()
    write_raw(frame, path, provenance, canonical)
    return frame
