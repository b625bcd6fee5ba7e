"""The numba.cuda kernels of the GPU path (add in place, add into a new array,
explode, combine) in numba's CUDA simulator, against numpy and awkward.

numba reads NUMBA_ENABLE_CUDASIM when it is first imported, so the kernel
tests run in a fresh Python process with it set: `test_kernels_in_simulator`
starts that process (pytest on this file) and the tests below it run only
there.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

IN_SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
simulator_only = pytest.mark.skipif(not IN_SIMULATOR, reason="runs in the NUMBA_ENABLE_CUDASIM=1 subprocess")


@pytest.mark.skipif(IN_SIMULATOR, reason="the driver of the simulator run")
def test_kernels_in_simulator():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(Path(__file__))],
                          capture_output=True, text=True, env=env, cwd=Path(__file__).parent, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    # Everything ran there but this driver, which skips itself.
    assert re.search(r"\b\d+ passed, 1 skipped\b", proc.stdout) and "failed" not in proc.stdout, proc.stdout


if IN_SIMULATOR:
    import awkward as ak
    import numpy as np
    from numba import cuda

    from throughput.experiments import gpu_bandwidth as gb
    from throughput.experiments.gpu_bandwidth import device as gb_device

LISTS = [[], [1, 2, 3], [], [4, 5], [6], [], [7, 8, 9, 10, 11], []]  # empty events first, between, last


@simulator_only
def test_this_process_runs_the_simulator():
    from numba.core import config

    assert config.ENABLE_CUDASIM and cuda.is_available()
    assert gb_device._numba_cuda_reason().startswith("numba's CUDA simulator is enabled")


@simulator_only
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 257, 700])  # not multiples of the block
def test_add_kernels_match_numpy(n, dtype):
    kernels = gb.cuda_kernels()
    a = gb.initial(n, dtype)
    expected = a + np.dtype(dtype).type(2)
    gb.launch(kernels.add_inplace, n, a, np.dtype(dtype).type(2))
    assert np.array_equal(a, expected)
    b = np.full(n, -1, dtype)
    source = gb.initial(n, dtype)
    gb.launch(kernels.add_immutable, n, source, b, np.dtype(dtype).type(1))
    assert np.array_equal(b, gb.initial(n, dtype) + 1)
    assert np.array_equal(source, gb.initial(n, dtype)), "the immutable input is untouched"


def _jagged(lists, dtype):
    array = ak.values_astype(ak.Array(lists), dtype)
    counts = ak.to_numpy(ak.num(array)).astype(np.int64)
    data = gb.from_counts(counts, dtype, values=ak.to_numpy(ak.flatten(array)),
                          event_values=np.arange(len(lists), dtype=dtype) + 100)
    return array, data


@simulator_only
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_explode_kernel_matches_awkward(dtype):
    array, data = _jagged(LISTS, dtype)
    out = np.full(data.particles, -1, dtype)
    gb.launch(gb.cuda_kernels().explode, data.particles, data.offsets, data.event_values, out)
    expected = ak.to_numpy(ak.flatten(ak.broadcast_arrays(data.event_values, array)[0]))
    assert np.array_equal(out, expected)


@simulator_only
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lists", [LISTS, [[], [], []], [[1, 2]], [[], [3, 4, 5], []]])
def test_combine_kernels_match_awkward(lists, dtype):
    array, data = _jagged(lists, dtype)
    out = np.full(data.pairs, -1, dtype)
    counts = np.full(data.events + 1, -5, np.int64)
    pair_offsets = np.full(data.events + 1, -5, np.int64)
    gb.combine_gpu(gb.cuda_kernels(), gb.NumpyBackend(), data.offsets, counts, pair_offsets, data.values, out)
    pairs = ak.combinations(array, 2)
    assert np.array_equal(out, ak.to_numpy(ak.flatten(pairs["0"] + pairs["1"])))
    assert np.array_equal(pair_offsets, data.pair_offsets)


@simulator_only
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_jagged_gpu_path_validates_every_operation(dtype):
    data = gb.make_jagged(60, 3, dtype)
    assert (np.diff(data.offsets) == 0).any(), "the data must include empty events"
    for op in gb.JAGGED_OPS:
        frame, validation = gb.jagged_gpu_python(op, data, 2, 1, gb.NumpyBackend())
        assert validation["ok"] and validation["checksum"] == gb.exact_checksum(op, data, 3), op
        assert len(frame) == 3 and int(frame["warmup"].sum()) == 1
        assert frame["run_delay_s"].ge(0).all() and frame["sample_retakes"].eq(0).all(), op


@simulator_only
def test_jagged_gpu_path_retakes_a_disturbed_pass_and_counts_every_add(monkeypatch):
    """A process that waits a second for a CPU around every take: each measured pass is taken
    again as often as the rule allows, never a warm-up; the in-place add counts every take."""
    from throughput.core import harness

    data = gb.make_jagged(60, 3, "float64")
    monkeypatch.setattr(harness, "run_delay_since", lambda before: 1.0)
    for op in ("flat_inplace", "explode"):
        frame, validation = gb.jagged_gpu_python(op, data, 2, 1, gb.NumpyBackend(), retakes=harness.Retakes(0.02, 2))
        assert list(frame["sample_retakes"]) == [0, 2, 2], op
        takes = 1 + 3 + 3 if op == "flat_inplace" else 1
        assert validation["ok"] and validation["checksum"] == gb.exact_checksum(op, data, takes), op


@simulator_only
def test_a_missing_thread_is_caught():
    """One thread too few leaves a value unwritten: the validation must fail."""
    data = gb.make_jagged(40, 3, "float32")
    out = np.full(data.particles, -1, np.float32)
    assert data.particles <= 1024
    gb.cuda_kernels().explode[1, data.particles - 1](data.offsets, data.event_values, out)
    with pytest.raises(AssertionError, match="1 of"):
        gb.validate_output(out, gb.reference("explode", data, 1), "explode")


class _EventTimes(gb.NumpyBackend if IN_SIMULATOR else object):
    """numpy in the simulator, with the CUDA-event time a device would give: 1 ms a pass."""

    def time_device(self, op, loops=1):
        return {**super().time_device(op, loops), "event_s": 1e-3 * loops, "clock": "cuda_event"}


@simulator_only
def test_jagged_gpu_samples_repeat_the_kernel_inside_their_events_and_count_every_add():
    data = gb.make_jagged(60, 3, "float64")
    frame, validation = gb.jagged_gpu_python("flat_inplace", data, 2, 1, _EventTimes(), min_sample_s=0.005)
    assert frame["loops"].iloc[0] == 1 and (frame["loops"].iloc[1:] > 1).all()
    assert validation["checksum"] == gb.exact_checksum("flat_inplace", data, int(frame["loops"].sum()))


@simulator_only
def test_a_launch_is_timed_apart_and_checked_by_its_count():
    """numba.cuda's launch of its one-thread counting kernel: every launch made is counted on
    the device, no byte is moved, and a second method name is refused."""
    frame, validation = gb.launch_python("numba.cuda", "float32", _EventTimes(), 2, 1, min_sample_s=0.005)
    made = int(frame["loops"].sum())
    assert made > 3 and validation["passes"] == made and validation["checksum"] == float(made)
    assert (frame["bytes_moved"] == 0).all() and (frame["case"] == gb.LAUNCH_CASE).all()
    with pytest.raises(ValueError, match="no launch of its own for method 'awkward'"):
        gb.launch_python("awkward", "float32", gb.NumpyBackend(), 1, 0)
