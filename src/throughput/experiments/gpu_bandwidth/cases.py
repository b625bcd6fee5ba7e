"""What the experiment measures: Table 2's cases and the jagged operations, the
methods (their configuration ids and the names the tables use), the constants
every method shares, and seed 000's figures that ours stand beside."""
from __future__ import annotations

from dataclasses import dataclass

from ... import seeds
from .. import SPECS


MIB = 2**20
CONSTANT = 1.0
INIT_PERIOD = 1000  # values are i % 1000: small integers, exact in float32 and float64
DTYPES = ("float32", "float64")
(CUDA_KERNEL,) = SPECS["gpu_bandwidth"].cuda_kernels
HOST_KERNEL = "host_copy"
NO_GPU = "no GPU on this host"
NOT_MEASURED = "not measured"

# ---- seed 000, Table 2: the figures live in throughput.seeds (with where each comes from) ------
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
