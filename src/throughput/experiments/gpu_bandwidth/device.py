"""Is there a GPU? What this host's GPU is (from the CUDA program, else from CuPy),
and for each GPU method why it cannot run here."""
from __future__ import annotations

import functools
import json
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core import cache_fit, harness
from .cases import CUDA_KERNEL, GPU_METHODS, NO_GPU
from .spec import MIB, driver_present

EXIT_NO_DEVICE = 4  # gpu_bandwidth_cuda's exit code where there is no usable GPU


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


@functools.cache
def listed_cases() -> tuple[dict[str, Any], ...]:
    """The CUDA program's case table as `--list-cases` prints it (no GPU needed; asked once per
    process). Raises harness.KernelError where the program is not built or fails. The Python
    methods count with cases.KERNEL_CASES, which the tests check against this."""
    path = harness.kernel_path(CUDA_KERNEL)
    proc = subprocess.run([str(path), "--list-cases"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise harness.KernelError(f"kernel {CUDA_KERNEL} --list-cases exited with {proc.returncode}: "
                                  f"{proc.stderr.strip()}")
    return tuple(harness.json_lines(proc.stdout, f"kernel {CUDA_KERNEL} --list-cases"))


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


def _row_stack(tup, *, dtype=None, casting="same_kind"):
    """np.row_stack as numpy < 2.5 had it: an alias of np.vstack."""
    return np.vstack(tup, dtype=dtype, casting=casting)


def import_numba_cuda():
    """numba.cuda, made to compile under numpy >= 2.5.

    numba-cuda registers an overload of np.row_stack when it compiles its first kernel, and
    numpy 2.5 removed that function: on a GPU node with numpy 2.5.2 no kernel compiled
    (AttributeError), and upstream will not follow numpy 2.5 (NVIDIA/numba-cuda#907, PR #916
    closed unmerged). Our kernels never call it; giving numpy back its alias, as a function of
    its own so that the overload does not land on np.vstack, lets numba-cuda register it."""
    if not hasattr(np, "row_stack"):
        np.row_stack = _row_stack
    from numba import cuda

    return cuda


def _numba_cuda_reason() -> str | None:
    try:
        cuda = import_numba_cuda()
    except ImportError as error:
        return f"numba.cuda is not installed ({error})"
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "numba's CUDA simulator is enabled (NUMBA_ENABLE_CUDASIM=1): no real GPU is used"
    if cuda.is_available():
        return _numba_cuda_compile_reason()
    return NO_GPU if not driver_present() else "numba.cuda finds no usable GPU"


def _numba_cuda_compile_reason() -> str | None:
    """Why numba.cuda cannot compile a kernel like ours here (None: it can). Seen on a GPU node:
    its numba-cuda used np.row_stack, which its numpy 2.5 no longer has, when the first kernel
    was compiled, and that stopped the whole experiment; now the method is a row saying why."""
    from numba import float32

    cuda = import_numba_cuda()

    def add_inplace(values, c):  # the flat add of numba_cuda.kernels, as the probe
        i = cuda.grid(1)
        if i < values.size:
            values[i] += c

    try:
        cuda.compile_ptx(add_inplace, (float32[:], float32), cc=(8, 0))
    except Exception as error:  # noqa: BLE001 - whatever stops the compiler is the reason
        return f"numba.cuda cannot compile a kernel here ({type(error).__name__}: {error})"
    return None


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


# How many times the L2 cache one GPU array must be for its rates to be memory rates.
L2_FACTOR = 4


def l2_fit(params: dict[str, Any], status: GpuStatus) -> dict[str, Any]:
    """Whether one GPU array is well beyond the device's L2 cache: `state` beyond (at least
    L2_FACTOR times it), notbeyond (rates are partly cache rates) or unknown (no device here:
    status.summary() says why), with the array over the L2 (`ratio`) and the L2 in MiB (`l2_mib`;
    both NaN where unknown). The paper words each state (paper/sections/gpu_bandwidth.tex)."""
    l2 = status.device["l2_bytes"] if status.device else None
    return cache_fit.beyond(params["gpu_array_mib"] * MIB, l2, L2_FACTOR, size_key="l2_mib")
