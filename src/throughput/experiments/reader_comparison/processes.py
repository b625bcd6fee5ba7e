"""Running a reader as a process: any reader printing JSON lines (the C++
kernel read_branch, the Python readers, the Java reader), what its failure
means, building the Java reader, ROOT's rootreadspeed, and the page_cache
kernel that makes files warm or cold."""
from __future__ import annotations

import concurrent.futures
import json
import math
import os
import re
import shutil
import signal
import subprocess
import tarfile
import urllib.request
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from ... import REPO
from ...core import harness
from ...setup import paths
from ...core.results import sha256
from .spec import JAVA_DIR, LAURELIN_SOURCES, ROOT4J_DIR, ROOT4J_SOURCES, java_available, source_files

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
    support for this input; else ("failed", the first line of its error, or, where
    that is ROOT's chatter, the line telling_line finds)."""
    for signature, reason in CANNOT_READ_SIGNATURES.get(reader, []):
        if signature in error:
            return "cannot_read", reason.format(compression=compression)
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    if lines and _CHATTER.match(lines[0]):
        return "failed", telling_line(error)
    return "failed", lines[0] if lines else "no error message"


# ROOT's chatter, printed before the cause: a class without a dictionary is warned
# about ("Warning in <TClass::Init>: no dictionary ...") long before a reader aborts on it.
_CHATTER = re.compile(r"(Warning|Info|Print) in <")
# What says why a process stopped, most telling first: ROOT's Fatal (then it aborts), an
# uncaught C++ exception, ROOT's signal handler ("*** Break *** segmentation violation"),
# the C library's abort messages ("double free or corruption"), ROOT's errors.
_CAUSES = [re.compile(p) for p in (r"Fatal in <", r"terminate called|what\(\):", r"\*\*\* Break \*\*\*",
                                   r"corruption|[Ss]egmentation fault|[Aa]ssertion|abort", r"Error in <|[Ee]rror")]


def telling_line(text: str) -> str:
    """The line of a process's stderr that says why it stopped: the program's own error
    (``name: error: ...``), else the most telling of _CAUSES, else the first line that
    is not ROOT's chatter (Warning, Info)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    own = [line.split(": error: ", 1)[1] for line in lines if ": error: " in line]
    if own:
        return own[0]
    for cause in _CAUSES:
        found = [number for number, line in enumerate(lines) if cause.search(line) and not _CHATTER.match(line)]
        if found:  # an uncaught exception's what() follows "terminate called ..."
            after = lines[found[0] + 1:found[0] + 2]
            return lines[found[0]] + (f": {after[0]}" if after and after[0].startswith("what():") else "")
    rest = [line for line in lines if not _CHATTER.match(line)]
    return (rest or lines or ["no error message"])[0]


def process_error(returncode: int, stderr: str) -> str:
    """A failed process's error text for its row: the program's own error lines first
    (without its "name: error: " prefix; a library's chatter before them is not the error);
    a process killed by a signal starts with the signal's name and the line saying why
    ("killed by SIGABRT: Fatal in <TEmulatedCollectionProxy::WithCont>: ...")."""
    lines = stderr.strip().splitlines()
    own = [line.split(": error: ", 1)[1] for line in lines if ": error: " in line]
    error = "\n".join(own + [line for line in lines if ": error: " not in line]) or f"exit {returncode}"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        error = f"killed by {name}: {telling_line(stderr)}\n{error}"
    return error


def page_cache(files: list[str], mode: str) -> dict[str, Any]:
    """Bring `files` to `mode` (warm, cold) or report (status) with the page_cache kernel."""
    return harness.run_kernel("page_cache", {"mode": mode, "files": ",".join(map(str, files))}).validation


def run_json_process(argv: list[str], label: str, timeout_s: float | None = None,
                     core: int | None = None) -> dict[str, list[dict]]:
    """Run a reader printing JSON lines; return its records by type.

    Raises ReaderFailed when the reader stops with an error (non-zero exit, timeout, cannot be
    started; the exit status is read before the output, among which ROOT may have printed its
    complaint about a damaged basket), KernelError (naming the command and quoting stderr) for
    a missing or repeated validation record, lines that are not JSON from a reader that exited
    cleanly, or a failed validation (passes of a reader that ran disagree)."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=harness.pinned_env(),
                              preexec_fn=harness.pin_to(core))
    except subprocess.TimeoutExpired as error:
        raise ReaderFailed(f"{label}: did not finish within {timeout_s} s",
                           f"did not finish within {timeout_s} s") from error
    except OSError as error:
        raise ReaderFailed(f"{label}: cannot run {argv[0]}: {error}", f"cannot run {argv[0]}: {error}") from error
    return json_records(proc.returncode, proc.stdout, proc.stderr, label)


def run_python_reader(read: Callable[[list[str]], tuple[int, str, str]], argv: list[str], label: str,
                      core: int | None = None) -> dict[str, list[dict]]:
    """A Python reader's process, as run_json_process's: `read(argv)` (command_line.read_captured:
    the `read` command, its exit status and what it printed) in a fresh process forked by
    harness.in_fresh_process, pinned to `core`. Why not `python -m ... read`: a new interpreter
    spent about 1.5 s a process importing numpy and numba and setting numba up, before reading
    for a few tenths; the fork server does that once and each round still starts afresh."""
    try:
        returncode, stdout, stderr = harness.in_fresh_process(read, argv, core=core)
    except concurrent.futures.process.BrokenProcessPool as error:  # killed by a signal, e.g. a crash
        raise ReaderFailed(f"{label}: its process died: {error}", f"its process died: {error}") from error
    return json_records(returncode, stdout, stderr, label)


def json_records(returncode: int, stdout: str, stderr: str, label: str) -> dict[str, list[dict]]:
    """A reader's JSON lines by record type, from its exit status and output (run_json_process)."""
    records: dict[str, list[dict]] = {}
    stray = []  # what ROOT printed to stdout among the JSON lines ("file probably overwritten")
    for line in stdout.splitlines():
        try:
            record = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            stray.append(line.strip())
            continue
        if isinstance(record, dict):
            records.setdefault(record.get("record", "?"), []).append(record)
        elif record is not None:
            stray.append(line.strip())
    message = "\n".join(part for part in (stderr.strip(), *stray) if part)
    validations = records.get("validation", [])
    # A reader that ran and whose passes disagree fails the job, whatever its exit code.
    if any(not v.get("ok") for v in validations):
        raise harness.KernelError(f"{label}: validation failed: {validations[0]}; {message}")
    # The exit status before the output: a reader stopped by a damaged basket leaves ROOT's message
    # on stdout too, and is a row naming its cause, not a parse error.
    if returncode != 0:
        raise ReaderFailed(f"{label} exited with {returncode}: {message}", process_error(returncode, message))
    if stray:
        raise harness.KernelError(f"{label}: exited cleanly but printed lines that are not JSON records: {stray[:3]}")
    if len(validations) != 1:
        raise harness.KernelError(f"{label}: expected exactly one validation record, got {len(validations)}")
    return records


def java_dir() -> Path:
    """Where the Java reader is built: $THROUGHPUT_JAVA_DIR, else beside the kernels' build."""
    return Path(os.environ.get("THROUGHPUT_JAVA_DIR", harness.kernels_dir().parent.parent / "java" / "reader_comparison"))


def _built_after_sources(jar: Path, sources: tuple[Path, ...]) -> bool:
    """Whether `jar` exists and is newer than every file of `sources`."""
    newest = max(p.stat().st_mtime for p in source_files(sources))
    return jar.exists() and jar.stat().st_mtime >= newest


def build_java_reader(target: str | os.PathLike | None = None) -> Path:
    """Build the laurelin reader with Maven (offline first, reusing the local
    repository under $XDG_CACHE_HOME/m2), unless it is already built; return the jar."""
    target = Path(target) if target else java_dir()
    jar = target / "laurelin-reader.jar"
    if _built_after_sources(jar, LAURELIN_SOURCES):
        return jar
    reason = java_available()
    if reason:
        raise harness.KernelError(f"cannot build the Java reader: {reason}")
    _maven("package", JAVA_DIR, ["-pl", "laurelin", "-am", f"-Drc.build.dir={target.resolve()}"], "the Java reader",
           jar)
    jar.touch()
    return jar


# root4j, the second Java reader: seed 000's pure-Java reader, built from source
# (never published on Maven Central under its own coordinates) with our patch.
ROOT4J_COMMIT = "624b697e666d2e72f8b5386eb050d7f34a72f538"
ROOT4J_REPOSITORY = "https://github.com/diana-hep/root4j"
ROOT4J_TARBALL = paths.SHARED / "vendor" / "root4j-624b697.tar.gz"  # see its README.md
ROOT4J_TARBALL_SHA256 = "2062336b6d84e9a551f499d500d6b33a50e896ec50644d78f205f44d41820661"
ROOT4J_MAVEN = ["-DskipTests", "-Dmaven.javadoc.skip=true", "-Dmaven.source.skip=true", "-Dgpg.skip=true",
                "-Djacoco.skip=true", "-Dmdep.skip=true",
                "-Dmaven.compiler.source=1.8", "-Dmaven.compiler.target=1.8"]


def _maven(goal: str, cwd: Path, extra: list[str], what: str, built: Path) -> None:
    """Run `mvn -q goal` in `cwd`, offline first, then online; KernelError with Maven's
    output's tail unless it succeeds and `built` exists."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", REPO / ".cache")) / "m2"
    base = ["mvn", "-q", goal, f"-Dmaven.repo.local={cache}", *extra]
    for argv in (base[:2] + ["-o"] + base[2:], base):  # offline first, then from Maven Central
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
        if proc.returncode == 0 and built.exists():
            return
    raise harness.KernelError(f"building {what} failed ({' '.join(base)} in {cwd}): "
                              f"{(proc.stdout + proc.stderr)[-2000:]}")


def _root4j_source(work: Path) -> Path:
    """root4j at ROOT4J_COMMIT, unpacked under `work`: from the vendored tarball when it
    is there (its checksum checked), else cloned from GitHub, else GitHub's tarball of
    the commit. Returns its top folder."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    tarball = ROOT4J_TARBALL
    if not tarball.is_file():
        clone = work / "root4j"
        git = shutil.which("git") and subprocess.run(
            ["git", "clone", "-q", ROOT4J_REPOSITORY, str(clone)], capture_output=True, text=True)
        if git and git.returncode == 0 and subprocess.run(
                ["git", "-C", str(clone), "checkout", "-q", ROOT4J_COMMIT], capture_output=True).returncode == 0:
            shutil.rmtree(clone / ".git")
            return clone
        shutil.rmtree(clone, ignore_errors=True)
        tarball = work / f"root4j-{ROOT4J_COMMIT}.tar.gz"
        try:
            urllib.request.urlretrieve(f"{ROOT4J_REPOSITORY}/archive/{ROOT4J_COMMIT}.tar.gz", tarball)
        except OSError as error:
            raise harness.KernelError(f"root4j: no {ROOT4J_TARBALL}, and neither git clone nor the tarball of "
                                      f"{ROOT4J_REPOSITORY} at {ROOT4J_COMMIT} worked: {error}") from error
    else:
        digest = sha256(tarball)
        if digest != ROOT4J_TARBALL_SHA256:
            raise harness.KernelError(f"root4j: {tarball} has sha256 {digest}, not {ROOT4J_TARBALL_SHA256}")
    with tarfile.open(tarball) as archive:
        archive.extractall(work / "src", filter="data")
    tops = [p for p in (work / "src").iterdir() if p.is_dir()]
    if len(tops) != 1 or not (tops[0] / "pom.xml").is_file():
        raise harness.KernelError(f"root4j: {tarball} does not hold one folder with a pom.xml")
    return tops[0]


def root4j_dir() -> Path:
    """Where the root4j reader is built: beside the laurelin reader's build."""
    return java_dir().parent / "root4j_reader"


def build_root4j_reader(target: str | os.PathLike | None = None) -> Path:
    """Build the root4j reader, unless it is already built; return its jar (run it as
    `java -jar JAR` with the laurelin reader's options). root4j at ROOT4J_COMMIT is
    unpacked (or fetched), patched with kernels/reader_comparison/java/root4j/root4j.patch,
    installed with Maven into the local repository under $XDG_CACHE_HOME/m2 as
    org.diana-hep:root4j:0.1.7-624b697-throughput, and the reader module (java/root4j,
    with its sibling java/common) packaged into `target`."""
    target = Path(target) if target else root4j_dir()
    jar = target / "root4j-reader.jar"
    patch = ROOT4J_DIR / "root4j.patch"
    if _built_after_sources(jar, ROOT4J_SOURCES):
        return jar
    reason = java_available()
    if reason:
        raise harness.KernelError(f"cannot build the root4j reader: {reason}")
    if shutil.which("patch") is None:
        raise harness.KernelError("cannot build the root4j reader: patch not installed")
    source = _root4j_source(target / "root4j")
    proc = subprocess.run(["patch", "-p1", "--forward", "--batch", "-i", str(patch)], cwd=source,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise harness.KernelError(f"root4j: {patch} does not apply to {ROOT4J_COMMIT}: "
                                  f"{(proc.stdout + proc.stderr)[-2000:]}")
    _maven("install", source, ROOT4J_MAVEN, "root4j", source / "target" / "root4j-0.1.7-624b697-throughput.jar")
    _maven("package", JAVA_DIR, ["-pl", "root4j", "-am", f"-Drc.build.dir={target.resolve()}"], "the root4j reader",
           jar)
    jar.touch()
    return jar


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


# The files listed this many times in turn: one pass over them is the slope of rootreadspeed's
# times against the copies (least squares), its start-up the intercept. Not symmetric about
# their mean, whose point a least-squares slope ignores ((1, 3, 5) would be (t5 - t1) / 4 again);
# three runs a round, not five, since each is mostly ROOT's start-up (about 0.3 s). After the
# warm-up the last listing is calibrated (rootreadspeed_copies): as many copies as read for at
# least the minimum sample, so that the slope spans more than the tool's start-up noise.
ROOTREADSPEED_COPIES = (1, 2, 5)
ROOTREADSPEED_MAX_COPIES = 200  # a bound on the calibrated listing (a pass below the tool's noise)


def rootreadspeed_copies(per_pass_s: float, min_sample_s: float) -> tuple[int, ...]:
    """The listings of a measured round: ROOTREADSPEED_COPIES with its last raised to as many
    copies as read for at least `min_sample_s` at the warm-up's `per_pass_s` (a tenth to spare, as
    harness.Calibration), at most ROOTREADSPEED_MAX_COPIES; unchanged where the warm-up gave no
    positive pass time or no minimum is asked."""
    *first, last = ROOTREADSPEED_COPIES
    if not (min_sample_s > 0 and per_pass_s > 0):
        return ROOTREADSPEED_COPIES
    wanted = math.ceil(1.1 * min_sample_s / per_pass_s)
    return (*first, min(ROOTREADSPEED_MAX_COPIES, max(last, wanted)))


def per_copy(copies: list[int], times: list[float]) -> tuple[float, float]:
    """The least-squares line of `times` against `copies`: (slope, intercept), the time one more
    copy of the files adds (one pass) and what no copy costs (the tool's start-up). Every point
    enters: a pass below the tool's own noise gives a small or negative slope, kept as such."""
    slope, intercept = np.polyfit(np.asarray(copies, float), np.asarray(times, float), 1)
    return float(slope), float(intercept)


# ROOT's own error lines (its handler's Error and worse, and the decompressors' complaints).
_ROOT_ERROR = re.compile(r"^(Error|SysError|Fatal|Break) in <|^R__unzip")


def run_rootreadspeed(files: list[str], tree: str, branch: str, counter: str | None, cache: str,
                      passes: int, warmup: int, min_sample_s: float = 0.0) -> pd.DataFrame:
    """rootreadspeed on the value branch and its counter (files brought to `cache`
    first). Its own timer includes ROOT's start-up (about 0.2 s), which would
    dominate small inputs: each round runs it with the files listed each of
    ROOTREADSPEED_COPIES times, and one pass over the files (opening included)
    is the slope of its times against the copies (per_copy, least squares over
    every copy count rather than a difference of two); `startup_s` is the
    intercept. After the warm-up the last listing reads for at least
    `min_sample_s` (rootreadspeed_copies; `copies_max` in each row)."""
    def once(listed: list[str]) -> dict[str, float]:
        page_cache(files, cache)
        argv = [str(rootreadspeed_path()), "--files", *listed, "--trees", tree,
                "--branches", branch, *([counter] if counter else []), "--threads", "0"]
        proc = subprocess.run(argv, capture_output=True, text=True, env=harness.pinned_env())
        if proc.returncode != 0:  # a row saying why (it aborts on classes without a dictionary), not a stop
            raise ReaderFailed(f"rootreadspeed on {files[0]} branch {branch} exited with {proc.returncode}: "
                               f"{(proc.stdout + proc.stderr)[-1500:]}", process_error(proc.returncode, proc.stderr))
        # It exits 0 after a basket that does not decompress ("R__unzip: error -5 in inflate"),
        # timing what it could not read: a row naming the files, the branch and ROOT's first error.
        errors = [line.strip() for line in proc.stderr.splitlines() if _ROOT_ERROR.match(line.strip())]
        if errors:
            reason = f"files {', '.join(files)}, branch {branch}: ROOT reported an error: {errors[0]}"
            raise ReaderFailed(f"rootreadspeed on {reason}", reason)
        return parse_rootreadspeed(proc.stdout)

    rows = []
    copies = list(ROOTREADSPEED_COPIES)
    for index in range(warmup + passes):
        if index == warmup and rows:  # calibrated on the last warm-up round's pass time
            copies = list(rootreadspeed_copies(rows[-1]["wall_s"], min_sample_s))
        runs = [once(files * c) for c in copies]
        # kept as measured when zero or negative (a pass below the tool's own noise): dropping
        # those would keep only the rounds where it was slower (analysis.paired_rate_ratio)
        per_pass = {k: per_copy(copies, [run[k] for run in runs])[0] for k in runs[0]}
        rows.append({"record": "timing", "method": "rootreadspeed", "branch": branch, "rep": index - warmup,
                     "warmup": index < warmup, "order": 0, **per_pass, "open_s": float("nan"),
                     "startup_s": per_copy(copies, [run["wall_s"] for run in runs])[1],
                     "copies_max": copies[-1], "wall_first_copies_s": runs[0]["wall_s"],
                     "wall_last_copies_s": runs[-1]["wall_s"],
                     "files": len(files), "cache": cache})
    return pd.DataFrame(rows)
