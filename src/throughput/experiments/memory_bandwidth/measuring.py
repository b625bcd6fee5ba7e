"""The plan of runs, their groups (one per
thread count) and measuring them interleaved (throughput.core.experiment), or
reusing them when stored with the same parameters and binaries on this machine."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pandas as pd

from ...core import experiment, harness, noise, provenance
from ...setup.config import thread_counts
from ...core.results import kernel_sha256, sources_sha256
from .analysis import with_rates
from .methods import _numba_method, _numpy_method, expected_checksum
from .vocabulary import CONSTANT, MODES


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
    return runs


def _measure_pass(run: dict[str, Any], params: dict[str, Any],
                  settings: noise.Settings) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One process of `run` on freshly made arrays: its warm-up passes, then
    `settings.samples_per_process` samples of at least `settings.min_sample_s` each (the
    kernel repeats the pass inside one sample: `loops`), each taken again while its process
    waited too long for a CPU (settings.sample_retakes: `sample_retakes`). The interleaving loop
    (throughput.core.experiment) calls this once per round. A single-threaded kernel or method
    is pinned to one core (harness.single_core); a Python method runs in a fresh process of
    its own each round (harness.in_fresh_process), as a kernel does, its JIT compiled there."""
    n, warmup, threads = params["n_values"], params["warmup"], run["threads"]
    core = harness.single_core() if threads == 1 else None
    samples, min_sample_s, retakes = settings.samples_per_process, settings.min_sample_s, settings.sample_retakes
    if run["kernel"]:
        args = {"n": n, "threads": threads, "reps": samples, "warmup": warmup, "min-sample-s": min_sample_s,
                **retakes.kernel_args()}
        if run["method"] == "C++":
            args.update(mode=run["mode"], constant=int(CONSTANT))
        result = harness.run_kernel(run["kernel"], args, core=core)
        frame = result.timings
        checksum = result.validation["checksum"]
        if run["method"] == "C++":
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
    return f"{run['method']}_{run['mode']}_{run['opt']}_t{run['threads']}".replace("+", "p").replace("/", "")


def run_label(run: dict[str, Any]) -> str:
    """How tables and the paper name a run."""
    opt = f" -{run['opt']}" if run["method"] == "C++" else ""
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
    # judged by each round's best pass, as the figures take it
    frame = experiment.measure_interleaved(
        groups(params), raw_dir, key_of, lambda run, _round: _measure_pass(run, params, settings),
        params["repetitions"], settings, series=["mode"], desc="memory bandwidth", progress=progress,
        per_round="min")
    return with_rates(frame)
