"""CPU memory bandwidth (seed 000, "Memory bandwidth: conventional vs GPU vs KNL").

Add a constant to N doubles, in place and into a second array ("immutable"),
with the C++ kernel at -O0..-O3, numpy and numba; scale the threads up to the
memory-bus limit; and hold every figure against a STREAM-like reference
measured in the same run. Every run is validated against the exact expected
values, and all methods must give the same checksum.

Units: a rate in "GHz", as the seed uses it, is 10^9 float64 values per
second; GB/s is 10^9 bytes per second, counting the bytes the loop reads and
writes (STREAM's convention: no write-allocate traffic).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numba
import numpy as np
import pandas as pd

from .. import experiment, flat_add, harness, machine_fit, noise, provenance, seeds
from ..results import sha256
from ..config import thread_counts, usable_cores

# Seed 000 (figures in throughput.seeds): single thread, SEED_N doubles, seconds per pass.
SEED_N = seeds.MBW_VALUES
SEED_SECONDS = seeds.MBW_SECONDS
SEED_PLATEAU_GHZ = seeds.MBW_PLATEAU_GHZ  # the multi-thread limit on a conventional memory bus
# Targets against STREAM scale (the paper quotes them from here): the single-thread -O3
# in-place rate reaches SINGLE_TARGET of it; the all-cores plateau is within PLATEAU_BAND of it.
SINGLE_TARGET = 0.9
PLATEAU_BAND = 0.1
CONSTANT = 1.0
INIT_PERIOD = 1000  # values are i % 1000: small integers, exact in float64
MODES = ("inplace", "immutable")
STREAM_OPS = ("copy", "scale", "add", "triad")
# Bytes actually crossing the memory bus per value, write-allocate included
# (a store to a line not in cache first reads it).
BUS_BYTES_PER_VALUE = {"inplace": 16, "immutable": 24, "copy": 24, "scale": 24, "add": 32, "triad": 32}


MIN_VALUES = 1000  # the schema's minimum of memory_bandwidth.n_values
ARRAYS_ALIVE = 3  # STREAM keeps three arrays; the immutable cases two


def check_config(section: dict[str, Any], fit: machine_fit.Fitter) -> None:
    """Fit this section to the machine (see throughput.machine_fit): the arrays to
    the memory a run may use, threads to the cores (null: every core)."""
    largest = fit.memory_budget // (ARRAYS_ALIVE * 8)
    fit.size(section, "n_values", ARRAYS_ALIVE * 8 * section["n_values"],
             largest if largest >= MIN_VALUES else None, f"{ARRAYS_ALIVE} arrays of 8-byte values")
    cores = usable_cores()
    if section["max_threads"] is None:
        section["max_threads"] = cores
    # numba refuses more threads than cores, and oversubscribed threads would
    # measure the scheduler rather than the memory bus.
    fit.count(section, "max_threads", cores)


def expected_checksum(n: int, mode: str, passes: int) -> float:
    """Sum of the output array after `passes` in-place passes (or one immutable pass)."""
    full, rest = divmod(n, INIT_PERIOD)
    base = full * (INIT_PERIOD * (INIT_PERIOD - 1) // 2) + rest * (rest - 1) // 2
    return float(base + n * CONSTANT * (passes if mode == "inplace" else 1))


def _initial_chunks(n: int, chunk: int = 1 << 22):
    """(start, stop, i % 1000 as float64 for i in [start, stop)): the initial values a chunk at a time."""
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        yield start, stop, (np.arange(start, stop) % INIT_PERIOD).astype(np.float64)


def _initial(n: int, chunk: int = 1 << 22) -> np.ndarray:
    """i % 1000 as float64, filled in chunks so no n-sized temporaries are made."""
    a = np.empty(n)
    for start, stop, values in _initial_chunks(n, chunk):
        a[start:stop] = values
    return a


def _check(out: np.ndarray, n: int, mode: str, passes: int, method: str, chunk: int = 1 << 22) -> float:
    """Check every element of `out` exactly against its known value, i % 1000 plus
    the constant once per pass (once for immutable; `passes` 0: the untouched
    input), as the C++ kernel does; return the checksum (the sum). Runs after
    the timed passes, a chunk at a time."""
    if out.shape != (n,):
        raise AssertionError(f"{method} {mode}: output has shape {out.shape}, expected ({n},)")
    added = CONSTANT * (passes if mode == "inplace" else 1)
    wrong, first = 0, None
    for start, stop, values in _initial_chunks(n, chunk):
        values += added
        bad = np.flatnonzero(out[start:stop] != values)
        if len(bad) and first is None:
            first = (start + int(bad[0]), float(out[start + bad[0]]), float(values[bad[0]]))
        wrong += len(bad)
    if wrong:
        index, got, expected_value = first
        raise AssertionError(f"{method} {mode}: {wrong} of {n} values wrong, the first at index {index}: "
                             f"{got} != {expected_value}")
    checksum = float(out.sum())
    expected = expected_checksum(n, mode, passes)
    if checksum != expected:
        raise AssertionError(f"{method} {mode}: checksum {checksum} != expected {expected}")
    return checksum


def _check_outputs(a: np.ndarray, out: np.ndarray, n: int, mode: str, passes: int, method: str) -> float:
    """The output's every element; for immutable, also that the input was left as it was."""
    if mode == "immutable":
        _check(a, n, "inplace", 0, f"{method} (its input)")
    return _check(out, n, mode, passes, method)


def _numpy_method(mode: str, n: int, repetitions: int, warmup: int) -> tuple[pd.DataFrame, float]:
    a = _initial(n)
    if mode == "inplace":
        frame, _ = harness.time_python(lambda: np.add(a, CONSTANT, out=a), repetitions, warmup)
        out = a
    else:
        b = np.full(n, -1.0)
        frame, _ = harness.time_python(lambda: np.add(a, CONSTANT, out=b), repetitions, warmup)
        out = b
    return frame, _check_outputs(a, out, n, mode, warmup + repetitions, "numpy")


def _numba_method(mode: str, n: int, threads: int, repetitions: int, warmup: int) -> tuple[pd.DataFrame, float]:
    numba.set_num_threads(threads)
    a = _initial(n)
    # Compile outside the timed passes (the warm-up pass would absorb it too,
    # but then warm-up timings would mix JIT and memory effects).
    if mode == "inplace":
        flat_add.add_in_place(np.zeros(2), 0.0)
        frame, _ = harness.time_python(lambda: flat_add.add_in_place(a, CONSTANT), repetitions, warmup)
        out = a
    else:
        flat_add.add_immutable(np.zeros(2), np.zeros(2), 0.0)
        b = np.full(n, -1.0)
        frame, _ = harness.time_python(lambda: flat_add.add_immutable(a, b, CONSTANT), repetitions, warmup)
        out = b
    return frame, _check_outputs(a, out, n, mode, warmup + repetitions, "numba")


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


def _measure_pass(run: dict[str, Any], params: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One timed pass of `run` (after its warm-up passes) on freshly made arrays:
    the interleaving loop (throughput.experiment) calls this once per repetition."""
    n, warmup, threads = params["n_values"], params["warmup"], run["threads"]
    if run["kernel"]:
        args = {"n": n, "threads": threads, "reps": 1, "warmup": warmup}
        if run["method"] == "C++":
            args.update(mode=run["mode"], constant=int(CONSTANT))
        result = harness.run_kernel(run["kernel"], args)
        frame = result.timings
        checksum = result.validation["checksum"]
        if run["method"] == "C++":
            expected = expected_checksum(n, run["mode"], warmup + 1)
            if checksum != expected:
                raise AssertionError(f"{run['kernel']} {run['mode']}: checksum {checksum} != {expected}")
        frame["checksum"] = checksum
        build_info = result.build_info
    else:
        if run["method"] == "numpy":
            frame, checksum = _numpy_method(run["mode"], n, 1, warmup)
        else:
            frame, checksum = _numba_method(run["mode"], n, threads, 1, warmup)
        frame = frame.assign(kernel=run["method"], opt="n/a", mode=run["mode"], n=n, threads=threads,
                             bytes_moved=2 * 8 * n, checksum=checksum)
        build_info = None
    frame["method"] = run["method"]
    return frame, provenance.capture(params, cache_state="n/a (in-memory)", build_info=build_info)


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


def measure(params: dict[str, Any], raw_dir: str | Path, noise_settings: noise.Settings | None = None,
            progress: bool = True) -> pd.DataFrame:
    """Run (or reuse, when stored with the same parameters and binaries on this
    machine) every run of `plan`, interleaved within each group of `groups`."""
    def key_of(run: dict[str, Any]) -> dict[str, Any]:
        key = {**params, **run}
        if run["kernel"]:
            key["binary_sha256"] = sha256(harness.kernel_path(run["kernel"]))
        return key

    frame = experiment.measure_interleaved(
        groups(params), raw_dir, key_of, lambda run, _round: _measure_pass(run, params), params["repetitions"],
        noise_settings or noise.Settings(), series=["mode"], desc="memory bandwidth", progress=progress)
    return with_rates(frame)


def with_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Add 10^9 values/s, GB/s as counted by STREAM, and GB/s of real bus traffic."""
    frame = frame.copy()
    frame["ghz"] = frame["n"] / frame["wall_s"] / 1e9
    frame["gb_s"] = frame["bytes_moved"] / frame["wall_s"] / 1e9
    frame["bus_gb_s"] = frame["n"] * frame["mode"].map(BUS_BYTES_PER_VALUE) / frame["wall_s"] / 1e9
    return frame


def check_agreement(frame: pd.DataFrame) -> None:
    """All add-a-constant methods of one mode must give the same checksum for the same passes."""
    adds = frame[frame["method"] != "STREAM"]
    for mode, group in adds.groupby("mode"):
        if group["checksum"].nunique() != 1:
            raise AssertionError(f"methods disagree for {mode}: {group.groupby('method')['checksum'].unique()}")


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median (and min, max) rates per method, mode, opt and thread count, warm-up excluded."""
    measured = frame[~frame["warmup"]]
    return (measured.groupby(["method", "mode", "opt", "threads"], sort=False)
            .agg(ghz=("ghz", "median"), ghz_min=("ghz", "min"), ghz_max=("ghz", "max"),
                 gb_s=("gb_s", "median"), bus_gb_s=("bus_gb_s", "median"),
                 wall_s=("wall_s", "median"), cpu_s=("cpu_s", "median"), passes=("wall_s", "count"),
                 cv=("cv", "max"), noisy=("noisy", "any"), others_cores=("others_cores", "max"))
            .reset_index())


def stream_at(table: pd.DataFrame, op: str, threads: int) -> pd.Series:
    row = table[(table["method"] == "STREAM") & (table["mode"] == op) & (table["threads"] == threads)]
    if len(row) != 1:
        raise KeyError(f"no STREAM {op} result at {threads} threads")
    return row.iloc[0]


def cache_note(n: int) -> str:
    """Whether one array of n doubles is large enough (4x the last-level cache)
    for the rates to be memory rates rather than partly cache rates."""
    cache = provenance.last_level_cache_bytes()
    if cache is None:
        return "the last-level cache size is unknown on this host"
    ratio = 8 * n / cache
    verdict = "well beyond" if ratio >= 4 else "NOT well beyond (rates are partly cache rates)"
    return f"one array is {ratio:.1f} times the {cache / 2**20:.0f} MiB last-level cache: {verdict}"


def opt_table(table: pd.DataFrame) -> pd.DataFrame:
    """Seed's single-thread seconds for 10^10 doubles beside ours (extrapolated from our median rate)."""
    single = table[(table["method"] == "C++") & (table["threads"] == 1)]
    rows = []
    for mode in MODES:
        for opt in sorted(single["opt"].unique()):
            ours = single[(single["mode"] == mode) & (single["opt"] == opt)].iloc[0]
            rows.append({"mode": mode, "opt": opt, "seed_s": SEED_SECONDS.loc[mode, opt],
                         "ours_s": SEED_N / (ours["ghz"] * 1e9), "ours_ghz": ours["ghz"],
                         "noisy": ours["noisy"], "cv": ours["cv"],
                         "speedup": SEED_SECONDS.loc[mode, opt] / (SEED_N / (ours["ghz"] * 1e9))})
    return pd.DataFrame(rows)


def ratio_table(table: pd.DataFrame) -> pd.DataFrame:
    """Each add-a-constant method against STREAM scale at the same thread count."""
    adds = table[table["method"] != "STREAM"].copy()
    stream = table[(table["method"] == "STREAM") & (table["mode"] == "scale")].set_index("threads")
    adds["stream_scale_gb_s"] = adds["threads"].map(stream["gb_s"])
    adds["stream_scale_bus_gb_s"] = adds["threads"].map(stream["bus_gb_s"])
    adds["ratio"] = adds["gb_s"] / adds["stream_scale_gb_s"]
    # A ratio is as noisy as either of its sides.
    adds["noisy"] = adds["noisy"] | adds["threads"].map(stream["noisy"]).astype(bool)
    adds["bus_ratio"] = adds["bus_gb_s"] / adds["stream_scale_bus_gb_s"]
    return adds


def targets(table: pd.DataFrame, max_threads: int) -> dict[str, Any]:
    """The issue's benchmark targets, measured: single-thread -O3 in place vs STREAM scale
    (at least 90%), and the all-cores plateau vs all-cores STREAM scale (within 10%).
    The immutable kernel, which has STREAM scale's access pattern (read one array,
    store to another), is compared too: it tells a real shortfall from one that
    only reflects the in-place kernel's cheaper access pattern."""
    def o3(mode: str, threads: int) -> pd.Series:
        return table[(table["method"] == "C++") & (table["mode"] == mode) & (table["opt"] == "O3")
                     & (table["threads"] == threads)].iloc[0]
    single, plateau = o3("inplace", 1), o3("inplace", max_threads)
    s1, sn = stream_at(table, "scale", 1), stream_at(table, "scale", max_threads)
    single_ratio = single["gb_s"] / s1["gb_s"]
    plateau_ratio = plateau["gb_s"] / sn["gb_s"]
    immutable_ratio = o3("immutable", max_threads)["gb_s"] / sn["gb_s"]
    return {
        "single_ratio": single_ratio, "single_met": single_ratio >= SINGLE_TARGET,
        "plateau_ratio": plateau_ratio, "plateau_met": abs(plateau_ratio - 1) <= PLATEAU_BAND,
        "plateau_bus_ratio": plateau["bus_gb_s"] / sn["bus_gb_s"],
        "plateau_immutable_ratio": immutable_ratio,
        "single_gb_s": single["gb_s"], "plateau_gb_s": plateau["gb_s"],
        "stream_single_gb_s": s1["gb_s"], "stream_all_gb_s": sn["gb_s"],
        "plateau_ghz": plateau["ghz"],
    }


def plateau_verdict(goal: dict[str, Any]) -> str:
    """One sentence for the paper on the plateau target, from the measured ratios."""
    band = f"{PLATEAU_BAND:.0%}"
    if goal["plateau_met"]:
        return f"is within {band} of it"
    immutable = goal["plateau_immutable_ratio"]
    same_pattern = "within" if abs(immutable - 1) <= PLATEAU_BAND else "outside"
    return (f"is outside the {band} band. STREAM has no in-place kernel: each of its four kernels "
            f"stores to an array it does not read, while the in-place update writes back lines it has "
            f"just read (bus-traffic ratio {goal['plateau_bus_ratio']:.2f}). The immutable kernel, "
            f"which has STREAM scale's access pattern, reaches {immutable:.2f} of it, {same_pattern} the band")
