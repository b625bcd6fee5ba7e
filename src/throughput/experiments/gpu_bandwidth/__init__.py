"""GPU memory bandwidth, explode and combine (seed 000, Table 2).

Table 2 of seed 000 measured, on six GPUs of 2017, how fast values move
between host memory ("DRAM") and a GPU, through "unified" memory (by its
caption "also known as pinned": host memory mapped into the GPU, zero-copy),
within the GPU, and how fast a constant is added to them in place and into a
new array on global and on unified memory. We measure the same cases, each
for float32 and float64, with the seed's unified memory as it defined it and
today's managed memory (cudaMallocManaged) beside it, three ways where a GPU
exists:

- "CUDA C++": kernels/gpu_bandwidth/gpu_bandwidth.cu (nvcc, sm_80 and sm_90),
  timed with CUDA events;
- "CuPy": the same cases with CuPy arrays and CuPy's own operations;
- "numba.cuda": the add, explode and combine kernels of numba_cuda below (the
  ones the tests run in numba's CUDA simulator) launched on CuPy arrays.

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

Modules, one role each. The names the notebook, the tests and throughput.configuration
use are imported here from them (all but the spec's on first use:
throughput.setup.spec.load_later), so that
`from throughput.experiments import gpu_bandwidth as gb; gb.<name>` works:

- spec: what Snakemake and throughput.configuration take, cheap to import:
  check_config (sizes against this machine), max_threads, whether a driver is present;

- cases: what is measured: Table 2's cases, the jagged operations, the methods,
  the shared constants, the seed's figures, and the CUDA program's case table
  (bytes per pass, expected adds, clock; its `--list-cases` is checked against it);
- configuration: sizes of the runs; check_device_fit (against the GPU's free memory);
- device: is there a GPU, which, and why each GPU method cannot run here;
- data: initial values, the jagged events, expected outputs, exact validation,
  bytes moved;
- cpu_jagged: explode/combine and the flat add on the CPU (numba, awkward);
- cupy_backend: CuPy and its numpy stand-in (arrays, CUDA-event timing), and
  Table 2's GPU cases with CuPy;
- numba_cuda: the numba.cuda kernels and the jagged operations with them;
- runs: the plan of runs, why one cannot run here, running the C++/CUDA programs
  (and host_copy under numactl), measuring and storing or reusing each run;
- analysis: rates, agreement of methods, medians, the jagged ratios, the target,
  an archived machine's runs summarised as this machine's, and the ratios the ledger
  of claims decides seed 000's GPU claims by (claim_ratios);
- report: Table 2 against the seed, Table 2 on every machine shown with a GPU, each
  archived GPU machine in full (its runs, explode/combine, its own verdicts),
  the LaTeX tables and the states and numbers the paper's sentences word (paper_macros);
- entry: the notebook's calls, the same in every experiment: measure(session)
  (the GPU found, its runs, checked, as a Measured),
  figures(measured, session), tables(measured, session) and macros(measured, session).

Nothing here imports ROOT, Snakemake or papermill, and importing it never
imports numba.cuda.
"""
from __future__ import annotations

from ...setup.spec import load_later, submodule_first
from .spec import check_config, driver_present, max_threads


def __getattr__(_name: str):
    if (submodule := submodule_first(__name__, _name)) is not None:
        return submodule  # imported alone, without the names below
    from .analysis import (CLAIM_RATIOS, archived_summary, check_agreement, claim_ratios, jagged_table, launch_table,
                           summary, targets, with_rates)
    from .cases import (CASES, CPU_METHOD_JAGGED, CUDA_KERNEL, DTYPES, GPU_CASES, GPU_METHOD_JAGGED, GPU_METHODS,
                        HOST_KERNEL, JAGGED_KERNEL_CASE, JAGGED_LABELS, JAGGED_OPS, KERNEL_CASE, KERNEL_CASES, NO_GPU,
                        LAUNCH_CASE, NOT_MEASURED, SEED_ARRAY_MIB, SEED_GPU_SHORT, SEED_GPUS, SEED_KERNEL_CASES,
                        SEED_TABLE2, TARGET_CASES, TARGET_FRACTION, TUNED_CASES)
    from .configuration import check_device_fit
    from .cpu_jagged import awkward_op, combine_cpu, explode_cpu, jagged_cpu
    from .cupy_backend import NumpyBackend, table2_python
    from .data import (Jagged, case_bytes_moved, case_shape, exact_checksum, from_counts, initial, jagged_bytes_moved,
                       jagged_counts, jagged_shape, jagged_values, make_jagged, reference, validate_output)
    from .device import EXIT_NO_DEVICE, GpuStatus, detect_gpu, l2_fit, listed_cases, nominal_gb_s, query_cuda_device
    from .numba_cuda import combine_gpu, cuda_kernels, jagged_gpu_python, launch, launch_python
    from .report import (archived_detail_tex, archived_jagged_tex, archived_macros, claim_macros, device_macros,
                         gpu_detail_tex, launch_tex,
                         jagged_macros, jagged_tex, machines_tex, numa_macros, paper_macros, table2_rows, table2_tex,
                         target_macros)
    from .entry import Measured, figures, macros, measure, tables
    from .runs import RUN_KEYS, groups, measure_runs, node_cpus, numa_command, numa_reason, plan, run_name
    return load_later(globals(), locals(), _name)
