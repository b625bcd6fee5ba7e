"""GPU memory bandwidth, explode and combine (seed 000, Table 2).

Table 2 of seed 000 measured, on six GPUs of 2017, how fast values move
between host memory ("DRAM") and a GPU, through managed ("unified") memory,
within the GPU, and how fast a constant is added to them in place and into a
new array on global and on managed memory. We measure the same cases, each
for float32 and float64, three ways where a GPU exists:

- "CUDA C++": kernels/gpu_bandwidth/gpu_bandwidth.cu (nvcc, sm_80 and sm_90),
  timed with CUDA events;
- "CuPy": the same cases with CuPy arrays and CuPy's own operations;
- "numba.cuda": the add, explode and combine kernels of this module (the ones
  the tests run in numba's CUDA simulator) launched on CuPy arrays.

Beside them, on the CPU: the table's first row ("DRAM to CPU", a copy that
does not involve the GPU: memcpy in kernels/gpu_bandwidth/host_copy.cpp), and
the jagged "explode" (each event's value broadcast to its particles) and
"combine" (every pair of particles within an event) operations with numba and
awkward, beside a flat add-a-constant on the same particles, to test the
seed's claim that explode and combine suit a sequential processor better than
a GPU. Where a host has more than one NUMA node, host_copy is run under
numactl with local and with remote memory, the nearest stand-in for the
seed's KNL MCDRAM result.

Nothing here is filled in where it cannot be measured: without a GPU every GPU
row is "not measured: no GPU on this host" (the reason as detected), and with
one NUMA node the NUMA row is "not measured: one NUMA node".

Units: "GHz" as the seed uses it is 10^9 values per second (the value type is
always said); GB/s is 10^9 bytes per second, counting the bytes a case reads
and writes in memory (copies and kernels: read + write, no write-allocate
traffic) or, for transfers between host and device, the bytes that cross the
link. "Fraction of nominal" is GB/s over the device's nominal memory bandwidth
(2 x memory clock x bus width, read from the device).
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import numba
import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .. import harness, provenance, seeds
from ..config import MEMORY_SHARE, usable_cores
from ..results import measure_once
from . import SPECS

MIB = 2**20
CONSTANT = 1.0
INIT_PERIOD = 1000  # values are i % 1000: small integers, exact in float32 and float64
DTYPES = ("float32", "float64")
(CUDA_KERNEL,) = SPECS["gpu_bandwidth"].cuda_kernels
HOST_KERNEL = "host_copy"
EXIT_NO_DEVICE = 4  # gpu_bandwidth_cuda's exit code where there is no usable GPU
NO_GPU = "no GPU on this host"
NOT_MEASURED = "not measured"

# ---- seed 000, Table 2: the figures live in throughput.seeds (with where each comes from) ------
# Rates in GHz: 10^9 values per second; the value type is not certain (see seeds.GPU_TABLE2).
SEED_GPUS = seeds.GPU_NAMES
SEED_GPU_SHORT = seeds.GPU_SHORT
SEED_TABLE2 = seeds.GPU_TABLE2
SEED_ARRAY_MIB = seeds.GPU_ARRAY_MIB  # the arrays of the seed's benchmark code, "1 GB" there
SEED_CPU_SINGLE_GHZ = seeds.MBW_SINGLE_GHZ  # single-thread CPU, seed's text
TARGET_FRACTION = 0.85  # within-device copy and in-place kernel vs nominal memory bandwidth


@dataclass(frozen=True)
class Case:
    """One row of Table 2: how we run it and which seed row it stands beside."""

    name: str
    label: str
    seed_row: str | None  # None: the seed did not separate this case (pinned memory)
    on_gpu: bool = True


CASES = (
    Case("host_copy", "DRAM to CPU (memcpy, one thread)", "DRAM to CPU", on_gpu=False),
    Case("h2d_pageable", "DRAM to GPU, pageable", "DRAM to GPU"),
    Case("h2d_pinned", "DRAM to GPU, pinned", None),
    Case("d2h_pageable", "GPU to DRAM, pageable", "GPU to DRAM"),
    Case("d2h_pinned", "GPU to DRAM, pinned", None),
    Case("managed_cpu_write", "CPU write unified", "CPU write unified"),
    Case("managed_cpu_read", "CPU read unified", "CPU read unified"),
    Case("d2d_copy", "within GPU", "within GPU"),
    Case("inplace_global", "in-place global", "in-place global"),
    Case("immutable_global", "immutable global", "immutable global"),
    Case("inplace_managed", "in-place unified", "in-place unified"),
    Case("immutable_managed", "immutable unified", "immutable unified"),
)
CASE_BY_NAME = {c.name: c for c in CASES}
GPU_CASES = tuple(c.name for c in CASES if c.on_gpu)
JAGGED_OPS = ("flat_inplace", "flat_immutable", "explode", "combine")
JAGGED_LABELS = {"flat_inplace": "flat add, in place", "flat_immutable": "flat add, immutable",
                 "explode": "explode", "combine": "combine"}

# Method ids of the configuration and the names the tables use.
GPU_METHODS = {"cuda": "CUDA C++", "cupy": "CuPy", "numba_cuda": "numba.cuda"}
CPU_METHODS = {"numba": "numba", "awkward": "awkward"}
# What each GPU method measures: CuPy has no explode/combine of its own (its
# jagged rows are numba.cuda's kernels on CuPy arrays).
GPU_METHOD_CASES = {"cuda": GPU_CASES, "cupy": GPU_CASES, "numba_cuda": ()}
GPU_METHOD_JAGGED = {"cuda": JAGGED_OPS, "cupy": (), "numba_cuda": JAGGED_OPS}
CPU_METHOD_JAGGED = {"numba": JAGGED_OPS, "awkward": ("flat_immutable", "explode", "combine")}


# ---- configuration ----------------------------------------------------------------------------

def max_threads(params: dict[str, Any]) -> int:
    """Threads of the parallel CPU runs: max_threads, or every usable core where it is null."""
    return params["max_threads"] or usable_cores()


def values_per_array(mib: int, dtype: str) -> int:
    return mib * MIB // np.dtype(dtype).itemsize


def expected_pairs_per_event(mean: int) -> float:
    """Mean of n(n-1)/2 for n uniform in 0..2*mean."""
    return mean * (2 * mean - 1) / 3


def jagged_bytes(events: int, mean: int) -> int:
    """Host memory of one jagged run, float64, with awkward's temporaries (an estimate)."""
    particles, pairs = events * mean, events * expected_pairs_per_event(mean)
    return int(8 * (6 * pairs + 4 * particles + 3 * events))


def check_config(section: dict[str, Any], available_memory: int, problems: list[str]) -> None:
    """Sizes against this machine's memory and threads against its cores (see throughput.config)."""
    budget = int(MEMORY_SHARE * available_memory)
    prefix = "config key 'gpu_bandwidth."
    need = 2 * section["cpu_array_mib"] * MIB
    if need > budget:
        problems.append(f"{prefix}cpu_array_mib' = {section['cpu_array_mib']}: the host copy needs two arrays, "
                        f"{need / 1e9:.1f} GB, but only {budget / 1e9:.1f} GB of memory may be used "
                        f"({MEMORY_SHARE:.0%} of {available_memory / 1e9:.1f} GB available)")
    need = jagged_bytes(section["events"], section["mean_particles"])
    if need > budget:
        problems.append(f"{prefix}events' = {section['events']}: explode/combine on the CPU need about "
                        f"{need / 1e9:.1f} GB with mean_particles = {section['mean_particles']}, but only "
                        f"{budget / 1e9:.1f} GB of memory may be used; lower it")
    if driver_present():
        # Host buffers of the GPU cases: source, pinned copy and read-back.
        need = 3 * section["gpu_array_mib"] * MIB
        if need > budget:
            problems.append(f"{prefix}gpu_array_mib' = {section['gpu_array_mib']}: the GPU cases need "
                            f"{need / 1e9:.1f} GB of host memory, only {budget / 1e9:.1f} GB may be used")
    cores = usable_cores()
    if section["max_threads"] is not None and section["max_threads"] > cores:
        problems.append(f"{prefix}max_threads' = {section['max_threads']}: more than the {cores} usable "
                        f"cores of this machine")


# ---- is there a GPU? --------------------------------------------------------------------------

def driver_present() -> bool:
    """Whether the NVIDIA driver library can be loaded (no driver: no GPU to use)."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@dataclass
class GpuStatus:
    """What this host's GPU is, and for each GPU method why it cannot run (None: it can)."""

    device: dict[str, Any] | None
    reasons: dict[str, str | None] = field(default_factory=dict)

    @property
    def available(self) -> bool:
        return any(reason is None for reason in self.reasons.values())

    def reason(self, method: str) -> str | None:
        return self.reasons.get(method, "not configured")

    def summary(self) -> str:
        if self.device:
            return (f"{self.device['name']} (compute capability {self.device['compute_capability']}, "
                    f"nominal {self.device['nominal_gb_s']:.0f} GB/s)")
        distinct = sorted({r for r in self.reasons.values() if r})
        return "; ".join(distinct) if distinct else NO_GPU


def query_cuda_device() -> tuple[dict[str, Any] | None, str | None]:
    """Ask the CUDA program what the device is: (device record, None), or
    (None, why not) where it is not built or there is no usable GPU."""
    path = harness.kernels_dir() / CUDA_KERNEL
    if not path.is_file():
        return None, f"CUDA kernels not built ({path} is missing: no nvcc where the kernels were built)"
    proc = subprocess.run([str(path), "--case", "device"], capture_output=True, text=True, timeout=120)
    if proc.returncode == EXIT_NO_DEVICE:
        message = proc.stderr.strip().split("no usable CUDA device: ", 1)[-1]
        return None, NO_GPU if message.startswith(NO_GPU) else message
    if proc.returncode != 0:
        raise harness.KernelError(f"kernel {CUDA_KERNEL} --case device exited with {proc.returncode}: "
                                  f"{proc.stderr.strip()}")
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return next(r for r in records if r.get("record") == "device"), None


def _cupy_reason() -> str | None:
    try:
        import cupy
    except ImportError as error:
        return f"CuPy is not installed ({error})"
    if cupy.is_available():
        return None
    if not driver_present():
        return NO_GPU
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # noqa: BLE001 (CuPy's CUDARuntimeError names the cause)
        return f"CuPy finds no usable GPU: {error}"
    return NO_GPU


def _numba_cuda_reason() -> str | None:
    try:
        from numba import cuda
    except ImportError as error:
        return f"numba.cuda is not installed ({error})"
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "numba's CUDA simulator is enabled (NUMBA_ENABLE_CUDASIM=1): no real GPU is used"
    if cuda.is_available():
        return None
    return NO_GPU if not driver_present() else "numba.cuda finds no usable GPU"


def detect_gpu(gpu_methods: list[str]) -> GpuStatus:
    """Which GPU methods can run here, and on which device."""
    device, cuda_reason = query_cuda_device()
    reasons: dict[str, str | None] = {}
    for method in gpu_methods:
        if method == "cuda":
            reasons[method] = cuda_reason
        elif method == "cupy":
            reasons[method] = _cupy_reason()
        elif method == "numba_cuda":
            cupy_reason = _cupy_reason()  # its arrays are CuPy's
            reasons[method] = _numba_cuda_reason() or cupy_reason
        else:
            raise ValueError(f"unknown GPU method {method!r} (known: {', '.join(GPU_METHODS)})")
    if device is None and "cupy" in reasons and reasons["cupy"] is None:
        device = cupy_device()
    return GpuStatus(device=device, reasons=reasons)


def cupy_device() -> dict[str, Any]:
    """The device record, as gpu_bandwidth_cuda --case device gives it, from CuPy."""
    import cupy

    runtime = cupy.cuda.runtime
    dev = cupy.cuda.Device().id
    # cudaDevAttrMemoryClockRate (kHz) and cudaDevAttrGlobalMemoryBusWidth (bits), driver_types.h
    clock, bus = runtime.deviceGetAttribute(36, dev), runtime.deviceGetAttribute(37, dev)
    props = runtime.getDeviceProperties(dev)
    free, total = runtime.memGetInfo()
    name = props["name"]
    return {"name": name.decode() if isinstance(name, bytes) else str(name),
            "compute_capability": f"{props['major']}.{props['minor']}",
            "multiprocessors": props["multiProcessorCount"], "memory_clock_khz": clock, "bus_width_bits": bus,
            "nominal_gb_s": nominal_gb_s(clock, bus), "l2_bytes": props["l2CacheSize"], "total_bytes": total,
            "free_bytes": free, "driver_cuda": str(runtime.driverGetVersion()),
            "runtime_cuda": str(runtime.runtimeGetVersion())}


def nominal_gb_s(memory_clock_khz: float, bus_width_bits: float) -> float:
    """Nominal memory bandwidth: two transfers per memory clock (DDR/HBM) over the bus width."""
    return 2 * memory_clock_khz * 1e3 * bus_width_bits / 8 / 1e9


def check_device_fit(params: dict[str, Any], status: GpuStatus) -> None:
    """Stop before measuring if the GPU cases do not fit the device's free memory."""
    from ..config import ConfigError

    if not status.device:
        return
    free = status.device["free_bytes"]
    problems = []
    need = 2 * params["gpu_array_mib"] * MIB  # two arrays alive (copy, immutable)
    if need > 0.9 * free:
        problems.append(f"config key 'gpu_bandwidth.gpu_array_mib' = {params['gpu_array_mib']}: two arrays need "
                        f"{need / 1e9:.1f} GB, the GPU has {free / 1e9:.1f} GB free")
    events, mean = params["gpu_events"], params["mean_particles"]
    need = 8 * (events * expected_pairs_per_event(mean) + 2 * events * mean + 4 * events)
    if need > 0.9 * free:
        problems.append(f"config key 'gpu_bandwidth.gpu_events' = {events}: combine needs about {need / 1e9:.1f} GB "
                        f"on the GPU, which has {free / 1e9:.1f} GB free")
    if problems:
        raise ConfigError(problems)


def l2_note(params: dict[str, Any], status: GpuStatus) -> str:
    """Whether one GPU array is well beyond the device's L2 cache (or why that is unknown)."""
    if not status.device:
        return f"the GPU's L2 cache is unknown here ({status.summary()})"
    l2 = status.device["l2_bytes"]
    ratio = params["gpu_array_mib"] * MIB / l2
    verdict = "well beyond" if ratio >= 4 else "NOT well beyond (rates are partly cache rates)"
    return f"one array is {ratio:.0f} times the {l2 / MIB:.0f} MiB L2 cache of the GPU: {verdict}"


# ---- jagged data: the same events for every method ------------------------------------------

def _splitmix64(x: np.ndarray) -> np.ndarray:
    """kernels/gpu_bandwidth/jagged.hpp's splitmix64, in uint64 arithmetic (wraps like C++)."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def jagged_counts(events: int, mean: int) -> np.ndarray:
    """Particles per event: splitmix64(e) % (2*mean + 1), empty events included."""
    return (_splitmix64(np.arange(events, dtype=np.uint64)) % np.uint64(2 * mean + 1)).astype(np.int64)


@dataclass
class Jagged:
    """Offsets + content: event e owns particles offsets[e]..offsets[e+1]."""

    offsets: np.ndarray        # int64, events + 1
    event_values: np.ndarray   # e % 1000
    values: np.ndarray         # particle j: j % 1000
    pair_offsets: np.ndarray   # int64, events + 1: where each event's pairs start

    @property
    def events(self) -> int:
        return self.offsets.size - 1

    @property
    def particles(self) -> int:
        return int(self.offsets[-1])

    @property
    def pairs(self) -> int:
        return int(self.pair_offsets[-1])


def make_jagged(events: int, mean: int, dtype: str) -> Jagged:
    counts = jagged_counts(events, mean)
    return from_counts(counts, dtype)


def from_counts(counts: np.ndarray, dtype: str, values: np.ndarray | None = None,
                event_values: np.ndarray | None = None) -> Jagged:
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    pair_offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts * (counts - 1) // 2, out=pair_offsets[1:])
    particles = int(offsets[-1])
    if values is None:
        values = initial(particles, dtype)
    if event_values is None:
        event_values = initial(counts.size, dtype)
    return Jagged(offsets, np.asarray(event_values, dtype=dtype), np.asarray(values, dtype=dtype), pair_offsets)


def reference(op: str, data: Jagged, passes: int) -> np.ndarray:
    """Expected output of `op`, with numpy alone (independent of numba, awkward and CUDA)."""
    dtype = data.values.dtype
    if op == "flat_inplace":
        return data.values + dtype.type(passes * CONSTANT)
    if op == "flat_immutable":
        return data.values + dtype.type(CONSTANT)
    counts = np.diff(data.offsets)
    if op == "explode":
        return np.repeat(data.event_values, counts)
    if op == "combine":
        out = np.empty(data.pairs, dtype=dtype)
        for n in np.unique(counts[counts >= 2]):
            events = np.nonzero(counts == n)[0]
            i, j = np.triu_indices(int(n), 1)  # row by row: (0,1), (0,2), ..., (1,2), ...
            first = data.offsets[events][:, None]
            where = data.pair_offsets[events][:, None] + np.arange(i.size)
            out[where] = data.values[first + i] + data.values[first + j]
        return out
    raise ValueError(f"unknown jagged operation {op!r} (known: {', '.join(JAGGED_OPS)})")


def exact_checksum(op: str, data: Jagged, passes: int) -> float:
    """Sum of the output of `op`, from closed forms in integers."""
    counts = np.diff(data.offsets)
    values = data.values.astype(np.int64)
    if op == "flat_inplace":
        return float(int(values.sum()) + data.particles * passes * int(CONSTANT))
    if op == "flat_immutable":
        return float(int(values.sum()) + data.particles * int(CONSTANT))
    if op == "explode":
        return float(int((counts * data.event_values.astype(np.int64)).sum()))
    if op == "combine":
        running = np.concatenate([[0], np.cumsum(values)])
        per_event = running[data.offsets[1:]] - running[data.offsets[:-1]]
        return float(int(((counts - 1).clip(min=0) * per_event).sum()))
    raise ValueError(f"unknown jagged operation {op!r}")


def validate_output(got: np.ndarray, expected: np.ndarray, label: str) -> dict[str, Any]:
    """Exact comparison; raises AssertionError (fails the job) on any wrong value."""
    got = np.asarray(got)
    if got.shape != expected.shape:
        raise AssertionError(f"{label}: {got.size} values, expected {expected.size}")
    wrong = int(np.count_nonzero(got != expected))
    checksum = float(got.sum(dtype=np.float64))
    if wrong:
        raise AssertionError(f"{label}: validation failed: {wrong} of {got.size} values wrong")
    return {"ok": True, "wrong_values": wrong, "checksum": checksum}


# ---- CPU: numba and awkward ------------------------------------------------------------------

@numba.njit(parallel=True, cache=True)
def _add_inplace_cpu(a, c):
    for i in numba.prange(a.size):
        a[i] += c


@numba.njit(parallel=True, cache=True)
def _add_immutable_cpu(a, b, c):
    for i in numba.prange(a.size):
        b[i] = a[i] + c


@numba.njit(parallel=True, cache=True)
def explode_cpu(offsets, event_values, out):
    """out[j] = event_values[e] for every particle j of event e (events in parallel)."""
    for e in numba.prange(event_values.size):
        value = event_values[e]
        for j in range(offsets[e], offsets[e + 1]):
            out[j] = value


@numba.njit(cache=True)
def pair_offsets_cpu(offsets, pair_offsets):
    """Where each event's pairs start: a sequential prefix sum of n(n-1)/2."""
    pair_offsets[0] = 0
    for e in range(offsets.size - 1):
        n = offsets[e + 1] - offsets[e]
        pair_offsets[e + 1] = pair_offsets[e] + n * (n - 1) // 2


@numba.njit(parallel=True, cache=True)
def _combine_fill_cpu(offsets, pair_offsets, values, out):
    for e in numba.prange(offsets.size - 1):
        k = pair_offsets[e]
        end = offsets[e + 1]
        for i in range(offsets[e], end):
            for j in range(i + 1, end):
                out[k] = values[i] + values[j]
                k += 1


def combine_cpu(offsets, values, pair_offsets, out):
    """Every pair i < j within an event, row by row: out = values[i] + values[j]."""
    pair_offsets_cpu(offsets, pair_offsets)
    _combine_fill_cpu(offsets, pair_offsets, values, out)


def _awkward_array(data: Jagged):
    import awkward as ak

    layout = ak.contents.ListOffsetArray(ak.index.Index64(data.offsets), ak.contents.NumpyArray(data.values))
    return ak.Array(layout)


def awkward_op(op: str, jagged_array, event_values: np.ndarray, constant) -> np.ndarray:
    """The same operations with awkward's own functions (immutable only)."""
    import awkward as ak

    if op == "flat_immutable":
        return ak.to_numpy(ak.flatten(jagged_array + constant))
    if op == "explode":
        return ak.to_numpy(ak.flatten(ak.broadcast_arrays(event_values, jagged_array)[0]))
    if op == "combine":
        pairs = ak.combinations(jagged_array, 2)
        return ak.to_numpy(ak.flatten(pairs["0"] + pairs["1"]))
    raise ValueError(f"awkward has no {op!r} here (only {', '.join(CPU_METHOD_JAGGED['awkward'])})")


def _timed(function: Callable[[], Any]) -> dict[str, float]:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    function()
    cpu1, wall1 = time.process_time(), time.perf_counter()
    return {"wall_s": wall1 - wall0, "cpu_s": cpu1 - cpu0}


def _rows(times: list[dict[str, float]], warmup: int, **labels: Any) -> pd.DataFrame:
    return pd.DataFrame([{**labels, "rep": i - warmup, "warmup": i < warmup, **t} for i, t in enumerate(times)])


def jagged_cpu(method: str, op: str, data: Jagged, threads: int, repetitions: int,
               warmup: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Time one jagged operation on the CPU; validate its output exactly."""
    dtype = data.values.dtype
    c = dtype.type(CONSTANT)
    passes = warmup + repetitions
    if method == "numba":
        numba.set_num_threads(threads)
        tiny = from_counts(np.array([2, 0, 3]), dtype.name)  # compile outside the timed passes
        if op == "flat_inplace":
            _add_inplace_cpu(tiny.values.copy(), c)
            a = data.values.copy()
            run = functools.partial(_add_inplace_cpu, a, c)
            output = lambda: a  # noqa: E731
        elif op == "flat_immutable":
            _add_immutable_cpu(tiny.values, tiny.values.copy(), c)
            b = np.full(data.particles, -1, dtype)
            run = functools.partial(_add_immutable_cpu, data.values, b, c)
            output = lambda: b  # noqa: E731
        elif op == "explode":
            explode_cpu(tiny.offsets, tiny.event_values, np.empty(tiny.particles, dtype))
            out = np.full(data.particles, -1, dtype)
            run = functools.partial(explode_cpu, data.offsets, data.event_values, out)
            output = lambda: out  # noqa: E731
        elif op == "combine":
            combine_cpu(tiny.offsets, tiny.values, np.empty_like(tiny.pair_offsets), np.empty(tiny.pairs, dtype))
            out = np.full(data.pairs, -1, dtype)
            pair_offsets = np.empty_like(data.pair_offsets)
            run = functools.partial(combine_cpu, data.offsets, data.values, pair_offsets, out)
            output = lambda: out  # noqa: E731
        else:
            raise ValueError(f"unknown jagged operation {op!r}")
        times = [_timed(run) for _ in range(passes)]
        got = output()
    elif method == "awkward":
        threads = 1
        array = _awkward_array(data)
        results = []
        times = [_timed(lambda: results.append(awkward_op(op, array, data.event_values, c))) for _ in range(passes)]
        got = results[-1]
    else:
        raise ValueError(f"unknown CPU method {method!r} (known: {', '.join(CPU_METHODS)})")
    expected = reference(op, data, passes)
    validation = validate_output(got, expected, f"{method} {op} {dtype.name}")
    if validation["checksum"] != exact_checksum(op, data, passes):
        raise AssertionError(f"{method} {op} {dtype.name}: checksum {validation['checksum']} != "
                             f"{exact_checksum(op, data, passes)}")
    n = data.pairs if op == "combine" else data.particles
    frame = _rows(times, warmup, case=op, dtype=dtype.name, n=n, threads=threads,
                  bytes_moved=jagged_bytes_moved(op, data), clock="steady_clock")
    return frame, validation


def jagged_bytes_moved(op: str, data: Jagged) -> int:
    """Bytes an operation reads and writes (the same counting for every method)."""
    size = data.values.dtype.itemsize
    if op in ("flat_inplace", "flat_immutable"):
        return 2 * data.particles * size
    if op == "explode":
        return data.particles * size + data.events * (size + 8)
    return 3 * data.pairs * size + 4 * (data.events + 1) * 8


# ---- GPU: numba.cuda kernels (tested in numba's CUDA simulator) ---------------------------

BLOCK = 256


@functools.cache
def cuda_kernels() -> SimpleNamespace:
    """The GPU kernels of the numba.cuda path, compiled on first use.

    Defined here rather than at import so that importing this module never
    imports numba.cuda: the tests set NUMBA_ENABLE_CUDASIM=1 in a fresh
    process and run these very kernels in numba's CUDA simulator. The logic is
    the same as kernels/gpu_bandwidth/gpu_bandwidth.cu's. `cuda` is bound as a
    module global because the simulator swaps it in the kernels' globals.
    """
    global cuda
    from numba import cuda

    @cuda.jit
    def add_inplace(a, c):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += c

    @cuda.jit
    def add_immutable(a, b, c):
        i = cuda.grid(1)
        if i < a.size:
            b[i] = a[i] + c

    @cuda.jit(device=True)
    def owner(offsets, events, j):
        # Largest e in [0, events) with offsets[e] <= j (empty events are skipped over).
        lo = 0
        hi = events
        while hi - lo > 1:
            mid = lo + (hi - lo) // 2
            if offsets[mid] <= j:
                lo = mid
            else:
                hi = mid
        return lo

    @cuda.jit
    def explode(offsets, event_values, out):
        j = cuda.grid(1)
        if j < out.size:
            out[j] = event_values[owner(offsets, event_values.size, j)]

    @cuda.jit
    def pair_counts(offsets, counts):
        e = cuda.grid(1)
        if e == 0:
            counts[0] = 0
        if e < offsets.size - 1:
            n = offsets[e + 1] - offsets[e]
            counts[e + 1] = n * (n - 1) // 2

    @cuda.jit
    def combine(offsets, pair_offsets, values, out):
        k = cuda.grid(1)
        if k < out.size:
            e = owner(pair_offsets, offsets.size - 1, k)
            n = offsets[e + 1] - offsets[e]
            r = k - pair_offsets[e]
            i = 0
            while r >= n - 1 - i:
                r -= n - 1 - i
                i += 1
            first = offsets[e]
            out[k] = values[first + i] + values[first + i + 1 + r]

    return SimpleNamespace(add_inplace=add_inplace, add_immutable=add_immutable, explode=explode,
                           pair_counts=pair_counts, combine=combine)


def launch(kernel, n: int, *args) -> None:
    """One thread per item, BLOCK threads a block."""
    if n > 0:
        kernel[(n + BLOCK - 1) // BLOCK, BLOCK](*args)


def combine_gpu(kernels, backend, offsets, pair_counts, pair_offsets, values, out) -> None:
    """Combine on the GPU: pairs per event, their prefix sum (the log2(N) passes the
    seed mentions, here CuPy's scan), then one thread per pair."""
    events = offsets.size - 1
    launch(kernels.pair_counts, events + 1, backend.kernel_arg(offsets), backend.kernel_arg(pair_counts))
    backend.xp.cumsum(pair_counts, out=pair_offsets)
    launch(kernels.combine, out.size, backend.kernel_arg(offsets), backend.kernel_arg(pair_offsets),
           backend.kernel_arg(values), backend.kernel_arg(out))


# ---- GPU backends: CuPy on a real device, numpy for the tests -------------------------

class NumpyBackend:
    """Host arrays standing in for device, pinned and managed memory, timed by the
    steady clock: runs the GPU paths' logic without a GPU (tests, simulator)."""

    name = "numpy (stand-in)"
    xp = np

    def device_array(self, host: np.ndarray) -> np.ndarray:
        return host.copy()

    def device_empty(self, n: int, dtype) -> np.ndarray:
        return np.empty(n, dtype)

    def pinned_empty(self, n: int, dtype) -> np.ndarray:
        return np.empty(n, dtype)

    def managed_empty(self, n: int, dtype) -> tuple[np.ndarray, np.ndarray]:
        a = np.empty(n, dtype)
        return a, a

    def to_device(self, device: np.ndarray, host: np.ndarray) -> None:
        np.copyto(device, host)

    def to_host(self, host: np.ndarray, device: np.ndarray) -> None:
        np.copyto(host, device)

    def asnumpy(self, a) -> np.ndarray:
        return np.asarray(a).copy()

    def kernel_arg(self, a):
        return a

    def synchronize(self) -> None:
        pass

    def time_device(self, op: Callable[[], Any]) -> dict[str, float]:
        return {**_timed(op), "event_s": float("nan"), "clock": "steady_clock"}

    def time_host(self, op: Callable[[], Any]) -> dict[str, float]:
        return {**_timed(op), "event_s": float("nan"), "clock": "steady_clock"}


class CupyBackend(NumpyBackend):
    """CuPy on the current device; device work timed with CUDA events on the null stream."""

    name = "CuPy"

    def __init__(self):
        import cupy
        import cupyx

        self.cp, self.cupyx, self.xp = cupy, cupyx, cupy
        self._start, self._stop = cupy.cuda.Event(), cupy.cuda.Event()

    def device_array(self, host):
        return self.cp.asarray(host)

    def device_empty(self, n, dtype):
        return self.cp.empty(n, dtype)

    def pinned_empty(self, n, dtype):
        return self.cupyx.empty_pinned(n, dtype)

    def managed_empty(self, n, dtype):
        """A CuPy array in managed memory, and a numpy view of the same memory for the CPU."""
        dtype = np.dtype(dtype)
        memory = self.cp.cuda.malloc_managed(max(1, n * dtype.itemsize))
        device = self.cp.ndarray((n,), dtype, memptr=memory)
        buffer = (ctypes.c_char * (n * dtype.itemsize)).from_address(memory.ptr)
        host = np.frombuffer(buffer, dtype=dtype, count=n)
        return device, host

    def to_device(self, device, host):
        device.set(host)

    def to_host(self, host, device):
        device.get(out=host)

    def asnumpy(self, a):
        return self.cp.asnumpy(a)

    def kernel_arg(self, a):
        from numba import cuda

        # No stream synchronisation per launch: the timing is around the launches.
        return cuda.as_cuda_array(a, sync=False) if isinstance(a, self.cp.ndarray) else a

    def synchronize(self):
        self.cp.cuda.Device().synchronize()

    def time_device(self, op):
        self.synchronize()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        self._start.record()
        op()
        self._stop.record()
        self._stop.synchronize()
        cpu1, wall1 = time.process_time(), time.perf_counter()
        event_s = self.cp.cuda.get_elapsed_time(self._start, self._stop) * 1e-3
        return {"wall_s": wall1 - wall0, "cpu_s": cpu1 - cpu0, "event_s": event_s, "clock": "cuda_event"}

    def time_host(self, op):
        self.synchronize()
        return {**_timed(op), "event_s": float("nan"), "clock": "steady_clock"}


def initial(n: int, dtype: str) -> np.ndarray:
    """i % 1000 as `dtype`, without n-sized integer temporaries."""
    return np.resize(np.arange(INIT_PERIOD, dtype=dtype), n)


def table2_python(case: str, dtype: str, n: int, repetitions: int, warmup: int,
                  backend: NumpyBackend) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One Table 2 case with array-library operations (CuPy's on a GPU); validated exactly."""
    xp, T = backend.xp, np.dtype(dtype)
    c = T.type(CONSTANT)
    passes = warmup + repetitions
    init = initial(n, dtype)
    size = n * T.itemsize
    times = []
    if case in ("h2d_pageable", "h2d_pinned"):
        source = init
        if case == "h2d_pinned":
            source = backend.pinned_empty(n, T)
            source[...] = init
        d = backend.device_empty(n, T)
        for _ in range(passes):
            d.fill(-1)
            times.append(backend.time_device(lambda: backend.to_device(d, source)))
        got, expected, moved = backend.asnumpy(d), init, size
    elif case in ("d2h_pageable", "d2h_pinned"):
        d = backend.device_array(init)
        target = np.empty(n, T) if case == "d2h_pageable" else backend.pinned_empty(n, T)
        for _ in range(passes):
            target.fill(-1)
            times.append(backend.time_device(lambda: backend.to_host(target, d)))
        got, expected, moved = np.array(target), init, size
    elif case == "managed_cpu_write":
        managed, view = backend.managed_empty(n, T)
        for _ in range(passes):
            managed.fill(-1)  # the GPU touches it last
            times.append(backend.time_host(lambda: np.copyto(view, init)))
        backend.synchronize()
        got, expected, moved = np.array(view), init, 2 * size
    elif case == "managed_cpu_read":
        managed, view = backend.managed_empty(n, T)
        d_init = backend.device_array(init)
        target = np.empty(n, T)
        for _ in range(passes):
            xp.copyto(managed, d_init)  # the GPU writes it last
            target.fill(-1)
            times.append(backend.time_host(lambda: np.copyto(target, view)))
        got, expected, moved = target, init, 2 * size
    elif case == "d2d_copy":
        a, b = backend.device_array(init), backend.device_empty(n, T)
        for _ in range(passes):
            b.fill(-1)
            times.append(backend.time_device(lambda: xp.copyto(b, a)))
        got, expected, moved = backend.asnumpy(b), init, 2 * size
    elif case == "inplace_global":
        a = backend.device_array(init)
        for _ in range(passes):
            times.append(backend.time_device(lambda: xp.add(a, c, out=a)))
        got, expected, moved = backend.asnumpy(a), init + T.type(passes * CONSTANT), 2 * size
    elif case == "immutable_global":
        a, b = backend.device_array(init), backend.device_empty(n, T)
        for _ in range(passes):
            b.fill(-1)
            times.append(backend.time_device(lambda: xp.add(a, c, out=b)))
        if not np.array_equal(backend.asnumpy(a), init):
            raise AssertionError(f"{backend.name} {case} {dtype}: the immutable input was changed")
        got, expected, moved = backend.asnumpy(b), init + c, 2 * size
    elif case == "inplace_managed":
        managed, view = backend.managed_empty(n, T)
        for _ in range(passes):
            backend.synchronize()
            np.copyto(view, init)  # the CPU writes the input: the kernel finds it in host memory
            times.append(backend.time_device(lambda: xp.add(managed, c, out=managed)))
        got, expected, moved = backend.asnumpy(managed), init + c, 2 * size
    elif case == "immutable_managed":
        a, a_view = backend.managed_empty(n, T)
        b, b_view = backend.managed_empty(n, T)
        for _ in range(passes):
            backend.synchronize()
            np.copyto(a_view, init)
            b_view.fill(-1)
            times.append(backend.time_device(lambda: xp.add(a, c, out=b)))
        got, expected, moved = backend.asnumpy(b), init + c, 2 * size
    else:
        raise ValueError(f"unknown Table 2 case {case!r} (known: {', '.join(GPU_CASES)})")
    validation = validate_output(got, expected, f"{backend.name} {case} {dtype}")
    frame = pd.DataFrame([{"case": case, "dtype": dtype, "n": n, "rep": i - warmup, "warmup": i < warmup,
                           "bytes_moved": moved, **t} for i, t in enumerate(times)])
    return frame, validation


def jagged_gpu_python(op: str, data: Jagged, repetitions: int, warmup: int, backend: NumpyBackend,
                      kernels: SimpleNamespace | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One jagged operation with the numba.cuda kernels (on CuPy arrays on a GPU; on
    numpy arrays in numba's CUDA simulator); validated exactly."""
    kernels = kernels or cuda_kernels()
    dtype = data.values.dtype
    c = dtype.type(CONSTANT)
    passes = warmup + repetitions
    arg = backend.kernel_arg
    offsets = backend.device_array(data.offsets)
    # Compile every kernel on a tiny input first, outside the timed passes.
    tiny = from_counts(np.array([2, 0, 3]), dtype.name)
    t_values, t_out = backend.device_array(tiny.values), backend.device_empty(tiny.pairs, dtype)
    launch(kernels.add_inplace, tiny.particles, arg(t_values), c)
    launch(kernels.add_immutable, tiny.particles, arg(t_values), arg(backend.device_empty(tiny.particles, dtype)), c)
    launch(kernels.explode, tiny.particles, arg(backend.device_array(tiny.offsets)),
           arg(backend.device_array(tiny.event_values)), arg(backend.device_empty(tiny.particles, dtype)))
    combine_gpu(kernels, backend, backend.device_array(tiny.offsets), backend.device_empty(tiny.events + 1, np.int64),
                backend.device_empty(tiny.events + 1, np.int64), t_values, t_out)
    backend.synchronize()

    times = []
    if op == "flat_inplace":
        a = backend.device_array(data.values)
        for _ in range(passes):
            times.append(backend.time_device(lambda: launch(kernels.add_inplace, data.particles, arg(a), c)))
        out = a
    elif op == "flat_immutable":
        a, out = backend.device_array(data.values), backend.device_empty(data.particles, dtype)
        for _ in range(passes):
            out.fill(-1)
            times.append(backend.time_device(
                lambda: launch(kernels.add_immutable, data.particles, arg(a), arg(out), c)))
    elif op == "explode":
        event_values, out = backend.device_array(data.event_values), backend.device_empty(data.particles, dtype)
        for _ in range(passes):
            out.fill(-1)
            times.append(backend.time_device(
                lambda: launch(kernels.explode, data.particles, arg(offsets), arg(event_values), arg(out))))
    elif op == "combine":
        values, out = backend.device_array(data.values), backend.device_empty(data.pairs, dtype)
        counts = backend.device_empty(data.events + 1, np.int64)
        pair_offsets = backend.device_empty(data.events + 1, np.int64)
        for _ in range(passes):
            out.fill(-1)
            times.append(backend.time_device(
                lambda: combine_gpu(kernels, backend, offsets, counts, pair_offsets, values, out)))
        if not np.array_equal(backend.asnumpy(pair_offsets), data.pair_offsets):
            raise AssertionError(f"numba.cuda combine {dtype.name}: wrong pair offsets")
    else:
        raise ValueError(f"unknown jagged operation {op!r} (known: {', '.join(JAGGED_OPS)})")
    backend.synchronize()
    validation = validate_output(backend.asnumpy(out), reference(op, data, passes), f"numba.cuda {op} {dtype.name}")
    n = data.pairs if op == "combine" else data.particles
    frame = pd.DataFrame([{"case": op, "dtype": dtype.name, "n": n, "rep": i - warmup, "warmup": i < warmup,
                           "bytes_moved": jagged_bytes_moved(op, data), **t} for i, t in enumerate(times)])
    return frame, validation


# ---- NUMA: local against remote memory ---------------------------------------------------

def numa_reason() -> str | None:
    """Why local against remote memory cannot be measured here (None: it can)."""
    if provenance.numa_nodes() < 2:
        return "one NUMA node"
    if shutil.which("numactl") is None:
        return "numactl is not installed (Debian package numactl)"
    return None


def node_cpus(node: int) -> int:
    """Number of CPUs of NUMA node `node` (from sysfs)."""
    text = Path(f"/sys/devices/system/node/node{node}/cpulist").read_text().strip()
    count = 0
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        count += int(last or first) - int(first) + 1
    return count


def numa_command(node_cpu: int, node_memory: int, threads: int, n: int, dtype: str, repetitions: int,
                 warmup: int) -> list[str]:
    """host_copy on the CPUs of one node with its memory on another, through numactl."""
    return ["numactl", f"--cpunodebind={node_cpu}", f"--membind={node_memory}",
            str(harness.kernel_path(HOST_KERNEL)), "--dtype", dtype, "--n", str(n), "--threads", str(threads),
            "--reps", str(repetitions), "--warmup", str(warmup)]


def run_numa(memory_node: int, params: dict[str, Any], dtype: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    threads = min(node_cpus(0), max_threads(params))
    n = values_per_array(params["cpu_array_mib"], dtype)
    argv = numa_command(0, memory_node, threads, n, dtype, params["repetitions"], params["warmup"])
    proc = subprocess.run(argv, capture_output=True, text=True, env=harness.pinned_env())
    if proc.returncode != 0:
        raise harness.KernelError(f"{' '.join(argv)} exited with {proc.returncode}: {proc.stderr.strip()}")
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    validation = next(r for r in records if r.get("record") == "validation")
    if not validation.get("ok"):
        raise harness.KernelError(f"{' '.join(argv)}: validation failed: {validation}")
    frame = pd.DataFrame([r for r in records if r.get("record") == "timing"]).drop(columns="record")
    return frame, validation


# ---- the plan, and measuring it ---------------------------------------------------------

def plan(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every run of the experiment, GPU runs included (they are skipped with their reason
    where they cannot run)."""
    runs = []
    for dtype in params["dtypes"]:
        runs.append({"group": "table2", "method": "C++", "case": "host_copy", "dtype": dtype, "threads": 1,
                     "gpu_method": None})
    for method in params["gpu_methods"]:
        for case in GPU_METHOD_CASES[method]:
            for dtype in params["dtypes"]:
                runs.append({"group": "table2", "method": GPU_METHODS[method], "case": case, "dtype": dtype,
                             "threads": 1, "gpu_method": method})
    for method in params["cpu_methods"]:
        for op in CPU_METHOD_JAGGED[method]:
            for dtype in params["dtypes"]:
                for threads in (sorted({1, max_threads(params)}) if method == "numba" else [1]):
                    runs.append({"group": "jagged", "method": CPU_METHODS[method], "case": op, "dtype": dtype,
                                 "threads": threads, "gpu_method": None})
    for method in params["gpu_methods"]:
        for op in GPU_METHOD_JAGGED[method]:
            for dtype in params["dtypes"]:
                runs.append({"group": "jagged", "method": GPU_METHODS[method], "case": op, "dtype": dtype,
                             "threads": 1, "gpu_method": method})
    if params["numa"]:
        threads = min(node_cpus(0), max_threads(params)) if numa_reason() is None else max_threads(params)
        for node in (0, 1):
            runs.append({"group": "numa", "method": "C++", "case": f"memory_node{node}", "dtype": "float64",
                         "threads": threads, "gpu_method": None})
    return runs


RUN_KEYS = ("group", "method", "case", "dtype", "threads", "gpu_method")


def run_name(run: dict[str, Any]) -> str:
    method = run["method"].replace("+", "p").replace(".", "_").replace(" ", "")
    return f"{run['group']}_{method}_{run['case']}_{run['dtype']}_t{run['threads']}"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cuda_run(run: dict[str, Any], params: dict[str, Any]):
    args = {"case": run["case"], "dtype": run["dtype"], "reps": params["repetitions"], "warmup": params["warmup"]}
    if run["group"] == "table2":
        args["n"] = values_per_array(params["gpu_array_mib"], run["dtype"])
    elif run["case"] in ("flat_inplace", "flat_immutable"):
        # the flat add on the particles of the jagged run: as many values
        particles = int(jagged_counts(params["gpu_events"], params["mean_particles"]).sum())
        args.update(case="inplace_global" if run["case"] == "flat_inplace" else "immutable_global",
                    n=max(1, particles))
    else:
        args.update(events=params["gpu_events"], **{"mean-particles": params["mean_particles"]})
    result = harness.run_kernel(CUDA_KERNEL, args)
    frame = result.timings.assign(case=run["case"])
    return frame, result.validation, result.build_info


def _measure(run: dict[str, Any], params: dict[str, Any], status: GpuStatus,
             cache: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
    reps, warmup = params["repetitions"], params["warmup"]
    build_info = None
    group, method, case, dtype = run["group"], run["method"], run["case"], run["dtype"]
    if group == "numa":
        frame, validation = run_numa(int(case[-1]), params, dtype)
        build_info = harness.build_info(HOST_KERNEL)
    elif method == "C++":
        n = values_per_array(params["cpu_array_mib"], dtype)
        result = harness.run_kernel(HOST_KERNEL, {"dtype": dtype, "n": n, "threads": 1, "reps": reps,
                                                  "warmup": warmup})
        frame, validation, build_info = result.timings, result.validation, result.build_info
    elif method == "CUDA C++":
        frame, validation, build_info = _cuda_run(run, params)
    elif group == "table2":  # CuPy
        n = values_per_array(params["gpu_array_mib"], dtype)
        frame, validation = table2_python(case, dtype, n, reps, warmup, _backend(cache))
    elif method == "numba.cuda":
        data = _jagged_data(cache, params["gpu_events"], params["mean_particles"], dtype)
        frame, validation = jagged_gpu_python(case, data, reps, warmup, _backend(cache))
    else:
        data = _jagged_data(cache, params["events"], params["mean_particles"], dtype)
        key = next(k for k, v in CPU_METHODS.items() if v == method)
        frame, validation = jagged_cpu(key, case, data, run["threads"], reps, warmup)
    frame = frame.assign(group=group, method=method, threads=run["threads"], checksum=validation["checksum"])
    if "event_s" not in frame:
        frame["event_s"] = float("nan")
    info = provenance.capture(params, cache_state="n/a (in-memory)", build_info=build_info)
    info["gpu"] = status.device if run["gpu_method"] else None
    return frame, info


def _backend(cache: dict[str, Any]) -> CupyBackend:
    if "backend" not in cache:
        cache["backend"] = CupyBackend()
    return cache["backend"]


def _jagged_data(cache: dict[str, Any], events: int, mean: int, dtype: str) -> Jagged:
    key = ("jagged", events, mean, dtype)
    if key not in cache:
        for old in [k for k in cache if isinstance(k, tuple)]:
            del cache[old]  # keep one data set alive at a time
        cache[key] = make_jagged(events, mean, dtype)
    return cache[key]


def skip_reason(run: dict[str, Any], status: GpuStatus) -> str | None:
    if run["group"] == "numa":
        return numa_reason()
    if run["gpu_method"]:
        return status.reason(run["gpu_method"])
    return None


def measure(params: dict[str, Any], raw_dir: str | Path, status: GpuStatus,
            progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run (or reuse, when stored with the same parameters) every run that can run
    here. Returns the measured rows with rates, and the runs not measured with why."""
    raw_dir = Path(raw_dir)
    frames, skipped, cache = [], [], {}
    versions = provenance.package_versions()
    for run in tqdm(plan(params), desc="gpu bandwidth", unit="run", disable=not progress):
        reason = skip_reason(run, status)
        if reason:
            skipped.append({**run, "reason": f"{NOT_MEASURED}: {reason}"})
            continue
        key = {**params, **run, "versions": versions}
        if run["method"] in ("C++", "CUDA C++"):
            name = HOST_KERNEL if run["method"] == "C++" else CUDA_KERNEL
            key["binary_sha256"] = _sha256(harness.kernel_path(name))
        if run["gpu_method"]:
            key["device"] = {k: v for k, v in (status.device or {}).items() if k != "free_bytes"}
        frames.append(measure_once(raw_dir / f"{run_name(run)}.parquet", key,
                                   lambda: _measure(run, params, status, cache)))
    nominal = (status.device or {}).get("nominal_gb_s")
    frame = with_rates(pd.concat(frames, ignore_index=True), nominal) if frames else pd.DataFrame()
    return frame, pd.DataFrame(skipped, columns=[*RUN_KEYS, "reason"])


def with_rates(frame: pd.DataFrame, nominal: float | None) -> pd.DataFrame:
    """10^9 values/s, GB/s, and for GPU rows the fraction of the device's nominal bandwidth.
    Device work is rated by its CUDA-event time, CPU work by the steady clock."""
    frame = frame.copy()
    frame["time_s"] = frame["event_s"].where(frame["event_s"].notna(), frame["wall_s"])
    frame["ghz"] = frame["n"] / frame["time_s"] / 1e9
    frame["gb_s"] = frame["bytes_moved"] / frame["time_s"] / 1e9
    on_gpu = frame["method"].isin(list(GPU_METHODS.values()))
    frame["fraction"] = (frame["gb_s"] / nominal).where(on_gpu) if nominal else float("nan")
    return frame


def check_agreement(frame: pd.DataFrame) -> None:
    """Every method of one case, value type and size must give the same checksum."""
    if frame.empty:
        return
    for (group, case, dtype, n), rows in frame[frame["group"] != "numa"].groupby(["group", "case", "dtype", "n"]):
        if rows["checksum"].nunique() != 1:
            raise AssertionError(f"methods disagree on {group} {case} {dtype} (n={n}): "
                                 f"{rows.groupby('method')['checksum'].unique().to_dict()}")


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median (min, max) per run, warm-up passes left out."""
    if frame.empty:
        return pd.DataFrame(columns=["group", "method", "case", "dtype", "threads", "n", "ghz", "ghz_min",
                                     "ghz_max", "gb_s", "fraction", "time_s", "cpu_s", "passes", "clock"])
    measured = frame[~frame["warmup"]]
    return (measured.groupby(["group", "method", "case", "dtype", "threads", "n"], sort=False)
            .agg(ghz=("ghz", "median"), ghz_min=("ghz", "min"), ghz_max=("ghz", "max"), gb_s=("gb_s", "median"),
                 fraction=("fraction", "median"), time_s=("time_s", "median"), cpu_s=("cpu_s", "median"),
                 passes=("time_s", "count"), clock=("clock", "first"))
            .reset_index())


# ---- tables and sentences for the paper -------------------------------------------------

def _pick(table: pd.DataFrame, **where: Any) -> pd.Series | None:
    rows = table
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows.iloc[0] if len(rows) else None


def table2_rows(table: pd.DataFrame, skipped: pd.DataFrame, dtypes: list[str]) -> list[dict[str, Any]]:
    """Seed 000's Table 2 beside ours: for each case, the seed's six GPUs, our rate
    (CUDA C++ on the GPU; memcpy on the CPU) per value type, and the float32 rate's
    fraction of nominal; or why ours is not measured."""
    rows = []
    for case in CASES:
        method = "C++" if not case.on_gpu else "CUDA C++"
        seed = SEED_TABLE2.get(case.seed_row) if case.seed_row else None
        row = {"case": case.name, "label": case.label, "seed": seed, "ours": {}, "fraction": None, "reason": None}
        for dtype in dtypes:
            got = _pick(table, group="table2", method=method, case=case.name, dtype=dtype)
            if got is not None:
                row["ours"][dtype] = got["ghz"]
                if dtype == dtypes[0] and case.on_gpu:
                    row["fraction"] = got["fraction"]
        if not row["ours"]:
            hit = skipped[(skipped["group"] == "table2") & (skipped["case"] == case.name)
                          & (skipped["method"] == method)] if not skipped.empty else skipped
            row["reason"] = hit["reason"].iloc[0] if len(hit) else f"{NOT_MEASURED}: not configured"
        rows.append(row)
    return rows


def table2_tex(rows: list[dict[str, Any]], dtypes: list[str]) -> str:
    """LaTeX tabular of table2_rows; a case not measured spans our columns with its reason."""
    from .. import paper

    ours = len(dtypes) + 1
    header = ["", *SEED_GPU_SHORT, *[f"ours {d}" for d in dtypes], f"frac. ({dtypes[0]})"]
    lines = [rf"\begin{{tabular}}{{l{'r' * len(SEED_GPU_SHORT)}|{'r' * ours}}}", r"\toprule",
             " & ".join(paper.escape(h) for h in header) + r" \\", r"\midrule"]
    for row in rows:
        seed = [paper.number(v, 3) for v in row["seed"]] if row["seed"] else ["--"] * len(SEED_GPU_SHORT)
        if row["reason"]:
            mine = [rf"\multicolumn{{{ours}}}{{l}}{{{paper.escape(row['reason'])}}}"]
        else:
            mine = [paper.number(row["ours"][d]) if d in row["ours"] else "--" for d in dtypes]
            fraction = row["fraction"]
            mine.append(paper.number(fraction, 2) if fraction is not None and np.isfinite(fraction) else "--")
        lines.append(" & ".join([paper.escape(row["label"]), *seed, *mine]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def gpu_detail_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Every GPU Table 2 run: method, case, value type, GHz (min, max), GB/s, fraction."""
    gpu = table[(table["group"] == "table2") & table["method"].isin(list(GPU_METHODS.values()))]
    order = {c.name: i for i, c in enumerate(CASES)}
    return gpu.assign(order=gpu["case"].map(order)).sort_values(["order", "method", "dtype"]).drop(columns="order")


def write_tex(text: str, path: str | os.PathLike) -> Path:
    """Write a generated LaTeX file atomically (a killed run leaves none half-written)."""
    from ..results import atomic_path

    with atomic_path(path) as temporary:
        temporary.write_text(text)
    return Path(path)


def gpu_detail_tex(table: pd.DataFrame, skipped: pd.DataFrame) -> str:
    """Every GPU Table 2 run (CUDA C++ and CuPy, both value types), or why there is none."""
    from .. import paper

    header = ["case", "method", "type", "GHz (min--max)", "GB/s", "fraction of nominal", "clock"]
    lines = [r"\begin{tabular}{lllrrrl}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
    rows = gpu_detail_rows(table)
    for row in rows.itertuples(index=False):
        fraction = paper.number(row.fraction, 2) if np.isfinite(row.fraction) else "--"
        lines.append(" & ".join([
            paper.escape(CASE_BY_NAME[row.case].label), paper.escape(row.method), paper.escape(row.dtype),
            f"{paper.number(row.ghz)} ({paper.number(row.ghz_min)}--{paper.number(row.ghz_max)})",
            paper.number(row.gb_s), fraction, paper.escape(row.clock.replace("_", " "))]) + r" \\")
    gone = skipped[(skipped["group"] == "table2") & skipped["gpu_method"].notna()] if not skipped.empty else skipped
    for row in gone.drop_duplicates(["method", "reason"]).itertuples(index=False):
        lines.append(rf"\multicolumn{{2}}{{l}}{{{paper.escape(row.method)}}} & "
                     rf"\multicolumn{{5}}{{l}}{{{paper.escape(row.reason)}}} \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def jagged_table(table: pd.DataFrame) -> pd.DataFrame:
    """Rates of the four operations per method, threads and value type, and explode's and
    combine's rate relative to the flat immutable add of the same method."""
    jag = table[table["group"] == "jagged"]
    if jag.empty:
        return pd.DataFrame(columns=["method", "threads", "dtype", *JAGGED_OPS, "explode_ratio", "combine_ratio"])
    wide = jag.pivot_table(index=["method", "threads", "dtype"], columns="case", values="ghz", sort=False)
    wide = wide.reindex(columns=list(JAGGED_OPS))
    wide["explode_ratio"] = wide["explode"] / wide["flat_immutable"]
    wide["combine_ratio"] = wide["combine"] / wide["flat_immutable"]
    return wide.reset_index()


def jagged_tex(wide: pd.DataFrame, skipped: pd.DataFrame) -> str:
    from .. import paper

    header = ["method", "threads", "type", "flat in place", "flat immutable", "explode", "combine",
              "explode/flat", "combine/flat"]
    lines = [r"\begin{tabular}{llrrrrrrr}", r"\toprule", " & ".join(paper.escape(h) for h in header) + r" \\",
             r"\midrule"]

    def cell(value, digits=3):
        return paper.number(value, digits) if value is not None and np.isfinite(value) else "--"

    for row in wide.itertuples(index=False):
        lines.append(" & ".join([paper.escape(row.method), str(row.threads), paper.escape(row.dtype),
                                 *[cell(getattr(row, op)) for op in JAGGED_OPS],
                                 cell(row.explode_ratio, 2), cell(row.combine_ratio, 2)]) + r" \\")
    if not skipped.empty:
        gone = skipped[skipped["group"] == "jagged"].drop_duplicates(["method", "reason"])
        for row in gone.itertuples(index=False):
            lines.append(rf"{paper.escape(row.method)} & \multicolumn{{8}}{{l}}{{{paper.escape(row.reason)}}} \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def targets(table: pd.DataFrame, status: GpuStatus, dtypes: list[str]) -> dict[str, Any]:
    """The issue's target for a GPU host: the within-device copy and the in-place kernel
    (CUDA C++) reach at least 85% of the device's nominal memory bandwidth."""
    result: dict[str, Any] = {"checked": False, "met": None, "fractions": {}}
    nominal = (status.device or {}).get("nominal_gb_s")
    if status.reason("cuda") is not None:
        result["why_not"] = status.reason("cuda")
        return result
    if not nominal:
        result["why_not"] = "the device reports no memory clock, so its nominal bandwidth is unknown"
        return result
    for case in ("d2d_copy", "inplace_global"):
        for dtype in dtypes:
            got = _pick(table, group="table2", method="CUDA C++", case=case, dtype=dtype)
            if got is not None:
                result["fractions"][(case, dtype)] = float(got["fraction"])
    if not result["fractions"]:
        result["why_not"] = "the CUDA C++ copy and in-place cases were not measured"
        return result
    result.update(checked=True, met=all(f >= TARGET_FRACTION for f in result["fractions"].values()),
                  nominal_gb_s=nominal)
    return result


def target_sentence(goal: dict[str, Any]) -> str:
    if not goal["checked"]:
        return f"It is not checked in this build: {goal['why_not']}."
    parts = [f"{CASE_BY_NAME[case].label} {dtype} reaches {fraction:.2f}"
             for (case, dtype), fraction in goal["fractions"].items()]
    verdict = "the target is met" if goal["met"] else "the target is NOT met"
    return (f"Against the nominal {goal['nominal_gb_s']:.0f} GB/s of this device, " + ", ".join(parts)
            + f": {verdict}.")


def numa_sentence(table: pd.DataFrame, skipped: pd.DataFrame) -> str:
    if not skipped.empty and (skipped["group"] == "numa").any():
        return f"Local against remote memory: {skipped[skipped['group'] == 'numa']['reason'].iloc[0]}."
    rows = table[table["group"] == "numa"]
    if rows.empty:
        return "Local against remote memory: not measured: switched off in the configuration (numa: false)."
    local = _pick(rows, case="memory_node0")
    remote = _pick(rows, case="memory_node1")
    return (f"With the {int(local['threads'])} threads of NUMA node 0, host memcpy moves "
            f"{local['gb_s']:.1f} GB/s from the node's own memory and {remote['gb_s']:.1f} GB/s from node 1's "
            f"(remote/local {remote['gb_s'] / local['gb_s']:.2f}).")


def jagged_sentence(wide: pd.DataFrame) -> str:
    """What the measured ratios say about the seed's claim: numba on one thread (the
    sequential processor) against the GPU (CUDA C++) where it was measured."""
    if wide.empty:
        return "No explode/combine rates were measured."
    dtype = wide["dtype"].iloc[0]
    parts = []
    cpu = _pick(wide, method="numba", threads=1, dtype=dtype)
    if cpu is not None:
        parts.append(f"With numba on one CPU thread, explode runs at {cpu['explode_ratio']:.2f} and combine at "
                     f"{cpu['combine_ratio']:.2f} times the rate of the flat immutable add ({dtype})")
    gpu = _pick(wide, method="CUDA C++", dtype=dtype)
    if gpu is not None and cpu is not None:
        parts.append(f"on the GPU (CUDA C++) explode runs at {gpu['explode_ratio']:.2f} and combine at "
                     f"{gpu['combine_ratio']:.2f} times its flat immutable add")
        claim = ("supports" if gpu["explode_ratio"] < cpu["explode_ratio"] and
                 gpu["combine_ratio"] < cpu["combine_ratio"] else "does not support")
        parts.append(f"which {claim} the seed's claim that these operations suit a sequential processor better")
    elif cpu is not None:
        parts.append("the GPU side of the comparison is not measured on this host, so the seed's claim is "
                     "tested only on the CPU side")
    return "; ".join(parts) + "." if parts else "No numba explode/combine rates were measured."
