"""The numba.cuda method: the add, explode and combine kernels (compiled on first
use, never at import: the tests run them in numba's CUDA simulator), and the
jagged operations with them on a backend's arrays (CuPy's on a GPU)."""
from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from ...core import harness
from .cases import CONSTANT, JAGGED_OPS, LAUNCH_CASE
from .device import import_numba_cuda
from .cupy_backend import NumpyBackend, no_setup, passes_taking, takes_made
from .data import Jagged, from_counts, jagged_bytes_moved, jagged_values, reference, validate_output


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
    cuda = import_numba_cuda()

    @cuda.jit
    def count_launch(launches):  # what a launch costs, measured apart (launch_python)
        launches[0] += 1

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

    return SimpleNamespace(count_launch=count_launch, add_inplace=add_inplace, add_immutable=add_immutable, explode=explode,
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


def jagged_gpu_python(op: str, data: Jagged, repetitions: int, warmup: int, backend: NumpyBackend,
                      kernels: SimpleNamespace | None = None,
                      retakes: harness.Retakes = harness.Retakes(),
                      min_sample_s: float = 0.0) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One jagged operation with the numba.cuda kernels (on CuPy arrays on a GPU; on
    numpy arrays in numba's CUDA simulator), each sample `loops` passes back to back calibrated
    to `min_sample_s` (cupy_backend.passes_taking), taken again while `retakes` says it was
    disturbed; validated exactly (the in-place add counting every pass of every take)."""
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

    times: list[dict[str, Any]] = []
    pass_ = passes_taking(warmup, retakes, times, min_sample_s)
    if op == "flat_inplace":
        a = backend.device_array(data.values)
        for i in range(passes):
            pass_(i, no_setup, lambda loops: backend.time_device(
                lambda: launch(kernels.add_inplace, data.particles, arg(a), c), loops))
        out = a
    elif op == "flat_immutable":
        a, out = backend.device_array(data.values), backend.device_empty(data.particles, dtype)
        for i in range(passes):
            pass_(i, lambda: out.fill(-1), lambda loops: backend.time_device(
                lambda: launch(kernels.add_immutable, data.particles, arg(a), arg(out), c), loops))
    elif op == "explode":
        event_values, out = backend.device_array(data.event_values), backend.device_empty(data.particles, dtype)
        for i in range(passes):
            pass_(i, lambda: out.fill(-1), lambda loops: backend.time_device(
                lambda: launch(kernels.explode, data.particles, arg(offsets), arg(event_values), arg(out)), loops))
    elif op == "combine":
        values, out = backend.device_array(data.values), backend.device_empty(data.pairs, dtype)
        counts = backend.device_empty(data.events + 1, np.int64)
        pair_offsets = backend.device_empty(data.events + 1, np.int64)
        for i in range(passes):
            pass_(i, lambda: out.fill(-1), lambda loops: backend.time_device(
                lambda: combine_gpu(kernels, backend, offsets, counts, pair_offsets, values, out), loops))
        if not np.array_equal(backend.asnumpy(pair_offsets), data.pair_offsets):
            raise AssertionError(f"numba.cuda combine {dtype.name}: wrong pair offsets")
    else:
        raise ValueError(f"unknown jagged operation {op!r} (known: {', '.join(JAGGED_OPS)})")
    backend.synchronize()
    validation = validate_output(backend.asnumpy(out), reference(op, data, takes_made(times)),
                                 f"numba.cuda {op} {dtype.name}")
    n = jagged_values(op, data)
    frame = pd.DataFrame([{"case": op, "dtype": dtype.name, "n": n, "rep": i - warmup, "warmup": i < warmup,
                           "bytes_moved": jagged_bytes_moved(op, data), **t} for i, t in enumerate(times)])
    return frame, validation


def launch_python(method: str, dtype: str, backend: NumpyBackend, repetitions: int, warmup: int,
                  retakes: harness.Retakes = harness.Retakes(), min_sample_s: float = 0.0,
                  kernels: SimpleNamespace | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """What one launch costs a Python method, apart from any bandwidth: a one-thread kernel that
    counts its launches (CuPy's own RawKernel for "CuPy", numba.cuda's for "numba.cuda"), launched
    `loops` times back to back in each sample (cupy_backend.passes_taking): the CUDA events give
    the device's time per launch, the steady clock (`wall_s`) the host's, Python's dispatch with
    it. Checked by the count, which must equal every launch made. (`dtype` names the run only:
    the kernel moves no values.)"""
    counter = backend.device_array(np.zeros(1, np.int64))
    if method == "CuPy":
        kernel = backend.raw_kernel('extern "C" __global__ void count_launch(long long *n) { ++*n; }', "count_launch")

        def one() -> None:
            kernel((1,), (1,), (counter,))
    elif method == "numba.cuda":
        count = (kernels or cuda_kernels()).count_launch
        arg = backend.kernel_arg(counter)

        def one() -> None:
            count[1, 1](arg)
    else:
        raise ValueError(f"no launch of its own for method {method!r} (known: CuPy, numba.cuda)")
    one()  # compiled outside the timed samples
    backend.synchronize()
    first = int(backend.asnumpy(counter)[0])
    times: list[dict[str, Any]] = []
    pass_ = passes_taking(warmup, retakes, times, min_sample_s)
    for i in range(warmup + repetitions):
        pass_(i, no_setup, lambda loops: backend.time_device(one, loops))
    backend.synchronize()
    made = takes_made(times)
    validation = validate_output(backend.asnumpy(counter) - first, np.array([made]), f"{method} {LAUNCH_CASE}")
    frame = pd.DataFrame([{"case": LAUNCH_CASE, "dtype": dtype, "n": 1, "rep": i - warmup, "warmup": i < warmup,
                           "bytes_moved": 0, **t} for i, t in enumerate(times)])
    return frame, {**validation, "passes": made}
