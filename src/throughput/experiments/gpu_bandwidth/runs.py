"""The plan of runs, and measuring it: every run of the experiment and why one
cannot run here; the C++ and CUDA C++ programs through throughput.core.harness
(host_copy also under numactl: local against remote memory); the Python methods
in this process; the runs of a group interleaved (throughput.core.experiment), each
group stored, or reused, under the raw results folder."""
from __future__ import annotations

import inspect
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd

from ...core import experiment, harness, noise, provenance
from ...core.results import kernel_sha256, sources_sha256
from .analysis import rated_time, with_rates
from .cases import (CPU_METHOD_JAGGED, CPU_METHODS, CUDA_KERNEL, GPU_METHOD_CASES, GPU_METHOD_JAGGED, GPU_METHODS,
                    HOST_KERNEL, JAGGED_KERNEL_CASE, LAUNCH_CASE, NOT_MEASURED)
from .configuration import values_per_array
from .cpu_jagged import jagged_cpu
from .cupy_backend import CupyBackend, table2_python
from .data import jagged_counts, make_jagged
from .device import GpuStatus
from .numba_cuda import jagged_gpu_python, launch_python
from .spec import max_threads


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
                 warmup: int, min_sample_s: float = 0.0, retakes: harness.Retakes = harness.Retakes()) -> list[str]:
    """host_copy on the CPUs of one node with its memory on another, through numactl."""
    options = {"dtype": dtype, "n": n, "threads": threads, "reps": repetitions, "warmup": warmup,
               "min-sample-s": min_sample_s, **retakes.kernel_args()}
    return ["numactl", f"--cpunodebind={node_cpu}", f"--membind={node_memory}",
            str(harness.kernel_path(HOST_KERNEL)), *(part for key, value in options.items()
                                                     for part in (f"--{key}", str(value)))]


def run_numa(memory_node: int, params: dict[str, Any], dtype: str, samples: int = 1,
             min_sample_s: float = 0.0,
             retakes: harness.Retakes = harness.Retakes()) -> tuple[pd.DataFrame, dict[str, Any]]:
    threads = min(node_cpus(0), max_threads(params))
    n = values_per_array(params["cpu_array_mib"], dtype)
    argv = numa_command(0, memory_node, threads, n, dtype, samples, params["warmup"], min_sample_s, retakes)
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
    for method in params["gpu_methods"]:  # what one launch costs, apart from any bandwidth
        runs.append({"group": "launch", "method": GPU_METHODS[method], "case": LAUNCH_CASE,
                     "dtype": params["dtypes"][0], "threads": 1, "gpu_method": method})
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


def _cuda_run(run: dict[str, Any], params: dict[str, Any], retakes: harness.Retakes = harness.Retakes(),
              min_sample_s: float = 0.0):
    args = {"case": run["case"], "dtype": run["dtype"], "reps": params["repetitions"], "warmup": params["warmup"],
            "min-sample-s": min_sample_s, **retakes.kernel_args()}
    if run["group"] == "launch":
        args["n"] = 1
    elif run["group"] == "table2":
        args["n"] = values_per_array(params["gpu_array_mib"], run["dtype"])
    elif run["case"] in ("flat_inplace", "flat_immutable"):
        # the flat add on the particles of the jagged run: as many values
        particles = int(jagged_counts(params["gpu_events"], params["mean_particles"]).sum())
        args.update(case=JAGGED_KERNEL_CASE[run["case"]], n=max(1, particles))
    else:
        args.update(events=params["gpu_events"], **{"mean-particles": params["mean_particles"]})
    result = harness.run_kernel(CUDA_KERNEL, args)
    frame = result.timings.assign(case=run["case"])
    return frame, result.validation, result.build_info


def _measure(run: dict[str, Any], params: dict[str, Any], status: GpuStatus,
             settings: noise.Settings) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One round of `run` after its warm-up passes: the interleaving loop calls it once per round.
    The CPU cases take settings.samples_per_process samples, each repeating the pass until it
    lasts settings.min_sample_s; a GPU case one sample, its passes on device memory repeated back
    to back inside its CUDA events until they last as long (kernel-only time; a pass that needs
    the CPU first, on shared memory, one a sample). Every sample, CPU or GPU, is taken again
    while its process waited too long for a CPU (settings.sample_retakes: `run_delay_s`,
    `sample_retakes`)."""
    one = {**params, "repetitions": 1}  # the kernels' and methods' own repetitions: the loop's rounds are ours
    reps, warmup = 1, params["warmup"]
    samples, min_sample_s, retakes = settings.samples_per_process, settings.min_sample_s, settings.sample_retakes
    build_info, core = None, None
    group, method, case, dtype = run["group"], run["method"], run["case"], run["dtype"]
    if group == "numa":
        frame, validation = run_numa(int(case[-1]), one, dtype, samples, min_sample_s, retakes)
        build_info = harness.build_info(HOST_KERNEL)
    elif method == "C++":
        n, core = values_per_array(params["cpu_array_mib"], dtype), harness.single_core()
        result = harness.run_kernel(HOST_KERNEL, {"dtype": dtype, "n": n, "threads": 1, "reps": samples,
                                                  "warmup": warmup, "min-sample-s": min_sample_s,
                                                  **retakes.kernel_args()}, core=core)
        frame, validation, build_info = result.timings, result.validation, result.build_info
    elif method == "CUDA C++":
        frame, validation, build_info = _cuda_run(run, one, retakes, min_sample_s)
    else:  # a Python method: in a fresh process each round, as a kernel (its data and CUDA context made there)
        core = harness.single_core() if not run["gpu_method"] and run["threads"] == 1 else None
        frame, validation = harness.in_fresh_process(_python_method, run, params, settings, core=core)
    # passes_made: the adds an in-place case's checksum grew by (the CPU methods count their passes)
    frame = frame.assign(group=group, method=method, threads=run["threads"], checksum=validation["checksum"],
                         passes_made=validation.get("passes", adds_kept(case, frame)))
    if "event_s" not in frame:
        frame["event_s"] = float("nan")
    info = provenance.capture(params, cache_state="n/a (in-memory)", build_info=build_info, pinned_core=core)
    info["gpu"] = status.device if run["gpu_method"] else None
    return frame, info


def _python_method(run: dict[str, Any], params: dict[str, Any],
                   settings: noise.Settings) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One round of a Python method (CuPy, numba.cuda, numba or awkward), in the process it is
    called in: harness.in_fresh_process gives it one of its own."""
    reps, warmup = 1, params["warmup"]
    samples, min_sample_s, retakes = settings.samples_per_process, settings.min_sample_s, settings.sample_retakes
    group, method, case, dtype = run["group"], run["method"], run["case"], run["dtype"]
    if group == "launch":  # CuPy or numba.cuda
        return launch_python(method, dtype, CupyBackend(), reps, warmup, retakes, min_sample_s)
    if group == "table2":  # CuPy
        n = values_per_array(params["gpu_array_mib"], dtype)
        return table2_python(case, dtype, n, reps, warmup, CupyBackend(), retakes, min_sample_s)
    if method == "numba.cuda":
        data = make_jagged(params["gpu_events"], params["mean_particles"], dtype)
        return jagged_gpu_python(case, data, reps, warmup, CupyBackend(), retakes=retakes,
                                 min_sample_s=min_sample_s)
    data = make_jagged(params["events"], params["mean_particles"], dtype)
    key = next(k for k, v in CPU_METHODS.items() if v == method)
    return jagged_cpu(key, case, data, run["threads"], samples, warmup, min_sample_s, retakes)


def adds_kept(case: str, frame: pd.DataFrame) -> int:
    """The adds a GPU case's values keep (what analysis.agreed_checksum takes off an in-place
    add's): on shared memory the CPU rewrites the input before every take, so one; on device
    memory every take's, warm-up and dropped ones included."""
    if case in ("inplace_managed", "inplace_mapped"):
        return 1
    if "loops" in frame:  # calibrated samples: every pass of every take
        return harness.passes_made(frame.assign(loops=frame["loops"].fillna(1)))
    return len(frame) + int(frame["sample_retakes"].fillna(0).sum()) if "sample_retakes" in frame else len(frame)


def skip_reason(run: dict[str, Any], status: GpuStatus) -> str | None:
    if run["group"] == "numa":
        return numa_reason()
    if run["gpu_method"] and status.reason(run["gpu_method"]):
        return status.reason(run["gpu_method"])
    if run["case"] == "cub_transform" and not (status.device or {}).get("cub_transform", False):
        return "CUDA C++ built without CUB's DeviceTransform (CCCL 2.8 or later)"
    return None


def groups(params: dict[str, Any], status: GpuStatus) -> tuple[list[experiment.Group], pd.DataFrame]:
    """The runs that can run here, one group per part, element type and side (CPU
    or GPU: their data sets differ, and only one is kept in memory at a time),
    measured interleaved; and the runs not measured, with why."""
    grouped: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    skipped = []
    for run in plan(params):
        reason = skip_reason(run, status)
        if reason:
            skipped.append({**run, "reason": f"{NOT_MEASURED}: {reason}"})
            continue
        side = "GPU" if run["gpu_method"] else "CPU"
        grouped.setdefault((run["group"], run["dtype"], side), []).append({**run, "name": run_name(run)})
    return ([experiment.Group(f"{group} {dtype} ({side})", runs) for (group, dtype, side), runs in grouped.items()],
            pd.DataFrame(skipped, columns=[*RUN_KEYS, "reason"]))


# The modules that measure the Python methods (numpy, numba, CuPy, awkward) in this process.
PYTHON_MEASURING = tuple(inspect.getfile(f) for f in (jagged_cpu, CupyBackend, make_jagged, jagged_gpu_python, harness))


def measure_runs(params: dict[str, Any], raw_dir: str | Path, status: GpuStatus,
                 noise_settings: noise.Settings | None = None,
                 progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run (or reuse, when stored with the same parameters on this machine) every
    run that can run here, each group of `groups` interleaved pass by pass.
    Returns the measured rows with rates, and the runs not measured with why."""
    versions = provenance.package_versions()

    def key_of(run: dict[str, Any]) -> dict[str, Any]:
        key = {**params, **run, "versions": versions}
        if run["method"] in ("C++", "CUDA C++"):
            kernel = HOST_KERNEL if run["method"] == "C++" else CUDA_KERNEL
            key["binary_sha256"] = kernel_sha256(harness.kernel_path(kernel))
        else:  # measured in a fresh Python process: by these modules and the shared timing loop
            key["source_sha256"] = sources_sha256(*PYTHON_MEASURING)
        if run["gpu_method"]:
            key["device"] = {k: v for k, v in (status.device or {}).items() if k != "free_bytes"}
        return key

    measured, skipped = groups(params, status)
    if not measured:
        return pd.DataFrame(), skipped
    settings = noise_settings or noise.Settings()
    frame = experiment.measure_interleaved(
        measured, raw_dir, key_of, lambda run, _round: _measure(run, params, status, settings),
        params["repetitions"], settings, desc="gpu bandwidth", progress=progress,
        quantity=rated_time, per_round="min")  # judged as the tables print: each process's best
    return with_rates(frame, (status.device or {}).get("nominal_gb_s")), skipped
