"""The CuPy method: the array backends (CuPy on a GPU, device work timed with CUDA
events; numpy standing in for device, pinned, mapped and managed memory without a GPU),
and Table 2's GPU cases with the backend's own operations."""
from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from ...core import harness
from .cases import CONSTANT, KERNEL_CASE
from .data import added, case_bytes_moved, case_shape, initial, validate_output


class NumpyBackend:
    """Host arrays standing in for device, pinned, mapped and managed memory, timed by the
    steady clock: runs the GPU paths' logic without a GPU (tests, simulator)."""

    name = "numpy (stand-in)"
    xp = np

    def device_array(self, host: np.ndarray) -> np.ndarray:
        return host.copy()

    def device_empty(self, n: int, dtype) -> np.ndarray:
        return np.empty(n, dtype)

    def pinned_empty(self, n: int, dtype) -> np.ndarray:
        return np.empty(n, dtype)

    def shared_empty(self, n: int, dtype, memory: str) -> tuple[np.ndarray, np.ndarray]:
        """An array both sides address ("managed" or "mapped"): the kernels' array and the
        CPU's view of the same memory."""
        if memory not in SHARED_MEMORY:
            raise ValueError(f"unknown shared memory {memory!r} (known: {', '.join(SHARED_MEMORY)})")
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

    def time_device(self, op: Callable[[], Any], loops: int = 1) -> dict[str, float]:
        return {**harness.timed(lambda: repeat(op, loops)), "event_s": float("nan"), "clock": "steady_clock"}

    def time_host(self, op: Callable[[], Any]) -> dict[str, float]:
        return {**harness.timed(op), "event_s": float("nan"), "clock": "steady_clock"}


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

    def shared_empty(self, n, dtype, memory):
        """A CuPy array in managed memory (cudaMallocManaged) or in pinned host memory mapped
        into the device (cudaHostAlloc with cudaHostAllocMapped; the kernels use the device
        pointer cudaHostGetDevicePointer gives), and a numpy view of the same memory for the CPU."""
        super().shared_empty(0, dtype, memory)  # the name check
        dtype = np.dtype(dtype)
        size = max(1, n * dtype.itemsize)
        if memory == "managed":
            pointer = self.cp.cuda.malloc_managed(size)
            host_address = pointer.ptr
        else:
            from cuda.bindings import runtime

            pinned = self.cp.cuda.PinnedMemory(size, self.cp.cuda.runtime.hostAllocMapped)
            status, device_address = runtime.cudaHostGetDevicePointer(pinned.ptr, 0)
            if status != runtime.cudaError_t.cudaSuccess:
                raise RuntimeError(f"cudaHostGetDevicePointer: {status}")
            pointer = self.cp.cuda.MemoryPointer(self.cp.cuda.UnownedMemory(int(device_address), size, pinned), 0)
            host_address = pinned.ptr
        device = self.cp.ndarray((n,), dtype, memptr=pointer)
        buffer = (ctypes.c_char * (n * dtype.itemsize)).from_address(host_address)
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

    def time_device(self, op, loops=1):
        """CUDA events around `loops` calls of `op` back to back (kernel-only time once the
        first launch is queued: the host queues the next while the device runs this one)."""
        self.synchronize()

        def region():
            self._start.record()
            repeat(op, loops)
            self._stop.record()
            self._stop.synchronize()

        row = harness.timed(region)
        event_s = self.cp.cuda.get_elapsed_time(self._start, self._stop) * 1e-3
        return {**row, "event_s": event_s, "clock": "cuda_event"}

    def time_host(self, op):
        self.synchronize()
        return super().time_host(op)

    def raw_kernel(self, source: str, name: str):
        """A CUDA C++ kernel compiled by CuPy (NVRTC), launched as kernel(grid, block, args)."""
        return self.cp.RawKernel(source, name)


def repeat(op: Callable[[], Any], loops: int) -> None:
    for _ in range(loops):
        op()


# Memory both the CPU and the GPU address: managed, or the seed's "unified" (pinned, mapped).
SHARED_MEMORY = ("managed", "mapped")


def _memory(case: str) -> str:
    """Which shared memory a case uses: "inplace_mapped", "mapped_cpu_read" -> "mapped"."""
    return "mapped" if "mapped" in case else "managed"


def passes_taking(warmup: int, retakes: harness.Retakes, times: list[dict[str, Any]], min_sample_s: float = 0.0):
    """`pass_(index, setup, timed, repeatable)` for a GPU path's samples: `setup` (untimed) puts
    inputs and outputs where the pass expects them, then `timed(loops)` (a backend's time_device
    of `loops` passes back to back, or time_host of one) times it; its row, with `loops`, goes to
    `times`, the sample taken again while `retakes` says its run delay disturbed it (never a
    warm-up), as the CUDA program's samples are. A repeatable device pass is calibrated as the
    CUDA program calibrates (harness.Calibration on the CUDA-event time: after the warm-up, as
    many passes a sample as reach `min_sample_s`); one that needs its setup before each pass
    (shared memory the CPU writes first), or CPU work, is one pass a sample."""
    calibration = harness.Calibration(warmup, min_sample_s)

    def pass_(index: int, setup: Callable[[], Any], timed: Callable[[int], dict[str, Any]],
              repeatable: bool = True) -> None:
        these = calibration.loops(index) if repeatable else 1

        def take():  # (no loops where one pass is a sample: counted apart from the calibrated)
            setup()
            return {**timed(these), **({"loops": these} if repeatable else {})}

        row = harness.take_sample(take, retakes, index >= warmup)
        if repeatable and math.isfinite(row["event_s"]):  # (NaN: not timed by events)
            calibration.update(index, these, row["event_s"], row["wall_s"])
        times.append(row)

    return pass_


def takes_made(times: list[dict[str, Any]]) -> int:
    """Every pass of every take, warm-up and dropped ones included (what an in-place add adds):
    harness.passes_made on these rows (a sample of one pass records no loops)."""
    rows = pd.DataFrame(times)
    return harness.passes_made(rows.assign(loops=rows["loops"].fillna(1) if "loops" in rows else 1))


def no_setup() -> None:
    """No setup: the pass finds its input as the previous one left it."""


@dataclass(frozen=True)
class CasePass:
    """One Table 2 case with an array library: `setup` (untimed) puts its input and output where a
    pass expects them, `op` is the pass, `result` gives what the passes left (and checks what
    they must not have changed)."""

    setup: Callable[[], Any]
    op: Callable[[], Any]
    result: Callable[[], np.ndarray]


# Each builder takes (backend, the case, its initial values, the constant added); CASE_PASSES
# maps every case name of the CUDA program's table that an array library runs to its builder,
# in the table's order (cases.SEED_KERNEL_CASES; a test holds them equal).
def _to_device(backend, case, init, c):
    source = init
    if case == "h2d_pinned":
        source = backend.pinned_empty(init.size, init.dtype)
        source[...] = init
    d = backend.device_empty(init.size, init.dtype)
    return CasePass(lambda: d.fill(-1), lambda: backend.to_device(d, source), lambda: backend.asnumpy(d))


def _to_host(backend, case, init, c):
    d = backend.device_array(init)
    target = np.empty_like(init) if case == "d2h_pageable" else backend.pinned_empty(init.size, init.dtype)
    return CasePass(lambda: target.fill(-1), lambda: backend.to_host(target, d), lambda: np.array(target))


def _cpu_writes_shared(backend, case, init, c):
    shared, view = backend.shared_empty(init.size, init.dtype, _memory(case))

    def result():  # the GPU touched it last
        backend.synchronize()
        return np.array(view)
    return CasePass(lambda: shared.fill(-1), lambda: np.copyto(view, init), result)


def _cpu_reads_shared(backend, case, init, c):
    shared, view = backend.shared_empty(init.size, init.dtype, _memory(case))
    d_init, target = backend.device_array(init), np.empty_like(init)

    def gpu_writes_last():
        backend.xp.copyto(shared, d_init)
        target.fill(-1)
    return CasePass(gpu_writes_last, lambda: np.copyto(target, view), lambda: target)


def _device_copy(backend, case, init, c):
    a, b = backend.device_array(init), backend.device_empty(init.size, init.dtype)
    return CasePass(lambda: b.fill(-1), lambda: backend.xp.copyto(b, a), lambda: backend.asnumpy(b))


def _inplace_global(backend, case, init, c):
    a = backend.device_array(init)
    return CasePass(no_setup, lambda: backend.xp.add(a, c, out=a), lambda: backend.asnumpy(a))


def _immutable_global(backend, case, init, c):
    a, b = backend.device_array(init), backend.device_empty(init.size, init.dtype)

    def result():
        if not np.array_equal(backend.asnumpy(a), init):
            raise AssertionError(f"{backend.name} {case} {init.dtype}: the immutable input was changed")
        return backend.asnumpy(b)
    return CasePass(lambda: b.fill(-1), lambda: backend.xp.add(a, c, out=b), result)


def _inplace_shared(backend, case, init, c):
    shared, view = backend.shared_empty(init.size, init.dtype, _memory(case))

    def cpu_writes_input():  # the kernel finds it in host memory
        backend.synchronize()
        np.copyto(view, init)
    return CasePass(cpu_writes_input, lambda: backend.xp.add(shared, c, out=shared), lambda: backend.asnumpy(shared))


def _immutable_shared(backend, case, init, c):
    (a, a_view), (b, b_view) = (backend.shared_empty(init.size, init.dtype, _memory(case)) for _ in range(2))

    def cpu_writes_input_and_output():
        backend.synchronize()
        np.copyto(a_view, init)
        b_view.fill(-1)
    return CasePass(cpu_writes_input_and_output, lambda: backend.xp.add(a, c, out=b), lambda: backend.asnumpy(b))


CASE_PASSES: dict[str, Callable[..., CasePass]] = {
    "h2d_pageable": _to_device, "h2d_pinned": _to_device, "d2h_pageable": _to_host, "d2h_pinned": _to_host,
    "mapped_cpu_write": _cpu_writes_shared, "mapped_cpu_read": _cpu_reads_shared,
    "managed_cpu_write": _cpu_writes_shared, "managed_cpu_read": _cpu_reads_shared,
    "d2d_copy": _device_copy, "inplace_global": _inplace_global, "immutable_global": _immutable_global,
    "inplace_mapped": _inplace_shared, "immutable_mapped": _immutable_shared,
    "inplace_managed": _inplace_shared, "immutable_managed": _immutable_shared,
}


def table2_python(case: str, dtype: str, n: int, repetitions: int, warmup: int, backend: NumpyBackend,
                  retakes: harness.Retakes = harness.Retakes(),
                  min_sample_s: float = 0.0) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One Table 2 case with array-library operations (CuPy's on a GPU: CASE_PASSES), each sample
    taken again while `retakes` says it was disturbed, device passes on device memory calibrated
    to `min_sample_s` (passes_taking); validated exactly. Its clock, expected values and bytes
    moved are its row of the CUDA program's case table (cases.KERNEL_CASES)."""
    if case not in CASE_PASSES:
        raise ValueError(f"unknown Table 2 case {case!r} for the array library (known: {', '.join(CASE_PASSES)})")
    T = np.dtype(dtype)
    init = initial(n, dtype)
    on_cpu = KERNEL_CASE[case].clock == "steady_clock"

    def timed(op, loops=1):  # the CPU's work one pass a sample (passes_taking: not repeatable)
        return backend.time_host(op) if on_cpu else backend.time_device(op, loops)

    times: list[dict[str, Any]] = []
    pass_ = passes_taking(warmup, retakes, times, min_sample_s)
    # shared memory's passes need the CPU's setup first; the CPU's work is timed one pass a sample
    repeatable = not (on_cpu or "mapped" in case or "managed" in case)
    plan = CASE_PASSES[case](backend, case, init, T.type(CONSTANT))
    for i in range(warmup + repetitions):
        pass_(i, plan.setup, lambda loops: timed(plan.op, loops), repeatable)
    got = plan.result()
    expected = init + T.type(added(case, takes_made(times)) * CONSTANT)
    moved = case_bytes_moved(case, T, case_shape(n=n))
    validation = validate_output(got, expected, f"{backend.name} {case} {dtype}")
    frame = pd.DataFrame([{"case": case, "dtype": dtype, "n": n, "rep": i - warmup, "warmup": i < warmup,
                           "bytes_moved": moved, **t} for i, t in enumerate(times)])
    return frame, validation
