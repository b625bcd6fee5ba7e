"""Running a reader as a process: any reader printing JSON lines (the C++
kernel read_branch, the Python readers, the Java reader), what its failure
means, building the Java reader, ROOT's rootreadspeed, and the page_cache
kernel that makes files warm or cold."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd

from ... import REPO, harness

class ReaderFailed(harness.KernelError):
    """A reader process stopped with an error (exit code, exception, timeout) on an
    input: a row of the tables ("failed: ..." or "cannot read: ..."), not a crash
    of the paper. A reader that ran and disagrees is not this: that fails the job."""

    def __init__(self, message: str, error: str):
        super().__init__(message)
        self.error = error  # the reader's own error text (its stderr)


# Errors that mean "this reader has no support for this input's compression",
# recognised in the reader's own error text, with the reason the tables give.
# Found by trying (tests/experiments/test_reader_comparison.py): laurelin 1.0.1 has no ZSTD
# decompressor, and parses every basket as compressed.
CANNOT_READ_SIGNATURES = {
    "laurelin": [
        ("Unable to determine compression algorithm", "no {compression} codec"),
        ("Read an inappropriate number", "uncompressed baskets"),
    ],
}


def classify_failure(reader: str, compression: str, error: str) -> tuple[str, str]:
    """("cannot_read", the reason) when the reader's own error says it lacks
    support for this input; else ("failed", the first line of its error)."""
    for signature, reason in CANNOT_READ_SIGNATURES.get(reader, []):
        if signature in error:
            return "cannot_read", reason.format(compression=compression)
    lines = [line for line in error.strip().splitlines() if line.strip()]
    return "failed", lines[0] if lines else "no error message"


def page_cache(files: list[str], mode: str) -> dict[str, Any]:
    """Bring `files` to `mode` (warm, cold) or report (status) with the page_cache kernel."""
    return harness.run_kernel("page_cache", {"mode": mode, "files": ",".join(map(str, files))}).validation


def run_json_process(argv: list[str], label: str, timeout_s: float | None = None) -> dict[str, list[dict]]:
    """Run a reader printing JSON lines; return its records by type.

    Raises ReaderFailed when the reader stops with an error (non-zero exit,
    timeout, cannot be started), KernelError (naming the command and quoting
    stderr) for a missing or repeated validation record or a failed validation
    (passes of a reader that ran disagree)."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=harness.pinned_env())
    except subprocess.TimeoutExpired as error:
        raise ReaderFailed(f"{label}: did not finish within {timeout_s} s",
                           f"did not finish within {timeout_s} s") from error
    except OSError as error:
        raise ReaderFailed(f"{label}: cannot run {argv[0]}: {error}", f"cannot run {argv[0]}: {error}") from error
    message = proc.stderr.strip()
    records: dict[str, list[dict]] = {}
    for number, line in enumerate(proc.stdout.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise harness.KernelError(f"{label}: line {number} is not JSON: {line!r}") from error
        records.setdefault(record.get("record", "?"), []).append(record)
    validations = records.get("validation", [])
    # A reader that ran and whose passes disagree fails the job, whatever its exit code.
    if any(not v.get("ok") for v in validations):
        raise harness.KernelError(f"{label}: validation failed: {validations[0]}; {message}")
    if proc.returncode != 0:
        # the reader's own words, without the program's "name: error: " prefix
        error = "\n".join(line.split(": error: ", 1)[-1] for line in message.splitlines()) or f"exit {proc.returncode}"
        raise ReaderFailed(f"{label} exited with {proc.returncode}: {message}", error)
    if len(validations) != 1:
        raise harness.KernelError(f"{label}: expected exactly one validation record, got {len(validations)}")
    return records


def java_dir() -> Path:
    """Where the Java reader is built: $THROUGHPUT_JAVA_DIR, else beside the kernels' build."""
    return Path(os.environ.get("THROUGHPUT_JAVA_DIR", harness.kernels_dir().parent.parent / "java" / "reader_comparison"))


def java_available() -> str | None:
    """None if Java and Maven are there, else the reason the Java reader cannot run."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    return f"not measured here: {' and '.join(missing)} not installed" if missing else None


def build_java_reader(target: str | os.PathLike | None = None) -> Path:
    """Build the laurelin reader with Maven (offline first, reusing the local
    repository under $XDG_CACHE_HOME/m2), unless it is already built; return the jar."""
    target = Path(target) if target else java_dir()
    jar = target / "laurelin-reader.jar"
    source = REPO / "kernels" / "reader_comparison" / "java"
    newest = max(p.stat().st_mtime for p in source.rglob("*") if p.is_file())
    if jar.exists() and jar.stat().st_mtime >= newest:
        return jar
    reason = java_available()
    if reason:
        raise harness.KernelError(f"cannot build the Java reader: {reason}")
    cache = Path(os.environ.get("XDG_CACHE_HOME", REPO / ".cache")) / "m2"
    base = ["mvn", "-q", "package", f"-Dmaven.repo.local={cache}", f"-Drc.build.dir={target.resolve()}"]
    for argv in (base[:2] + ["-o"] + base[2:], base):  # offline first, then from Maven Central
        proc = subprocess.run(argv, cwd=source, capture_output=True, text=True)
        if proc.returncode == 0 and jar.exists():
            jar.touch()
            return jar
    raise harness.KernelError(f"building the Java reader failed ({' '.join(base)} in {source}): "
                              f"{(proc.stdout + proc.stderr)[-2000:]}")


def rootreadspeed_path() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("ROOT")
    if spec is None or not spec.submodule_search_locations:
        raise harness.KernelError("rootreadspeed: the ROOT Python package is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "bin" / "rootreadspeed"
    if not path.is_file():
        raise harness.KernelError(f"rootreadspeed is not in the ROOT wheel ({path} missing)")
    return path


def parse_rootreadspeed(text: str) -> dict[str, float]:
    """Real and CPU time and bytes from rootreadspeed's report."""
    values = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        words = rest.split()
        if key.strip() in ("Real time", "CPU time") and words:
            values["wall_s" if key.strip() == "Real time" else "cpu_s"] = float(words[0])
        elif key.strip() in ("Uncompressed data read", "Compressed data read") and words:
            values["bytes_uncompressed" if key.startswith("Uncompressed") else "bytes_compressed"] = float(words[0])
    if set(values) != {"wall_s", "cpu_s", "bytes_uncompressed", "bytes_compressed"}:
        raise harness.KernelError(f"rootreadspeed: cannot read its report:\n{text[-1500:]}")
    return values


ROOTREADSPEED_COPIES = 5  # files listed once and this many times; the difference gives one pass


def run_rootreadspeed(files: list[str], tree: str, branch: str, counter: str | None, cache: str,
                      passes: int, warmup: int) -> pd.DataFrame:
    """rootreadspeed on the value branch and its counter (files brought to `cache`
    first). Its own timer includes ROOT's start-up (about 0.2 s), which would
    dominate small inputs: each pass runs it with the files listed once and
    ROOTREADSPEED_COPIES times, and one pass over the files (opening included)
    is the difference divided by ROOTREADSPEED_COPIES - 1."""
    def once(listed: list[str]) -> dict[str, float]:
        page_cache(files, cache)
        argv = [str(rootreadspeed_path()), "--files", *listed, "--trees", tree,
                "--branches", branch, *([counter] if counter else []), "--threads", "0"]
        proc = subprocess.run(argv, capture_output=True, text=True, env=harness.pinned_env())
        if proc.returncode != 0:
            raise harness.KernelError(f"rootreadspeed on {files[0]} branch {branch} exited with {proc.returncode}: "
                                      f"{(proc.stdout + proc.stderr)[-1500:]}")
        return parse_rootreadspeed(proc.stdout)

    rows = []
    for index in range(warmup + passes):
        single, multiple = once(files), once(files * ROOTREADSPEED_COPIES)
        per_pass = {k: (multiple[k] - single[k]) / (ROOTREADSPEED_COPIES - 1) for k in single}
        if per_pass["wall_s"] <= 0:
            per_pass["wall_s"] = float("nan")  # below the tool's resolution: not a rate
        rows.append({"record": "timing", "method": "rootreadspeed", "branch": branch, "rep": index - warmup,
                     "warmup": index < warmup, "order": 0, **per_pass, "open_s": float("nan"),
                     "wall_single_s": single["wall_s"], "wall_multiple_s": multiple["wall_s"],
                     "files": len(files), "cache": cache})
    return pd.DataFrame(rows)
