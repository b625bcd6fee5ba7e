"""The plan of runs, their groups (one per
thread count) and measuring them interleaved (throughput.core.experiment), or
reusing them when stored with the same parameters and binaries on this machine."""
from __future__ import annotations

import functools
import inspect
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...core import experiment, harness, noise, provenance
from ...setup.config import thread_counts
from ...core.results import kernel_sha256, sources_sha256
from .analysis import with_rates
from .methods import _initial_chunks, _numba_method, _numpy_method, expected_checksum
from .vocabulary import CONSTANT, FROM_FILE, IN_CACHE, IN_CACHE_VALUES, MODES


def plan(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every run of the experiment, in the order they are measured."""
    runs = [{"method": "C++", "kernel": f"add_constant_{opt}", "opt": opt, "mode": mode, "threads": 1}
            for mode in MODES for opt in params["opt_levels"]]
    counts = thread_counts(params["max_threads"])
    runs += [{"method": "C++", "kernel": "add_constant_O3", "opt": "O3", "mode": mode, "threads": t}
             for mode in MODES for t in counts if t > 1]
    runs += [{"method": "STREAM", "kernel": "stream_O3", "opt": "O3", "mode": "all", "threads": t}
             for t in counts]
    runs += [{"method": "numpy", "kernel": None, "opt": "n/a", "mode": mode, "threads": 1}
             for mode in MODES if "numpy" in params["python_methods"]]
    runs += [{"method": "numba", "kernel": None, "opt": "n/a", "mode": mode, "threads": t}
             for mode in MODES for t in counts if "numba" in params["python_methods"]]
    if params.get("hierarchy"):  # absent from parameters older than the key: not measured then
        runs += [{"method": IN_CACHE, "kernel": "add_constant_O3", "opt": "O3", "mode": "inplace", "threads": 1,
                  "n": IN_CACHE_VALUES},
                 {"method": FROM_FILE, "kernel": "rdf_raw_read", "opt": "n/a", "mode": "read", "threads": 1}]
    return runs


def values_file(raw_dir: Path) -> Path:
    """Where the file run reads the memory runs' values from: beside the stored runs, on the disk the
    results are on (a folder no results reader looks into), removed after measuring (measure_runs)."""
    return Path(raw_dir) / "scratch" / "values.f64"


def _file_list(path: Path) -> Path:
    """The list of files rdf_raw_read reads, beside the values file: that file alone."""
    return path.parent / "files.txt"


def write_values(path: Path, n: int) -> None:
    """The memory runs' initial values (i % 1000 as float64, methods._initial_chunks), n of them, raw
    into `path`, a chunk at a time, and the list rdf_raw_read reads it by (_file_list)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        for _start, _stop, values in _initial_chunks(n):
            out.write(values.tobytes())
    _file_list(path).write_text(f"{path.resolve()}\n")


@functools.lru_cache(maxsize=4)  # once per size, not once per round
def values_checksum(n: int) -> float:
    """rdf_raw_read's checksum of the file write_values makes: the sum of its 64-bit words modulo 2^52."""
    total = 0
    for _start, _stop, values in _initial_chunks(n):
        total += int(values.view(np.uint64).sum(dtype=np.uint64))  # wraps modulo 2^64, as the kernel's sum
    return float(total % (1 << 52))


def cold_read_problem(path: Path) -> str | None:
    """Why the file run cannot read `path` from a cold page cache here (None: the page_cache tool
    emptied it and checked): a file system whose pages it cannot drop (tmpfs) names itself."""
    try:
        harness.run_kernel("page_cache", {"mode": "cold", "files": str(path)})
    except harness.KernelError as error:
        return f"the page cache cannot be emptied for {path}: {error}"
    return None


def _measure_file(params: dict[str, Any], raw_dir: Path, settings: noise.Settings) -> tuple[pd.DataFrame, dict]:
    """One process of the file run: rdf_raw_read's warm-up passes, then its samples, each pass from a
    cold page cache (set afresh and checked, untimed), every pass's bytes and checksum checked
    against the values written; as the add's rows (8 bytes a value, mode `read`)."""
    n, path = params["n_values"], values_file(raw_dir)  # written, with its list, by measure_runs
    checksum, core = values_checksum(n), harness.single_core()
    result = harness.run_kernel("rdf_raw_read", {"file-list": _file_list(path), "cache": "cold",
                                                 "reps": settings.samples_per_process, "warmup": params["warmup"],
                                                 **settings.calibration_kernel_args(),
                                                 **settings.sample_retakes.kernel_args()},
                                core=core)
    frame = result.timings
    if (frame["bytes"] != 8 * n).any() or result.validation["checksum"] != checksum:
        raise AssertionError(f"rdf_raw_read of {path}: read {sorted(set(frame['bytes']))} bytes with checksum "
                             f"{result.validation['checksum']}, the {n} values written are {8 * n} bytes with {checksum}")
    frame = frame.assign(method=FROM_FILE, opt="n/a", mode="read", n=n, threads=1,
                         bytes_moved=frame["bytes"] * frame["loops"], checksum=checksum,
                         passes_made=harness.passes_made(frame))
    return frame, provenance.capture(params, cache_state="cold", build_info=result.build_info, pinned_core=core)


def _measure_pass(run: dict[str, Any], params: dict[str, Any], settings: noise.Settings,
                  raw_dir: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One process of `run` on freshly made arrays: its warm-up passes, then
    `settings.samples_per_process` samples of at least `settings.min_sample_s` each (the
    kernel repeats the pass inside one sample: `loops`), each taken again while its process
    waited too long for a CPU (settings.sample_retakes: `sample_retakes`). The interleaving loop
    (throughput.core.experiment) calls this once per round. A single-threaded kernel or method
    is pinned to one core (harness.single_core); a Python method runs in a fresh process of
    its own each round (harness.in_fresh_process), as a kernel does, its JIT compiled there. The
    in-cache run adds on IN_CACHE_VALUES doubles; the file run reads the values (_measure_file)."""
    if run["method"] == FROM_FILE:
        return _measure_file(params, raw_dir, settings)
    n = run.get("n", params["n_values"])  # the in-cache run's own
    warmup, threads = params["warmup"], run["threads"]
    core = harness.single_core() if threads == 1 else None
    samples, min_sample_s, retakes = settings.samples_per_process, settings.min_sample_s, settings.sample_retakes
    if run["kernel"]:
        args = {"n": n, "threads": threads, "reps": samples, "warmup": warmup, "min-sample-s": min_sample_s,
                **retakes.kernel_args()}
        if run["kernel"].startswith("add_constant"):
            args.update(mode=run["mode"], constant=int(CONSTANT))
        result = harness.run_kernel(run["kernel"], args, core=core)
        frame = result.timings
        checksum = result.validation["checksum"]
        if run["kernel"].startswith("add_constant"):
            expected = expected_checksum(n, run["mode"], harness.passes_made(frame))
            if checksum != expected:
                raise AssertionError(f"{run['kernel']} {run['mode']}: checksum {checksum} != {expected}")
        frame["checksum"] = checksum
        build_info = result.build_info
    else:
        if run["method"] == "numpy":
            frame, checksum = harness.in_fresh_process(_numpy_method, run["mode"], n, samples, warmup, min_sample_s,
                                                       retakes, core=core)
        else:
            frame, checksum = harness.in_fresh_process(_numba_method, run["mode"], n, threads, samples, warmup,
                                                       min_sample_s, retakes, core=core)
        frame = frame.assign(kernel=run["method"], opt="n/a", mode=run["mode"], n=n, threads=threads,
                             bytes_moved=2 * 8 * n * frame["loops"], checksum=checksum)
        build_info = None
    frame["method"] = run["method"]
    frame["passes_made"] = harness.passes_made(frame)  # what this process's checksum counts
    return frame, provenance.capture(params, cache_state="n/a (in-memory)", build_info=build_info,
                                     pinned_core=core)


def run_name(run: dict[str, Any]) -> str:
    name = f"{run['method']}_{run['mode']}_{run['opt']}_t{run['threads']}"
    return name.replace("+", "p").replace("/", "").replace(",", "").replace(" ", "-")


def run_label(run: dict[str, Any]) -> str:
    """How tables and the paper name a run."""
    opt = f" -{run['opt']}" if run["method"] in ("C++", IN_CACHE) else ""
    mode = "" if run["method"] == "STREAM" else f" {run['mode']}"
    return f"{run['method']}{opt}{mode} ({run['threads']} thread{'s' if run['threads'] > 1 else ''})"


def groups(params: dict[str, Any]) -> list[experiment.Group]:
    """The runs of `plan` that ratios compare, one group per thread count: the -O
    levels, numpy and STREAM on one thread; C++, numba and STREAM at each other
    count. A group is measured interleaved, pass by pass."""
    runs = [{**run, "name": run_name(run)} for run in plan(params)]
    counts = sorted({run["threads"] for run in runs})
    return [experiment.Group(f"{t} thread{'s' if t > 1 else ''}", [r for r in runs if r["threads"] == t])
            for t in counts]


def measure_runs(params: dict[str, Any], raw_dir: str | Path, noise_settings: noise.Settings | None = None,
                 progress: bool = True) -> pd.DataFrame:
    """Run (or reuse, when stored with the same parameters and binaries on this
    machine) every run of `plan`, interleaved within each group of `groups`."""
    def key_of(run: dict[str, Any]) -> dict[str, Any]:
        key = {**params, **run}
        if run["kernel"]:
            key["binary_sha256"] = kernel_sha256(harness.kernel_path(run["kernel"]))
        else:  # measured in this process: by the methods module and the shared timing loop
            key["source_sha256"] = sources_sha256(inspect.getfile(_numpy_method), harness.__file__)
        return key

    settings = noise_settings or noise.Settings()
    planned, scratch = groups(params), values_file(raw_dir)
    try:
        if params.get("hierarchy"):
            write_values(scratch, params["n_values"])
            problem = cold_read_problem(scratch)
            if problem:  # the section says the file run was left out (report: MbwHierarchyState nocold)
                print(f"memory bandwidth: the cold file read is left out: {problem}")
                planned = [experiment.Group(g.name, [r for r in g.runs if r["method"] != FROM_FILE]) for g in planned]
        # judged by each round's best pass, as the figures take it
        frame = experiment.measure_interleaved(
            planned, raw_dir, key_of, lambda run, _round: _measure_pass(run, params, settings, Path(raw_dir)),
            params["repetitions"], settings, series=["mode"], desc="memory bandwidth", progress=progress,
            per_round="min")
    finally:  # the values file is scratch: 8 bytes a value, not a result
        shutil.rmtree(scratch.parent, ignore_errors=True)
    return with_rates(frame)
