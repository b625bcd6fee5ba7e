"""GPU memory bandwidth, explode and combine (seed 000, Table 2), tested without a GPU.

The CUDA program must compile here and say "no usable CUDA device" (exit 4),
which becomes "not measured: no GPU on this host", never a number. The CPU
rows, the jagged operations, the GPU paths' logic (with numpy standing in for
device memory), the tables and the targets are checked here; the kernels
themselves run in numba's CUDA simulator in test_gpu_bandwidth_cudasim.py.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import awkward as ak
import numpy as np
import pandas as pd
import pytest

from throughput import configuration
from throughput.setup import config, kernel_sources
from throughput.core import harness, noise
from throughput.report import noise_sentences, paper
from throughput.experiments import gpu_bandwidth as gb
from throughput.experiments.gpu_bandwidth import cpu_jagged as gb_cpu
from throughput.experiments.gpu_bandwidth import analysis as gb_analysis
from throughput.experiments.gpu_bandwidth import runs as gb_runs  # numa_reason looks up provenance and shutil there

from conftest import REPO, loops_follow_the_calibration_rule

N = 10001
REPS, WARMUP = 2, 1
TINY = {"gpu_array_mib": 1, "cpu_array_mib": 1, "events": 300, "gpu_events": 300, "mean_particles": 3,
        "dtypes": ["float32", "float64"], "gpu_methods": ["cuda", "cupy", "numba_cuda"],
        "cpu_methods": ["numba", "awkward"], "max_threads": 2, "numa": True, "repetitions": REPS,
        "warmup": WARMUP}
# one re-measure (default two): the path runs, at two thirds of the rounds a noisy host would add
TINY_NOISE = noise.Settings(samples_per_process=2, min_sample_s=0.005, max_remeasures=1)
NO_GPU_STATUS = gb.GpuStatus(device=None, reasons={m: gb.NO_GPU for m in gb.GPU_METHODS})
FAKE_DEVICE = {"name": "Fake H100", "compute_capability": "9.0", "nominal_gb_s": 3352.0, "l2_bytes": 50 * 2**20,
               "free_bytes": 80 * 10**9, "total_bytes": 80 * 10**9}


def awkward_jagged(lists, dtype="float64") -> gb.Jagged:
    """A Jagged from an awkward array of lists (its offsets and content)."""
    array = ak.Array(lists)
    layout = ak.to_layout(array)
    offsets = np.asarray(layout.offsets) if hasattr(layout, "offsets") else None
    counts = ak.to_numpy(ak.num(array)).astype(np.int64)
    values = ak.to_numpy(ak.flatten(array)).astype(dtype)
    data = gb.from_counts(counts, dtype, values=values,
                          event_values=np.arange(len(counts), dtype=dtype) * 10 + 1)
    if offsets is not None:
        assert np.array_equal(offsets - offsets[0], data.offsets)
    return data


JAGGED_CASES = {
    "empty in the middle": [[1, 2, 3], [], [4, 5], [6]],
    "empty first and last": [[], [7, 8, 9, 10], [11], []],
    "all empty": [[], [], []],
    "one long event": [list(range(1, 13))],
    "single particles": [[5], [6], [7]],
}


# --- the CUDA program: built here, and honest about the missing GPU ---------------------------

def test_nvcc_is_found_and_the_cuda_program_is_built_for_sm80_and_sm90():
    assert kernel_sources.find_nvcc() is not None, "no nvcc: install envs/requirements.txt (nvidia-cuda-nvcc)"
    path = harness.kernels_dir() / gb.CUDA_KERNEL
    assert path.is_file(), f"{path} missing: kernels/build.sh did not build the CUDA program"
    info = harness.build_info(gb.CUDA_KERNEL)
    assert info["kernel"] == gb.CUDA_KERNEL and "nvcc" in info["compiler"]
    text = path.read_bytes()
    # Machine code for both architectures sits in the embedded fat binary.
    for arch in (b"-arch sm_80", b"-arch sm_90"):
        assert arch in text, f"{arch.decode()} code missing from {path}"


@pytest.mark.skipif(gb.driver_present(), reason="an NVIDIA driver is present")
@pytest.mark.parametrize("case", ["device", *gb.GPU_CASES, gb.LAUNCH_CASE, "explode", "combine"])
def test_cuda_program_without_gpu_exits_4_with_the_reason(case):
    """Every case of Table 2 is one the program knows (an unknown one is refused before it
    looks for a GPU: see below), and without a GPU it gives no number."""
    path = harness.kernels_dir() / gb.CUDA_KERNEL
    proc = subprocess.run([str(path), "--case", case, "--n", "1000"], capture_output=True, text=True)
    assert proc.returncode == gb.EXIT_NO_DEVICE
    assert "no usable CUDA device: no GPU on this host" in proc.stderr
    assert proc.stdout == "", "no record, and so no number, without a GPU"


@pytest.mark.parametrize("args, culprit", [
    ({"case": "inplace", "n": 10}, "--case"),
    ({"case": "inplace_global", "dtype": "float16"}, "--dtype"),
    ({"case": "inplace_global", "n": 0}, "--n"),
    ({"case": "inplace_global", "constant": 0.5}, "--constant"),
    ({"case": "explode", "typo": 1}, "--typo"),
])
def test_cuda_program_rejects_bad_options_before_looking_for_a_gpu(args, culprit):
    with pytest.raises(harness.KernelError, match=culprit):
        harness.run_kernel(gb.CUDA_KERNEL, args)


@pytest.mark.skipif(gb.driver_present(), reason="an NVIDIA driver is present")
def test_cuda_program_takes_the_retake_rule_and_still_gives_no_number_without_a_gpu():
    """The run delay rule is an option like any other (a bad one is refused before the GPU is
    looked for); without a GPU the program still exits 4 with no record."""
    path = harness.kernels_dir() / gb.CUDA_KERNEL
    rule = [part for k, v in harness.Retakes(0.02, 3).kernel_args().items() for part in (f"--{k}", str(v))]
    proc = subprocess.run([str(path), "--case", "inplace_global", *rule], capture_output=True, text=True)
    assert proc.returncode == gb.EXIT_NO_DEVICE and proc.stdout == ""
    with pytest.raises(harness.KernelError, match="--max-run-delay-share"):
        harness.run_kernel(gb.CUDA_KERNEL, {"case": "inplace_global", "max-run-delay-share": 1})


@pytest.mark.skipif(gb.driver_present(), reason="an NVIDIA driver is present")
def test_detect_gpu_reports_no_gpu_for_every_method():
    device, reason = gb.query_cuda_device()
    assert device is None and reason == gb.NO_GPU
    status = gb.detect_gpu(["cuda", "cupy", "numba_cuda"])
    assert not status.available and status.device is None
    assert status.reasons["cuda"] == gb.NO_GPU and status.reasons["cupy"] == gb.NO_GPU
    assert status.reasons["numba_cuda"] is not None
    assert status.summary().startswith(gb.NO_GPU)


def test_detect_gpu_says_when_the_cuda_program_is_not_built(monkeypatch, tmp_path):
    monkeypatch.setenv("THROUGHPUT_KERNELS_DIR", str(tmp_path))
    device, reason = gb.query_cuda_device()
    assert device is None and "CUDA kernels not built" in reason
    with pytest.raises(ValueError, match="unknown GPU method"):
        gb.detect_gpu(["opencl"])


def test_cmake_skips_cuda_with_a_clear_message_without_nvcc(tmp_path):
    """kernels/gpu_bandwidth/CMakeLists.txt on its own, with no nvcc anywhere."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.20)
project(probe LANGUAGES CXX)
find_package(OpenMP REQUIRED)
add_library(bench_common INTERFACE)
target_include_directories(bench_common INTERFACE {REPO}/kernels/common)
function(throughput_kernel target source level)
  add_executable(${{target}} ${{source}})
  target_link_libraries(${{target}} PRIVATE bench_common OpenMP::OpenMP_CXX)
endfunction()
add_subdirectory({REPO}/kernels/gpu_bandwidth gpu_bandwidth)
""")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(["cmake", "-S", str(project), "-B", str(tmp_path / "build")], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "CUDA kernels skipped: no nvcc found" in proc.stdout


def test_build_script_names_the_missing_nvcc():
    text = (REPO / "kernels/build.sh").read_text()
    assert "CUDA kernels skipped: no nvcc found" in text and "-DCMAKE_CUDA_COMPILER" in text


# --- host_copy: the "DRAM to CPU" row --------------------------------------------------------

@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", gb.DTYPES)
def test_host_copy_validates(dtype, threads):
    run = harness.run_kernel(gb.HOST_KERNEL, {"dtype": dtype, "n": N, "threads": threads, "reps": REPS,
                                              "warmup": WARMUP})
    assert run.validation["ok"] is True
    assert run.validation["checksum"] == float(gb.initial(N, "float64").sum())
    t = run.timings
    assert len(t) == REPS + WARMUP and int(t["warmup"].sum()) == WARMUP
    assert set(t["bytes_moved"]) == {2 * N * np.dtype(dtype).itemsize}
    assert set(t["dtype"]) == {dtype} and set(t["threads"]) == {threads}


def test_host_copy_samples_repeat_the_copy_to_their_minimum_length():
    run = harness.run_kernel(gb.HOST_KERNEL, {"n": N, "reps": 3, "warmup": 1, "min-sample-s": 0.01})
    t = run.timings
    assert run.validation["ok"] is True and (t.loc[~t["warmup"], "loops"] > 1).any()
    assert loops_follow_the_calibration_rule(t, 1, 0.01), t[["loops", "wall_s"]].to_dict("list")
    # a row rates one copy: its time per copy (analysis.rated_time), its bytes those of one copy
    assert set(t["bytes_moved"]) == {2 * N * 8}
    assert (gb_analysis.rated_time(t) == t["wall_s"] / t["loops"]).all()
    with pytest.raises(harness.KernelError, match="--min-sample-s must lie in"):
        harness.run_kernel(gb.HOST_KERNEL, {"n": N, "min-sample-s": -1})


def test_host_copy_fails_on_a_wrong_value_and_bad_dtype():
    with pytest.raises(harness.KernelError, match="validation failed"):
        harness.run_kernel(gb.HOST_KERNEL, {"n": N, "corrupt-for-test": 1})
    with pytest.raises(harness.KernelError, match="--dtype"):
        harness.run_kernel(gb.HOST_KERNEL, {"dtype": "int8"})


# --- jagged data: the same events in C++ and Python --------------------------------------------

def test_jagged_counts_match_the_cpp_generator(tmp_path):
    source = tmp_path / "probe.cpp"
    source.write_text('#include <cstdio>\n#include "jagged.hpp"\nint main() {\n'
                      '  for (long long e = 0; e < 2000; ++e) std::printf("%lld\\n", jagged::count(e, 4));\n'
                      '  std::printf("%lld\\n", jagged::offsets(2000, 4).back());\n}\n')
    subprocess.run(["g++", "-std=c++17", "-O1", f"-I{REPO}/kernels/gpu_bandwidth", str(source), "-o",
                    str(tmp_path / "probe")], check=True)
    printed = [int(v) for v in subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True,
                                              check=True).stdout.split()]
    counts = gb.jagged_counts(2000, 4)
    assert printed[:-1] == counts.tolist()
    assert printed[-1] == gb.make_jagged(2000, 4, "float32").particles
    assert counts.min() == 0 and counts.max() == 8, "empty events and the full range are part of the data"


@pytest.mark.parametrize("mean", [0, 1, 4])
def test_make_jagged_structure(mean):
    data = gb.make_jagged(500, mean, "float32")
    counts = np.diff(data.offsets)
    assert data.offsets[0] == 0 and (counts >= 0).all() and counts.max(initial=0) <= 2 * mean
    assert data.pairs == int((counts * (counts - 1) // 2).sum())
    assert data.values.dtype == np.float32 and data.values.size == data.particles
    assert np.array_equal(data.values, np.arange(data.particles) % 1000)


@pytest.mark.parametrize("op", gb.JAGGED_OPS)
@pytest.mark.parametrize("name", list(JAGGED_CASES))
def test_reference_matches_awkward_and_the_exact_checksum(name, op):
    data = awkward_jagged(JAGGED_CASES[name])
    array = ak.Array(JAGGED_CASES[name])
    if op == "explode":
        expected = ak.flatten(ak.broadcast_arrays(data.event_values, array)[0])
    elif op == "combine":
        pairs = ak.combinations(array, 2)
        expected = ak.flatten(pairs["0"] + pairs["1"])
    elif op == "flat_immutable":
        expected = ak.flatten(array) + 1
    else:
        expected = ak.flatten(array) + 3
    got = gb.reference(op, data, passes=3)
    assert np.array_equal(got, ak.to_numpy(expected).astype(np.float64))
    assert gb.exact_checksum(op, data, passes=3) == float(got.sum())


# --- CPU explode/combine on awkward-built jagged arrays --------------------------------------

@pytest.mark.parametrize("dtype", gb.DTYPES)
@pytest.mark.parametrize("name", list(JAGGED_CASES))
def test_numba_explode_and_combine_on_awkward_arrays(name, dtype):
    array = ak.values_astype(ak.Array(JAGGED_CASES[name]), dtype)
    data = awkward_jagged(JAGGED_CASES[name], dtype)

    out = np.full(data.particles, -1, dtype)
    gb.explode_cpu(data.offsets, data.event_values, out)
    assert np.array_equal(out, ak.to_numpy(ak.flatten(ak.broadcast_arrays(data.event_values, array)[0])))

    pairs = ak.combinations(array, 2)
    out = np.full(data.pairs, -1, dtype)
    pair_offsets = np.full(data.events + 1, -7, np.int64)
    gb.combine_cpu(data.offsets, data.values, pair_offsets, out)
    assert np.array_equal(out, ak.to_numpy(ak.flatten(pairs["0"] + pairs["1"])))
    assert np.array_equal(pair_offsets, np.concatenate([[0], np.cumsum(ak.to_numpy(ak.num(pairs)))]))


@pytest.mark.parametrize("name", list(JAGGED_CASES))
def test_awkward_ops_match_the_reference(name):
    data = awkward_jagged(JAGGED_CASES[name])
    array = gb_cpu._awkward_array(data)
    for op in gb.CPU_METHOD_JAGGED["awkward"]:
        got = gb.awkward_op(op, array, data.event_values, np.float64(1))
        assert np.array_equal(got, gb.reference(op, data, passes=1)), op
    with pytest.raises(ValueError, match="awkward has no"):
        gb.awkward_op("flat_inplace", array, data.event_values, 1.0)


@pytest.mark.parametrize("method, threads", [("numba", 1), ("numba", 2), ("awkward", 1)])
@pytest.mark.parametrize("dtype", gb.DTYPES)
def test_jagged_cpu_runs_validate(method, threads, dtype):
    data = gb.make_jagged(400, 3, dtype)
    for op in gb.CPU_METHOD_JAGGED[method]:
        frame, validation = gb.jagged_cpu(method, op, data, threads, REPS, WARMUP)
        assert validation["ok"] and validation["checksum"] == gb.exact_checksum(op, data, REPS + WARMUP)
        assert len(frame) == REPS + WARMUP and int(frame["warmup"].sum()) == WARMUP
        assert set(frame["n"]) == {data.pairs if op == "combine" else data.particles}
        assert (frame["wall_s"] > 0).all()


@pytest.mark.parametrize("method", ["numba", "awkward"])
def test_jagged_cpu_samples_repeat_the_pass_and_count_every_pass(method):
    # an in-place add adds once per pass: the exact check holds only if every pass is counted
    # (a minimum of 50 ms: a pass of 400 events takes well under a millisecond, and stays below
    # 45 ms on a loaded host, where 5 ms once failed to repeat awkward's)
    data = gb.make_jagged(400, 3, "float64")
    for op in gb.CPU_METHOD_JAGGED[method]:
        frame, validation = gb.jagged_cpu(method, op, data, 1, 3, 1, min_sample_s=0.05)
        timed = frame[~frame["warmup"]]
        assert (timed["loops"] > 1).any() and loops_follow_the_calibration_rule(frame, 1, 0.05), op
        assert validation["checksum"] == gb.exact_checksum(op, data, int(frame["loops"].sum())), op


def test_validate_output_fails_on_one_wrong_value():
    expected = np.arange(10.0)
    got = expected.copy()
    got[3] += 0.5
    with pytest.raises(AssertionError, match="1 of 10 values wrong"):
        gb.validate_output(got, expected, "probe")
    with pytest.raises(AssertionError, match="expected 10"):
        gb.validate_output(expected[:9], expected, "probe")


# --- the GPU paths' logic, with numpy standing in for the device -----------------------------

def test_the_array_library_runs_every_seed_case_of_the_cuda_table_by_its_name():
    # one key for each case: the CUDA program's table names the cases the array library dispatches on
    from throughput.experiments.gpu_bandwidth.cupy_backend import CASE_PASSES

    assert tuple(CASE_PASSES) == gb.SEED_KERNEL_CASES


@pytest.mark.parametrize("dtype", gb.DTYPES)
@pytest.mark.parametrize("case", gb.SEED_KERNEL_CASES)
def test_table2_python_logic(case, dtype):
    frame, validation = gb.table2_python(case, dtype, N, REPS, WARMUP, gb.NumpyBackend())
    passes = REPS + WARMUP
    init = gb.initial(N, "float64")
    added = {"inplace_global": passes, "immutable_global": 1, "inplace_managed": 1, "immutable_managed": 1,
             "inplace_mapped": 1, "immutable_mapped": 1}
    assert validation["checksum"] == float(init.sum() + N * added.get(case, 0))
    assert len(frame) == passes and int(frame["warmup"].sum()) == WARMUP
    size = np.dtype(dtype).itemsize
    assert set(frame["bytes_moved"]) == {N * size if case.startswith(("h2d", "d2h")) else 2 * N * size}


@pytest.mark.parametrize("case", ["inplace_global", "inplace_managed", "d2h_pinned", "managed_cpu_read"])
def test_table2_python_records_each_pass_run_delay_and_retakes_a_disturbed_one(case, monkeypatch):
    """Every pass records its run delay and retakes; a pass that waited too long for a CPU is
    taken again, its setup done afresh, at most as often as the rule allows (a warm-up never);
    the in-place add on device memory counts every take, the shared one adds once per take."""
    frame, validation = gb.table2_python(case, "float64", N, REPS, WARMUP, gb.NumpyBackend(),
                                         harness.Retakes(0.02, 3))
    assert frame["run_delay_s"].ge(0).all() and frame["sample_retakes"].between(0, 3).all()
    # no rule (max share 0): nothing is taken again, the run delay still recorded
    frame, _ = gb.table2_python(case, "float64", N, REPS, WARMUP, gb.NumpyBackend(), harness.Retakes(0, 3))
    assert frame["sample_retakes"].eq(0).all() and frame["run_delay_s"].ge(0).all()
    # a process that waits a second for a CPU around every take: each measured pass retaken twice
    monkeypatch.setattr(harness, "run_delay_since", lambda before: 1.0)
    frame, validation = gb.table2_python(case, "float64", N, REPS, WARMUP, gb.NumpyBackend(),
                                         harness.Retakes(0.02, 2))
    assert list(frame["sample_retakes"]) == [0] * WARMUP + [2] * REPS
    added = WARMUP + 3 * REPS if case == "inplace_global" else (1 if case == "inplace_managed" else 0)
    assert validation["checksum"] == float(gb.initial(N, "float64").sum() + N * added)
    assert gb_runs.adds_kept(case, frame) == (added if "inplace" in case else len(frame) + 2 * REPS)


def test_the_method_section_gives_the_gpu_passes_run_delay_beside_the_calibrated_cpu_samples():
    """The CPU cases calibrate their samples, a GPU case times one pass: the sentence says which
    are not repeated, and judges every sample's run delay, GPU passes included."""
    settings = noise.Settings(min_sample_s=0.1, max_run_delay_share=0.02, max_sample_retakes=3)
    rows = pd.DataFrame({"run": ["cpu_a", "cpu_b", "gpu_a", "gpu_b"], "loops": [10, 12, None, None],
                         "threads": 1, "wall_s": [0.2, 0.2, 0.01, 0.01], "run_delay_s": [0.0, 0.0, 0.0, 0.001],
                         "sample_retakes": [0, 0, 0, 3]})
    facts = noise_sentences.samples(rows, settings)
    assert (facts["MaxLoops"], facts["SampleMedian"], facts["Uncalibrated"], facts["UncalibratedState"]) == \
        (12, 0.2, 2, "some")
    assert facts["DelayMax"] == pytest.approx(100 * 0.001 / 0.01) and facts["DelayWorst"] == "gpu_b"
    assert (facts["SamplesRetaken"], facts["Retaking"]) == (1, 4)


class DroppingBackend(gb.NumpyBackend):
    """A transfer that loses one value: validation must catch it."""

    def to_device(self, device, host):
        np.copyto(device, host)
        device[-1] = 12345


def test_the_seeds_unified_rows_are_pinned_mapped_memory_and_managed_stands_beside_them():
    """Seed 000 defines "unified" as "also known as pinned": its rows stand beside the mapped
    (zero-copy) cases; managed memory is measured too, under its own name, beside no seed row."""
    seed_rows = {c.seed_row: c.name for c in gb.CASES if c.seed_row and "unified" in c.seed_row}
    assert seed_rows == {"CPU write unified": "mapped_cpu_write", "CPU read unified": "mapped_cpu_read",
                         "in-place unified": "inplace_mapped", "immutable unified": "immutable_mapped"}
    managed = [c for c in gb.CASES if "managed" in c.name]
    assert len(managed) == 4 and all(c.seed_row is None and "managed" in c.label for c in managed)
    assert set(seed_rows) | {"DRAM to CPU", "DRAM to GPU", "GPU to DRAM", "within GPU", "in-place global",
                             "immutable global"} == set(gb.SEED_TABLE2)
    with pytest.raises(ValueError, match="unknown shared memory 'pinned'"):
        gb.NumpyBackend().shared_empty(4, "float32", "pinned")


def test_table2_python_fails_on_a_lost_value():
    with pytest.raises(AssertionError, match="validation failed"):
        gb.table2_python("h2d_pinned", "float32", N, 1, 0, DroppingBackend())
    with pytest.raises(ValueError, match="unknown Table 2 case"):
        gb.table2_python("h2d", "float32", N, 1, 0, gb.NumpyBackend())


# --- plan, measure and the paper's tables without a GPU --------------------------------------

def test_plan_covers_every_case_method_and_type():
    runs = gb.plan(TINY)
    gpu = {(r["method"], r["case"], r["dtype"]) for r in runs if r["gpu_method"]}
    for case in gb.GPU_CASES:
        for dtype in gb.DTYPES:  # the tuned kernels and CUB's are CUDA C++'s alone
            assert ("CUDA C++", case, dtype) in gpu
            assert (("CuPy", case, dtype) in gpu) is (case not in gb.TUNED_CASES)
    # what a launch costs, once per GPU method (in the first value type: it moves none)
    assert {(r["method"], r["dtype"]) for r in runs if r["group"] == "launch"} == {
        (method, TINY["dtypes"][0]) for method in gb.GPU_METHODS.values()}
    for op in gb.JAGGED_OPS:
        assert ("numba.cuda", op, "float64") in gpu and ("CUDA C++", op, "float32") in gpu
    assert {(r["case"], r["threads"]) for r in runs if r["method"] == "numba"} >= {("explode", 1), ("combine", 2)}
    assert len({gb.run_name(r) for r in runs}) == len(runs), "run names must be unique"


@pytest.fixture(scope="module")
def measured_without_gpu(tmp_path_factory):
    raw = tmp_path_factory.mktemp("raw")
    frame, skipped = gb.measure_runs(dict(TINY), raw, NO_GPU_STATUS, TINY_NOISE, progress=False)
    return frame, skipped, raw


def test_measure_without_gpu_fills_cpu_rows_and_skips_gpu_rows(measured_without_gpu):
    frame, skipped, raw = measured_without_gpu
    assert not frame["method"].isin(list(gb.GPU_METHODS.values())).any(), "no GPU number without a GPU"
    assert set(frame["method"]) == {"C++", "numba", "awkward"}
    gpu_skipped = skipped[skipped["gpu_method"].notna()]
    assert len(gpu_skipped) == sum(1 for r in gb.plan(TINY) if r["gpu_method"])
    assert set(gpu_skipped["reason"]) == {"not measured: no GPU on this host"}
    if gb.numa_reason() == "one NUMA node":
        assert set(skipped[skipped["group"] == "numa"]["reason"]) == {"not measured: one NUMA node"}
    gb.check_agreement(frame)
    assert len(list(raw.glob("*.parquet"))) == frame.groupby(["group", "method", "case", "dtype", "threads"]).ngroups
    # measured interleaved: one group per part, element type and side, every run once per round
    groups, _ = gb.groups(dict(TINY), NO_GPU_STATUS)
    assert {g.name for g in groups} >= {"table2 float32 (CPU)", "jagged float64 (CPU)"}
    measured = frame[~frame["warmup"]]
    # (a group whose interval stayed wide got REPS more rounds, the earlier kept: noise.Settings)
    rounds = measured.groupby("run")["round"].apply(lambda r: sorted(set(r)))
    assert all(r == list(range(len(r))) and len(r) % REPS == 0 for r in rounds)
    # each CPU run takes its samples in every round, each calibrated to the minimum length
    samples = measured.groupby(["run", "round"]).size()
    assert (samples == TINY_NOISE.samples_per_process).all() and (measured["loops"] >= 1).all()
    assert measured["others_cores"].notna().all() and "noisy" in measured


def test_measure_reuses_stored_runs(measured_without_gpu):
    frame, _, raw = measured_without_gpu
    before = {p.name: p.stat().st_mtime_ns for p in raw.glob("*.parquet")}
    again, _ = gb.measure_runs(dict(TINY), raw, NO_GPU_STATUS, TINY_NOISE, progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in raw.glob("*.parquet")} == before
    assert len(again) == len(frame)


def test_paper_tables_without_gpu_say_not_measured(measured_without_gpu):
    frame, skipped, _ = measured_without_gpu
    table = gb.summary(frame)
    rows = gb.table2_rows(table, skipped, TINY["dtypes"])
    tex = gb.table2_tex(rows, TINY["dtypes"])
    lines = {line.split(" & ")[0]: line for line in tex.splitlines() if " & " in line}
    assert r"\multicolumn{3}{l}{not measured: no GPU on this host}" in lines["within GPU"]
    assert r"\num{56.9}" in lines["within GPU"], "the seed's P100 figure"
    cpu = lines["DRAM to CPU (memcpy, one thread)"]
    assert "not measured" not in cpu and cpu.count(r"\num{") == 6 + 2
    assert sum("not measured: no GPU on this host" in line for line in lines.values()) == len(gb.GPU_CASES)
    detail = gb.gpu_detail_tex(table, skipped)
    assert "not measured: no GPU on this host" in detail and r"\num" not in detail
    wide = gb.jagged_table(table)
    jag = gb.jagged_tex(wide, skipped)
    assert "CUDA C++ & \\multicolumn{8}{l}{not measured: no GPU on this host}" in jag
    assert (wide["explode_ratio"] > 0).all() and (wide["combine_ratio"] > 0).all()
    assert gb.jagged_macros(wide)["GpubJaggedState"] == "cpuonly"  # the section words each state
    goal = gb.targets(table, NO_GPU_STATUS, TINY["dtypes"])
    assert not goal["checked"] and gb.target_macros(goal) == {"GpubTargetState": "notchecked",
                                                              "GpubTargetWhyNot": "no GPU on this host",
                                                              "GpubTargetSeedState": "none",
                                                              "GpubTargetSeedFractions": "",
                                                              "GpubTargetReferenceState": "none",
                                                              "GpubTargetReferenceFractions": ""}
    # what a launch costs: no figure without a GPU, each method's reason instead
    launches = gb.launch_tex(gb.launch_table(frame), skipped)
    assert gb.launch_table(frame).empty and r"\num" not in launches
    assert all(rf"{method} & \multicolumn{{2}}{{l}}{{not measured: no GPU on this host}}" in launches
               for method in ("CUDA C++", "CuPy", "numba.cuda"))
    # every macro the section quotes is built in the package, and says no GPU figure was made
    macros = gb.paper_macros({**TINY, "repetitions": 2, "warmup": 1}, table, skipped, wide, NO_GPU_STATUS, frame,
                             TINY_NOISE, [], {})
    assert macros["GpubGpuState"] == "notmeasured"  # the section words it with GpubDevice, checked below
    cuda_built = (harness.kernels_dir() / gb.CUDA_KERNEL).is_file()
    assert macros["GpubCudaState"] == ("built" if cuda_built else "notbuilt")
    assert ("GpubCudaCompiler" in macros) == cuda_built
    assert macros["GpubTargetState"] == "notchecked" and macros["GpubTargetWhyNot"] == "no GPU on this host"
    assert macros["GpubArchivedState"] == "none" and macros["GpubArchivedList"] == ""
    assert "GpubTargetSentence" not in macros and "GpubJaggedSentence" not in macros
    # no device: the L2 is unknown, and the section names why from GpubDevice
    assert (macros["GpubLTwoState"], macros["GpubDevice"]) == ("unknown", "no GPU on this host")
    assert "GpubLTwoNote" not in macros
    jagged = gb.make_jagged(TINY["events"], TINY["mean_particles"], "float64")
    assert macros["GpubParticles"] == rf"\num{{{jagged.particles}}}" and macros["GpubTargetPercent"] == round(100 * gb.TARGET_FRACTION)


def _gpu_frame(copy_fraction: float, inplace_fraction: float, spread: float = 0.0) -> pd.DataFrame:
    """Each process's (rep's) pass at its fraction, the second `spread` slower, the first faster."""
    rows = []
    for case, fraction in (("d2d_copy", copy_fraction), ("inplace_global", inplace_fraction)):
        for dtype in gb.DTYPES:
            n = 2**20
            bytes_moved = 2 * n * np.dtype(dtype).itemsize
            event_s = bytes_moved / (fraction * FAKE_DEVICE["nominal_gb_s"] * 1e9)
            for rep in (-1, 0, 1):
                rows.append({"group": "table2", "method": "CUDA C++", "case": case, "dtype": dtype, "n": n,
                             "threads": 1, "rep": rep, "warmup": rep < 0, "wall_s": 1.0, "cpu_s": 1.0,
                             "event_s": event_s * (1 + spread * (rep - 0.5)), "bytes_moved": bytes_moved,
                             "clock": "cuda_event",
                             "checksum": 1.0, "noisy": False})
    return gb.with_rates(pd.DataFrame(rows), FAKE_DEVICE["nominal_gb_s"])


@pytest.mark.parametrize("copy, inplace, verdict", [
    (0.9, 0.88, "met"), (0.9, 0.8, "missed"),
    # the in-place kernel at 0.81 and 0.90 in its two processes: its interval contains 0.85
    (0.9, 0.855, "inconclusive")])
def test_target_is_checked_from_the_measured_fractions(copy, inplace, verdict):
    status = gb.GpuStatus(device=FAKE_DEVICE, reasons={"cuda": None})
    spread = 0.1 if verdict == "inconclusive" else 0.0
    frame = _gpu_frame(copy, inplace, spread)
    if not spread:
        assert np.allclose(frame["fraction"], np.repeat([copy, inplace], 6))  # rated by the CUDA-event time
    table = gb.summary(frame)
    goal = gb.targets(table, status, list(gb.DTYPES))
    assert goal["checked"] and goal["verdict"] == verdict and goal["met"] is (verdict == "met")
    fraction = goal["fractions"][("inplace_global", "float64")]
    assert fraction.value == pytest.approx(inplace, rel=0.01) and fraction.processes == 2
    macros = gb.target_macros(goal)  # the section words each state
    assert macros["GpubTargetState"] == verdict and macros["GpubTargetNominal"] == "3352"
    assert macros["GpubTargetFractions"].count(r"\gpubreaches{") == 2 * len(gb.DTYPES)
    assert rf"\gpubreaches{{in-place global float64}}{{{fraction.value:.2f}}}{{{paper.interval(fraction)}}}" \
        in macros["GpubTargetFractions"]  # its interval as numbers, worded by the paper (\confidenceinterval)
    rows = gb.table2_rows(table, pd.DataFrame(columns=[*gb.RUN_KEYS, "reason"]), list(gb.DTYPES))
    tex = gb.table2_tex(rows, list(gb.DTYPES))
    assert rf"\num{{{copy:g}}}" in next(line for line in tex.splitlines() if line.startswith("within GPU"))


def test_the_target_judges_the_kernel_declared_for_it_and_prints_the_seeds_beside():
    """The tuned kernels are judged, whatever the seed's one-element kernels reach (no winner
    picked by value): a tuned copy below the target misses it though the seed's copy is above;
    the seed's fractions stand beside them. An archive from before the tuned kernels is judged
    on the seed's."""
    status = gb.GpuStatus(device=FAKE_DEVICE, reasons={"cuda": None})
    seed = _gpu_frame(0.88, 0.56)
    tuned = _gpu_frame(0.80, 0.93).replace({"case": {"d2d_copy": "copy_tuned", "inplace_global": "inplace_tuned"}})
    goal = gb.targets(gb.summary(pd.concat([seed, tuned], ignore_index=True)), status, list(gb.DTYPES))
    assert set(goal["fractions"]) == {(c, d) for c in ("copy_tuned", "inplace_tuned") for d in gb.DTYPES}
    assert set(goal["seed_fractions"]) == {(c, d) for c in ("d2d_copy", "inplace_global") for d in gb.DTYPES}
    assert goal["verdict"] == "missed"
    assert goal["fractions"][("inplace_tuned", "float32")].value == pytest.approx(0.93, rel=0.01)
    macros = gb.target_macros(goal)
    assert macros["GpubTargetSeedState"] == "beside"
    assert r"\gpubreaches{in-place global float32}{0.56}" in macros["GpubTargetSeedFractions"]
    assert r"\gpubreaches{in-place global, tuned kernel float32}{0.93}" in macros["GpubTargetFractions"]
    assert macros["GpubTargetReferenceState"] == "none"  # no CUB transform among these runs
    before = gb.targets(gb.summary(seed), status, list(gb.DTYPES))
    assert set(before["fractions"]) == {(c, d) for c in ("d2d_copy", "inplace_global") for d in gb.DTYPES}
    assert before["seed_fractions"] == {} and before["verdict"] == "missed"  # the seed's in place at 0.56
    assert gb.target_macros(before)["GpubTargetSeedState"] == "none"


def test_cubs_transform_stands_beside_the_target_and_is_judged_on_nothing():
    """CUB's transform, the vendor's reference, is printed beside the target's kernels with its
    interval; a reference above the target does not make a tuned kernel below it meet it."""
    status = gb.GpuStatus(device=FAKE_DEVICE, reasons={"cuda": None})
    tuned = _gpu_frame(0.82, 0.81).replace({"case": {"d2d_copy": "copy_tuned", "inplace_global": "inplace_tuned"}})
    cub = _gpu_frame(0.88, 0.88)
    cub = cub[cub["case"] == "d2d_copy"].replace({"case": {"d2d_copy": "cub_transform"}})
    goal = gb.targets(gb.summary(pd.concat([tuned, cub], ignore_index=True)), status, list(gb.DTYPES))
    assert goal["verdict"] == "missed"
    assert set(goal["reference_fractions"]) == {("cub_transform", d) for d in gb.DTYPES}
    reference = goal["reference_fractions"][("cub_transform", "float32")]
    assert reference.value == pytest.approx(0.88, rel=0.01)
    macros = gb.target_macros(goal)
    assert macros["GpubTargetReferenceState"] == "beside"
    assert (rf"\gpubreaches{{immutable global, CUB transform float32}}{{0.88}}{{{paper.interval(reference)}}}"
            in macros["GpubTargetReferenceFractions"])


class EventBackend(gb.NumpyBackend):
    """numpy, with the CUDA-event time a device would give: 1 ms a pass."""

    def time_device(self, op, loops=1):
        return {**super().time_device(op, loops), "event_s": 1e-3 * loops, "clock": "cuda_event"}


@pytest.mark.parametrize("case", ["inplace_global", "immutable_global", "inplace_managed", "h2d_pinned"])
def test_device_passes_repeat_inside_their_events_to_the_minimum_sample(case):
    """Kernel-only time: after the warm-up, a sample repeats a pass on device memory back to back
    inside its events until they last the minimum sample (the CUDA program's rule); a pass that
    needs the CPU first (shared memory) stays one a sample; each is rated per pass, and the
    in-place add's values hold every pass made."""
    frame, validation = gb.table2_python(case, "float64", N, REPS, WARMUP, EventBackend(), min_sample_s=0.01)
    if case == "inplace_managed":  # one pass a sample, no loops: counted apart from the calibrated samples
        assert "loops" not in frame
        made = len(frame)
    else:
        assert loops_follow_the_calibration_rule(frame.assign(wall_s=frame["event_s"]), WARMUP, 0.01)
        assert bool((frame["loops"].iloc[WARMUP:] > 1).all()) and frame["loops"].iloc[0] == 1
        made = int(frame["loops"].sum())
    assert gb_analysis.rated_time(frame).tolist() == pytest.approx([1e-3] * len(frame))
    added = {"inplace_global": made, "immutable_global": 1, "inplace_managed": 1, "h2d_pinned": 0}[case]
    assert validation["checksum"] == float(gb.initial(N, "float64").sum() + N * added)
    assert gb_runs.adds_kept(case, frame) == (made if case != "inplace_managed" else 1)


def test_launch_table_gives_each_methods_time_a_launch_by_both_clocks():
    rows = [{"group": "launch", "method": method, "case": gb.LAUNCH_CASE, "dtype": "float32", "n": 1,
             "round": r, "warmup": False, "loops": 1000, "event_s": device * 1e-3 * (1 + 0.01 * r),
             "wall_s": host * 1e-3 * (1 + 0.01 * r)}
            for method, device, host in (("CUDA C++", 2.0, 2.5), ("CuPy", 6.0, 9.0)) for r in range(3)]
    table = gb.launch_table(pd.DataFrame(rows)).set_index("method")
    assert table.loc["CUDA C++", "device_us"] == pytest.approx(2.0 * 1.01, rel=0.01)
    assert table.loc["CuPy", "host_us_low"] < table.loc["CuPy", "host_us"] < table.loc["CuPy", "host_us_high"]
    assert table.loc["CuPy", "processes"] == 3
    tex = gb.launch_tex(table.reset_index(), pd.DataFrame(columns=[*gb.RUN_KEYS, "reason"]))
    assert tex.count(r"\num{") == 4 and "this machine & CuPy &" in tex
    # an archived machine's launches follow this machine's, under its label
    both = gb.launch_tex(table.reset_index(), pd.DataFrame(columns=[*gb.RUN_KEYS, "reason"]),
                         {"lent-h200": table.reset_index().iloc[:1]})
    assert both.count(r"\num{") == 6 and both.index("this machine & CuPy &") < both.index("lent-h200 & CUDA C++ &")


def test_check_agreement_raises_on_disagreement():
    frame = pd.DataFrame({"group": ["jagged"] * 3, "case": ["combine"] * 3, "dtype": ["float32"] * 3,
                          "n": [10] * 3, "method": ["numba", "awkward", "numba.cuda"], "checksum": [5.0, 5.0, 5.0]})
    gb.check_agreement(frame)
    frame.loc[2, "checksum"] = 6.0
    with pytest.raises(AssertionError, match="combine"):
        gb.check_agreement(frame)


# --- device facts, NUMA, configuration ----------------------------------------------------------

def test_nominal_bandwidth_from_clock_and_bus():
    # H100 SXM: HBM3 at 2619 MHz over 5120 bits
    assert gb.nominal_gb_s(2_619_000, 5120) == pytest.approx(3352.3, rel=1e-4)


def test_device_fit():
    small = {**FAKE_DEVICE, "free_bytes": 10**9}
    status = gb.GpuStatus(device=small, reasons={"cuda": None})
    with pytest.raises(config.ConfigError, match="gpu_bandwidth.gpu_array_mib"):
        gb.check_device_fit({**TINY, "gpu_array_mib": 1024}, status)
    with pytest.raises(config.ConfigError, match="gpu_bandwidth.gpu_events"):
        gb.check_device_fit({**TINY, "gpu_events": 10**8}, status)
    gb.check_device_fit(TINY, status)
    gb.check_device_fit({**TINY, "gpu_array_mib": 10**6}, NO_GPU_STATUS)  # nothing to check without a GPU


@pytest.mark.parametrize("array_mib, device, state, ratio, macros", [
    # 1 GiB against a 50 MiB L2: about 20 times, well beyond
    (1024, FAKE_DEVICE, "beyond", 1024 / 50, {"GpubLTwoRatio": r"\num{20}", "GpubLTwoMiB": r"\num{50}"}),
    # exactly four times: beyond; 64 MiB: 1.28 times, partly cache rates
    (200, FAKE_DEVICE, "beyond", 4.0, {"GpubLTwoRatio": r"\num{4}", "GpubLTwoMiB": r"\num{50}"}),
    (64, FAKE_DEVICE, "notbeyond", 1.28, {"GpubLTwoRatio": r"\num{1.3}", "GpubLTwoMiB": r"\num{50}"}),
    (64, {**FAKE_DEVICE, "l2_bytes": 40 * 2**20}, "notbeyond", 1.6, {"GpubLTwoRatio": r"\num{1.6}",
                                                                      "GpubLTwoMiB": r"\num{40}"}),
    # no device: unknown, and the section says why from GpubDevice
    (1024, None, "unknown", float("nan"), {"GpubLTwoRatio": "n/a", "GpubLTwoMiB": "n/a"}),
])
def test_the_l2_state_and_numbers_are_the_ones_the_sizes_give(array_mib, device, state, ratio, macros):
    """The section words GpubLTwoState (paper/sections/gpu_bandwidth.tex); its numbers are macros."""
    from throughput.experiments.gpu_bandwidth import device as gb_device, report as gb_report
    status = gb.GpuStatus(device=device) if device else NO_GPU_STATUS
    fit = gb_device.l2_fit({**TINY, "gpu_array_mib": array_mib}, status)
    assert fit["state"] == state and fit["ratio"] == pytest.approx(ratio, nan_ok=True)
    assert gb_report.l2_macros(fit) == {"GpubLTwoState": state, **macros}


def test_numa_reasons_and_command(monkeypatch):
    monkeypatch.setattr(gb_runs.provenance, "numa_nodes", lambda: 1)
    assert gb.numa_reason() == "one NUMA node"
    monkeypatch.setattr(gb_runs.provenance, "numa_nodes", lambda: 2)
    monkeypatch.setattr(gb_runs.shutil, "which", lambda name: None)
    assert "numactl is not installed" in gb.numa_reason()
    argv = gb.numa_command(0, 1, 4, 1000, "float64", 3, 1)
    assert argv[:3] == ["numactl", "--cpunodebind=0", "--membind=1"]
    assert argv[3].endswith(gb.HOST_KERNEL) and argv[argv.index("--threads") + 1] == "4"
    assert gb.node_cpus(0) >= 1
    macros = gb.numa_macros(pd.DataFrame(columns=["group"]), pd.DataFrame(
        [{"group": "numa", "reason": "not measured: one NUMA node"}]))
    assert macros == {"GpubNumaState": "skipped", "GpubNumaReason": "not measured: one NUMA node"}
    assert gb.numa_macros(pd.DataFrame(columns=["group"]), pd.DataFrame(columns=["group"])) == {"GpubNumaState": "off"}
    # three rounds, 8 bytes per value, the machine's speed drifting between them; remote at 0.74 to 0.76
    # of local in each round: the paired ratio's interval is narrower than either rate's
    speed, remote_share = (1.0, 1.1, 0.9), (0.74, 0.75, 0.76)
    numa = pd.DataFrame([{"group": "numa", "case": f"memory_node{node}", "threads": 4, "processes": 3,
                          "ghz": 1.25 * share, "gb_s": 10.0 * share,
                          "ghz_best": 1.25 * share, "ghz_low": 1.1 * share, "ghz_high": 1.4 * share,
                          "ghz_by_round": {r: 1.25 * f * (remote_share[r] if node else 1.0)
                                           for r, f in enumerate(speed)}}
                         for node, share in ((0, 1.0), (1, 0.75))])
    macros = gb.numa_macros(numa, pd.DataFrame(columns=["group"]))
    ratio = macros.pop("GpubNumaRatio")
    assert macros == {
        "GpubNumaState": "measured", "GpubNumaLocalNode": "0", "GpubNumaRemoteNode": "1", "GpubNumaThreads": "4",
        "GpubNumaLocalGBs": paper.with_interval(10.0, 8.8, 11.2),
        "GpubNumaRemoteGBs": paper.with_interval(7.5, 6.6, 8.4)}
    assert ratio.startswith(r"\num{0.75}\,$\pm$\,") and float(ratio.split(",")[-1].rstrip(r"\%")) < 12


@pytest.mark.parametrize("bad, key", [
    ({"events": 10**10}, "gpu_bandwidth.events"),
    ({"cpu_array_mib": 10**7}, "gpu_bandwidth.cpu_array_mib"),
    ({"max_threads": 10**4}, "gpu_bandwidth.max_threads"),
    ({"dtypes": ["float16"]}, "gpu_bandwidth.dtypes[0]"),
    ({"gpu_methods": ["opencl"]}, "gpu_bandwidth.gpu_methods[0]"),
    ({"mean_particles": -1}, "gpu_bandwidth.mean_particles"),
    ({"gpu_arrray_mib": 4}, "gpu_bandwidth.gpu_arrray_mib"),
])
def test_bad_config_names_the_key(bad, key):
    with pytest.raises(config.ConfigError) as error:
        configuration.validate({"gpu_bandwidth": bad})
    assert f"'{key}'" in str(error.value)


def test_config_defaults_and_max_threads():
    section = configuration.validate({"gpu_bandwidth": {}})["gpu_bandwidth"]
    assert section["max_threads"] is None and gb.max_threads(section) == config.usable_cores()
    assert {r["threads"] for r in gb.plan({**section, "repetitions": 1, "warmup": 0})
            if r["method"] == "numba"} == {1, config.usable_cores()}
    assert section["dtypes"] == ["float32", "float64"] and section["numa"] is True


def test_seed_table_is_typed_in_full():
    assert len(gb.SEED_TABLE2) == 10 and all(len(v) == len(gb.SEED_GPUS) for v in gb.SEED_TABLE2.values())
    assert gb.SEED_TABLE2["in-place global"][-1] == 56.9 and gb.SEED_TABLE2["DRAM to GPU"][4] == 0.51
    assert {c.seed_row for c in gb.CASES if c.seed_row} == set(gb.SEED_TABLE2)


def test_module_import_does_not_import_numba_cuda():
    code = ("import sys; import throughput.experiments.gpu_bandwidth; "
            "assert 'numba.cuda' not in sys.modules, 'numba.cuda imported at import time'")
    subprocess.run([Path(__import__("sys").executable), "-c", code], check=True)


def _ratios(explode: float, combine: float, spread: float = 0.05) -> dict[str, float]:
    """A jagged_table row's two ratios, each with an interval of +-spread."""
    return {f"{op}_ratio{suffix}": value * factor for op, value in (("explode", explode), ("combine", combine))
            for suffix, factor in (("", 1), ("_low", 1 - spread), ("_high", 1 + spread))}


def test_jagged_state_compares_one_cpu_thread_with_the_gpu_by_their_intervals():
    wide = pd.DataFrame([
        {"method": "numba", "threads": 1, "dtype": "float32", **_ratios(0.5, 0.4)},
        {"method": "numba", "threads": 2, "dtype": "float32", **_ratios(0.01, 0.01)},
        {"method": "CUDA C++", "threads": 1, "dtype": "float32", **_ratios(0.2, 0.1)}])
    macros = gb.jagged_macros(wide)  # the section words each state
    assert macros["GpubJaggedState"] == "supports" and macros["GpubJaggedDtype"] == "float32"
    assert (macros["GpubJaggedCpuExplode"], macros["GpubJaggedCpuCombine"]) == ("0.50", "0.40")
    # the interval as its two bounds (the paper words them), recomputed from the row's
    cpu = gb.analysis.jagged_estimate(wide.iloc[0], "explode_ratio")
    assert (cpu.low, cpu.high) == pytest.approx((0.5 * 0.95, 0.5 * 1.05))
    assert macros["GpubJaggedCpuExplodeInterval"] == \
        rf"\confidenceinterval{{{paper.number(cpu.low, 2)}}}{{{paper.number(cpu.high, 2)}}}{{}}"
    assert macros["GpubJaggedGpuCombine"] == "0.10"
    wide.loc[2, ["combine_ratio", "combine_ratio_low", "combine_ratio_high"]] = [0.9, 0.85, 0.95]
    assert gb.jagged_macros(wide)["GpubJaggedState"] == "notsupported"
    # the GPU's combine ratio lower, but its interval reaching into the CPU's: not decided
    wide.loc[2, ["combine_ratio", "combine_ratio_low", "combine_ratio_high"]] = [0.3, 0.2, 0.39]
    assert gb.jagged_macros(wide)["GpubJaggedState"] == "undecided"
    assert gb.jagged_macros(wide.iloc[1:2])["GpubJaggedState"] == "nonumba"  # numba on two threads only
    assert gb.jagged_macros(wide.iloc[:0]) == {"GpubJaggedState": "none"}


def test_jagged_ratios_pair_the_rounds_of_their_group():
    # every round's explode rate is half its flat add's, while the rates themselves differ by
    # a factor of two between rounds: the paired ratio is 0.5 with no spread, the rates are wide
    flat = {0: 1.0, 1: 2.0, 2: 1.5}
    runs = [{"case": case, "ghz_by_round": {r: v * factor for r, v in flat.items()}}
            for case, factor in (("flat_inplace", 1.2), ("flat_immutable", 1.0), ("explode", 0.5), ("combine", 0.25))]
    table = pd.DataFrame([{"group": "jagged", "method": "numba", "threads": 1, "dtype": "float32", "passes": 3,
                           "processes": 3, "noisy": False, **run, "ghz_best": 1.0, "ghz_low": 0.5, "ghz_high": 2.0} for run in runs])
    row = gb.jagged_table(table).iloc[0]
    assert row["explode_ratio"] == pytest.approx(0.5) and row["combine_ratio"] == pytest.approx(0.25)
    assert row["explode_ratio_high"] - row["explode_ratio_low"] == pytest.approx(0.0, abs=1e-12)
    assert (row["explode"], row["explode_low"], row["explode_high"]) == (1.0, 0.5, 2.0)
    table = table[table["case"] != "flat_immutable"]  # nothing to pair with: no ratio
    assert gb.jagged_table(table)[["explode_ratio", "combine_ratio"]].isna().all(axis=None)


def test_a_noisy_jagged_run_is_marked_with_the_ratios_it_enters(measured_without_gpu):
    frame, skipped, _ = measured_without_gpu
    table = gb.summary(frame.assign(noisy=False))
    table.loc[(table["group"] == "jagged") & (table["case"] == "flat_immutable"), "noisy"] = True
    wide = gb.jagged_table(table)
    assert wide["flat_immutable_noisy"].all() and wide["explode_ratio_noisy"].all()
    assert not wide["explode_noisy"].any()
    line = next(line for line in gb.jagged_tex(wide, skipped).splitlines() if line.startswith("numba"))
    cells = line.rstrip(r" \\").split(" & ")
    assert [cell.endswith(r"\textsuperscript{\dag}") for cell in cells[3:]] == [False, True, False, False, True, True]


def test_a_numba_cuda_that_cannot_compile_is_a_reason_not_a_crash(monkeypatch):
    """As on the lent H100 node: numba.cuda sees the GPU, but compiling the first kernel fails."""
    from numba import cuda

    from throughput.experiments.gpu_bandwidth import device

    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    monkeypatch.setattr(cuda, "is_available", lambda: True)
    assert device._numba_cuda_reason() is None  # this numba-cuda compiles the probe for sm_80

    def broken(*args, **kwargs):
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")

    monkeypatch.setattr(cuda, "compile_ptx", broken)
    reason = device._numba_cuda_reason()
    assert reason == ("numba.cuda cannot compile a kernel here "
                      "(AttributeError: module 'numpy' has no attribute 'row_stack')")
    monkeypatch.setattr(device, "_cupy_reason", lambda: None)
    monkeypatch.setattr(device, "query_cuda_device", lambda: (None, gb.NO_GPU))
    assert gb.detect_gpu(["numba_cuda"]).reason("numba_cuda").endswith(reason)


ROW_STACK_REMOVED = """
import sys, warnings
import numpy as np
warnings.simplefilter("ignore")  # numpy < 2.5 warns that row_stack is deprecated
del np.row_stack                  # as numpy 2.5 has it, on the H200 node
from throughput.experiments.gpu_bandwidth import device
if sys.argv[1] == "numba":  # the probe, compiled by numba.cuda as imported before
    from numba import cuda
    device.import_numba_cuda = lambda: cuda
    print(device._numba_cuda_compile_reason())
else:
    device.import_numba_cuda()
    print(device._numba_cuda_compile_reason(), np.row_stack([[1, 2], [3, 4]]).tolist(), np.row_stack is np.vstack)
"""


def test_numba_cuda_compiles_under_a_numpy_without_row_stack(monkeypatch):
    """The H200 node's failure, reproduced in a fresh process (numba-cuda registers its overloads
    once, at the first compile): without np.row_stack plain numba.cuda cannot compile the probe;
    through import_numba_cuda it can, and the alias it gives back is vstack's, as a function of its own."""
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)

    def run(mode):
        done = subprocess.run([sys.executable, "-c", ROW_STACK_REMOVED, mode], capture_output=True, text=True,
                              cwd=REPO, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip().splitlines()[-1]

    assert run("numba") == ("numba.cuda cannot compile a kernel here "
                            "(AttributeError: module 'numpy' has no attribute 'row_stack')")
    assert run("shim") == "None [[1, 2], [3, 4]] False"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_which_gpu_measured_and_the_cuda_build_are_states_worded_in_the_section(tmp_path):
    from tex_wording import build, worded
    here = gb.GpuStatus(device=FAKE_DEVICE, reasons={"cuda": None})
    cases = {"gpu": gb.device_macros(here, False), "none": gb.device_macros(NO_GPU_STATUS, False)}
    assert (cases["gpu"]["GpubGpuState"], cases["none"]["GpubGpuState"]) == ("measured", "notmeasured")
    assert cases["gpu"]["GpubDevice"] == paper.escape(here.summary()) and cases["none"]["GpubDevice"] == gb.NO_GPU
    assert cases["none"]["GpubCudaState"] == "notbuilt" and "GpubCudaCompiler" not in cases["none"]
    # built: the compiler is the CUDA program's own build record (where this machine built it)
    if (harness.kernels_dir() / gb.CUDA_KERNEL).is_file():
        built = gb.device_macros(NO_GPU_STATUS, True)
        assert built["GpubCudaCompiler"] == paper.escape(harness.build_info(gb.CUDA_KERNEL)["compiler"])
    cases["built"] = {"GpubCudaState": "built", "GpubCudaCompiler": "nvcc 12.9"}
    body = "\n\n".join([f"{name}: " + worded("GpubGpu", m) for name, m in cases.items() if name != "built"]
                        + [f"cuda {name}: " + worded("GpubCuda", cases[name]) for name in ("none", "built")])
    code, log, text = build(tmp_path, "gpu_bandwidth", {}, body)
    assert code == 0, log[-2000:]
    assert f"gpu: measured on {here.summary()}." in text and f"none: not measured: {gb.NO_GPU}." in text
    assert "cuda none: (not built here: no nvcc)." in text and "cuda built: with nvcc 12.9." in text


def test_repeatability_compares_two_gpu_archives_cell_by_cell(tmp_path):
    """The archived H200's GPU runs against themselves differ in no cell (rates and the jagged
    ratios); with every rate halved and every interval narrowed to its value, the rates differ
    and the ratios (both sides halved) do not. Rows of no known experiment are refused, named."""
    from throughput import repeatability

    table = repeatability.read_run(REPO / "archive" / "nvidia-h200" / "gpu_bandwidth")
    cells = repeatability.cells(table)
    assert {"G values/s", "explode / flat", "combine / flat"} <= set(cells["table"])
    assert cells.loc[cells["table"] == "G values/s", "value"].gt(0).all()
    same = repeatability.compare(table, table)
    assert (same["verdict"] != "DIFFERS").all() and len(same) == len(cells)
    narrowed, slower = table.copy(), table.copy()
    slower["ghz_best"] *= 0.5
    slower["ghz_by_round"] = [{r: 0.5 * v for r, v in rounds.items()} for rounds in slower["ghz_by_round"]]
    for frame in (narrowed, slower):
        frame["ghz_low"] = frame["ghz_high"] = frame["ghz_best"]
    verdicts = repeatability.compare(narrowed, slower).set_index(["table", "cell"])["verdict"]
    assert (verdicts["G values/s"] == "DIFFERS").all()
    assert (verdicts[verdicts.index.get_level_values("table") != "G values/s"] != "DIFFERS").all()
    from throughput.core import results

    results.write_raw(pd.DataFrame({"x": [1.0]}), tmp_path / "other.parquet", {"git_commit": "x"}, {})
    with pytest.raises(SystemExit, match="none of the experiments compared here"):
        repeatability.read_run(tmp_path)
