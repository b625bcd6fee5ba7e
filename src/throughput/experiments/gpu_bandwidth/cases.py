"""What the experiment measures: Table 2's cases and the jagged operations, the
methods (their configuration ids and the names the tables use), the constants
every method shares, and seed 000's figures that ours stand beside."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...report import seeds
from .spec import SPEC


CONSTANT = 1.0
INIT_PERIOD = 1000  # values are i % 1000: small integers, exact in float32 and float64
DTYPES = ("float32", "float64")
(CUDA_KERNEL,) = SPEC.cuda_kernels
HOST_KERNEL = "host_copy"
NO_GPU = "no GPU on this host"
NOT_MEASURED = "not measured"

# ---- seed 000, Table 2: the figures live in throughput.report.seeds (with where each comes from) ------
# Rates in GHz: 10^9 values per second of 32-bit floats, as its caption says (see seeds.GPU_TABLE2).
SEED_GPUS = seeds.GPU_NAMES
SEED_GPU_SHORT = seeds.GPU_SHORT
SEED_TABLE2 = seeds.GPU_TABLE2
SEED_ARRAY_MIB = seeds.GPU_ARRAY_MIB  # the arrays of the seed's benchmark code, "1 GB" there
TARGET_FRACTION = 0.85  # within-device copy and in-place kernel vs nominal memory bandwidth


@dataclass(frozen=True)
class Case:
    """One row of Table 2: how we run it and which seed row it stands beside."""

    name: str
    label: str
    seed_row: str | None  # None: the seed did not measure this case (pinned transfers, managed memory)
    on_gpu: bool = True


CASES = (
    Case("host_copy", "DRAM to CPU (memcpy, one thread)", "DRAM to CPU", on_gpu=False),
    Case("h2d_pageable", "DRAM to GPU, pageable", "DRAM to GPU"),
    Case("h2d_pinned", "DRAM to GPU, pinned", None),
    Case("d2h_pageable", "GPU to DRAM, pageable", "GPU to DRAM"),
    Case("d2h_pinned", "GPU to DRAM, pinned", None),
    # The seed's "unified" memory is, by its own caption, "also known as pinned": host memory
    # mapped into the device (cudaHostAlloc with cudaHostAllocMapped), which kernels read and
    # write across the bus (zero-copy). Managed memory (cudaMallocManaged, migrated on demand),
    # what "unified memory" means in today's CUDA, is measured beside it under its own name.
    Case("mapped_cpu_write", "CPU write unified (pinned, mapped)", "CPU write unified"),
    Case("mapped_cpu_read", "CPU read unified (pinned, mapped)", "CPU read unified"),
    Case("managed_cpu_write", "CPU write managed", None),
    Case("managed_cpu_read", "CPU read managed", None),
    Case("d2d_copy", "within GPU", "within GPU"),
    Case("inplace_global", "in-place global", "in-place global"),
    Case("immutable_global", "immutable global", "immutable global"),
    Case("inplace_mapped", "in-place unified (pinned, mapped)", "in-place unified"),
    Case("immutable_mapped", "immutable unified (pinned, mapped)", "immutable unified"),
    Case("inplace_managed", "in-place managed", None),
    Case("immutable_managed", "immutable managed", None),
    # Beyond the seed: its operations on device memory with kernels that keep enough bytes in
    # flight (kernels/gpu_bandwidth/gpu_bandwidth.cu, "the tuned kernels"), CUB's transform as
    # the reference, and STREAM's triad as a calibrator (CUDA C++ only).
    Case("inplace_tuned", "in-place global, tuned kernel", None),
    Case("immutable_tuned", "immutable global, tuned kernel", None),
    Case("cub_transform", "immutable global, CUB transform", None),
    Case("copy_tuned", "within GPU, copy kernel (tuned)", None),
    Case("triad_tuned", "triad $a = b + s c$, tuned kernel", None),
)
CASE_BY_NAME = {c.name: c for c in CASES}
GPU_CASES = tuple(c.name for c in CASES if c.on_gpu)
TUNED_CASES = ("inplace_tuned", "immutable_tuned", "cub_transform", "copy_tuned", "triad_tuned")
SEED_KERNEL_CASES = tuple(c for c in GPU_CASES if c not in TUNED_CASES)
# The 85% target's cases, each judged on the kernel declared for it before any run (the tuned
# one; never the faster of two picked by value), the seed's one-element kernel printed beside
# it; an archive from before the tuned kernels has only the seed's, which is then judged.
TARGET_CASES = {"copy": ("copy_tuned", "d2d_copy"), "in place": ("inplace_tuned", "inplace_global")}
# The vendor's own kernel for the same traffic: CUB's transform (the immutable add), printed beside
# the target's kernels and judged on nothing, so that a reader sees whether a miss is the memory's
# or our kernel's.
REFERENCE_CASE = "cub_transform"
# The cost of a launch, measured apart (an empty kernel, back to back): what a pass of a Python
# method pays on the host before its kernel runs, and what no bandwidth here includes.
LAUNCH_CASE = "empty_launch"
JAGGED_OPS = ("flat_inplace", "flat_immutable", "explode", "combine")
# The CUDA program's case each jagged operation is (the flat add: Table 2's add on the particles).
JAGGED_KERNEL_CASE = {"flat_inplace": "inplace_global", "flat_immutable": "immutable_global", "explode": "explode",
                      "combine": "combine"}
JAGGED_LABELS = {"flat_inplace": "flat add, in place", "flat_immutable": "flat add, immutable",
                 "explode": "explode", "combine": "combine"}

# Method ids of the configuration and the names the tables use.
GPU_METHODS = {"cuda": "CUDA C++", "cupy": "CuPy", "numba_cuda": "numba.cuda"}
CPU_METHODS = {"numba": "numba", "awkward": "awkward"}
# What each GPU method measures: CuPy has no explode/combine of its own (its
# jagged rows are numba.cuda's kernels on CuPy arrays).
GPU_METHOD_CASES = {"cuda": GPU_CASES, "cupy": SEED_KERNEL_CASES, "numba_cuda": ()}
GPU_METHOD_JAGGED = {"cuda": JAGGED_OPS, "cupy": (), "numba_cuda": JAGGED_OPS}
CPU_METHOD_JAGGED = {"numba": JAGGED_OPS, "awkward": ("flat_immutable", "explode", "combine")}


# ---- the case table of the CUDA program ------------------------------------------------------
# kernels/gpu_bandwidth/gpu_bandwidth.cu measures every case through one table (case_table); these
# are its rows, the one source of them: the build generates the program's rows from this table
# (cuda_rows, `python -m throughput.experiments.gpu_bandwidth.cases OUT`, run by
# kernels/gpu_bandwidth/CMakeLists.txt) and the program joins each with its implementation by name.
# Every Python method reads the table here (data.case_bytes_moved, data.added): the program is
# built only where an nvcc is found (spec.cuda_kernels), while the CPU methods, the numba.cuda
# kernels in the simulator and the numpy stand-in for CuPy count the same bytes without it.
# tests/kernels/test_gpu_bandwidth_cases.py reads the built program's `--list-cases` back against it.

LINK = ((1, "n", "value"),)  # a transfer: the bytes across the link, once
READ_WRITE = ((2, "n", "value"),)  # a copy or an add: read + write (no write-allocate traffic)


@dataclass(frozen=True)
class KernelCase:
    """One row of the CUDA program's case table."""

    name: str
    values: str  # the count a record's n gives: "n" (Table 2's arrays), "particles" or "pairs"
    # Bytes one pass moves: the sum of times x count x width; counts "n", "particles", "events",
    # "offsets" (events + 1) and "pairs"; width "value" (the value type's size) or "index" (8)
    bytes_moved: tuple[tuple[int, str, str], ...]
    adds: str  # the constant in every expected value: "none", "one" or "every_take" (each take's)
    clock: str  # "cuda_event" (device work) or "steady_clock" (the CPU's write or read)

    def listed(self) -> dict:
        """The row as `gpu_bandwidth_cuda --list-cases` prints it."""
        return {"record": "case", "name": self.name, "values": self.values,
                "bytes_moved": [{"times": t, "count": c, "width": w} for t, c, w in self.bytes_moved],
                "adds": self.adds, "clock": self.clock}


KERNEL_CASES = (
    KernelCase("h2d_pageable", "n", LINK, "none", "cuda_event"),
    KernelCase("h2d_pinned", "n", LINK, "none", "cuda_event"),
    KernelCase("d2h_pageable", "n", LINK, "none", "cuda_event"),
    KernelCase("d2h_pinned", "n", LINK, "none", "cuda_event"),
    KernelCase("mapped_cpu_write", "n", READ_WRITE, "none", "steady_clock"),
    KernelCase("mapped_cpu_read", "n", READ_WRITE, "none", "steady_clock"),
    KernelCase("managed_cpu_write", "n", READ_WRITE, "none", "steady_clock"),
    KernelCase("managed_cpu_read", "n", READ_WRITE, "none", "steady_clock"),
    KernelCase("d2d_copy", "n", READ_WRITE, "none", "cuda_event"),
    KernelCase("inplace_global", "n", READ_WRITE, "every_take", "cuda_event"),
    KernelCase("immutable_global", "n", READ_WRITE, "one", "cuda_event"),
    KernelCase("inplace_mapped", "n", READ_WRITE, "one", "cuda_event"),
    KernelCase("immutable_mapped", "n", READ_WRITE, "one", "cuda_event"),
    KernelCase("inplace_managed", "n", READ_WRITE, "one", "cuda_event"),
    KernelCase("immutable_managed", "n", READ_WRITE, "one", "cuda_event"),
    KernelCase("inplace_tuned", "n", READ_WRITE, "every_take", "cuda_event"),
    KernelCase("immutable_tuned", "n", READ_WRITE, "one", "cuda_event"),
    KernelCase("copy_tuned", "n", READ_WRITE, "none", "cuda_event"),
    KernelCase("triad_tuned", "n", ((3, "n", "value"),), "one", "cuda_event"),  # reads b and c, writes a
    KernelCase("cub_transform", "n", READ_WRITE, "one", "cuda_event"),
    KernelCase(LAUNCH_CASE, "n", (), "every_take", "cuda_event"),  # no bytes: a kernel counting its launches
    # writes the output; reads each event's offsets and value (once per event, cached)
    KernelCase("explode", "particles", ((1, "particles", "value"), (1, "events", "value"), (1, "events", "index")),
               "none", "cuda_event"),
    # reads two values and writes one per pair, plus offsets and pair counts per event
    KernelCase("combine", "pairs", ((3, "pairs", "value"), (4, "offsets", "index")), "none", "cuda_event"),
)
KERNEL_CASE = {c.name: c for c in KERNEL_CASES}


def cuda_rows() -> str:
    """KERNEL_CASES as the CUDA program's rows (kernels/gpu_bandwidth/gpu_bandwidth.cu includes them
    as gpu_bandwidth_cases.inc, generated at build time): one source for what each case moves,
    adds and is timed by; the program pairs each row with its implementation by name."""
    def row(case: KernelCase) -> str:
        terms = ", ".join(f'{{{times}, "{count}", "{width}"}}' for times, count, width in case.bytes_moved)
        return f'{{"{case.name}", "{case.values}", {{{terms}}}, Adds::{case.adds}, Clock::{case.clock}}},'
    return ("// Generated at build time from src/throughput/experiments/gpu_bandwidth/cases.py (KERNEL_CASES)\n"
            "// by `python -m throughput.experiments.gpu_bandwidth.cases OUT`: edit that table, not this file.\n"
            + "\n".join(row(case) for case in KERNEL_CASES) + "\n")


def write_cuda_rows(path: str) -> None:
    """Write cuda_rows() to `path` (always: the build runs this only when this file changed, and
    an output left older than it would have the build run it again every time)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(cuda_rows())


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 2:
        sys.exit("usage: python -m throughput.experiments.gpu_bandwidth.cases OUT (the CUDA program's case rows)")
    write_cuda_rows(sys.argv[1])
