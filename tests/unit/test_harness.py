"""harness: running compiled kernels and Python functions, and summarising timings."""
from __future__ import annotations

import math
import os
import stat
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from throughput.core import harness

KERNEL = "add_constant_O3"
TINY = {"n": 1001, "threads": 1, "reps": 3, "warmup": 2, "mode": "inplace"}


KERNELS_USED = (KERNEL,)  # checked by conftest's built_kernels


@pytest.fixture(scope="module")
def run_o3() -> harness.KernelRun:
    return harness.run_kernel(KERNEL, TINY)


def _fake_kernel(directory: Path, name: str, body: str) -> Path:
    """A shell script standing in for a kernel, printing what `body` prints."""
    path = directory / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# --- run_kernel on the real kernel -------------------------------------------------------------

def test_run_kernel_rows_and_warmup_flags(run_o3):
    timings = run_o3.timings
    assert isinstance(timings, pd.DataFrame)
    assert len(timings) == TINY["warmup"] + TINY["reps"]
    assert int(timings["warmup"].sum()) == TINY["warmup"]
    assert timings["warmup"].dtype == bool
    # warm-up rows first, with negative rep indices; measured reps are 0..reps-1
    assert list(timings["rep"]) == list(range(-TINY["warmup"], TINY["reps"]))
    assert list(timings.loc[~timings["warmup"], "rep"]) == list(range(TINY["reps"]))
    assert "record" not in timings.columns
    for column in ("wall_s", "cpu_s", "n", "threads", "mode", "opt", "bytes_moved"):
        assert column in timings.columns
    assert set(timings["n"]) == {TINY["n"]}
    assert set(timings["threads"]) == {1}
    assert set(timings["mode"]) == {"inplace"}
    assert (timings["bytes_moved"] == 2 * 8 * TINY["n"]).all()


def test_run_kernel_validation_and_build_info(run_o3):
    assert run_o3.validation["ok"] is True
    assert run_o3.validation["wrong_values"] == 0
    assert run_o3.validation["record"] == "validation"
    assert run_o3.build_info["record"] == "build_info"
    assert run_o3.build_info["opt"] == "O3"
    assert run_o3.build_info["kernel"] == "add_constant"
    assert "-O3" in run_o3.build_info["cxx_flags"]
    assert run_o3.build_info["compiler"]


@pytest.mark.parametrize("option, value", [("threads", 0), ("n", "ten"), ("reps", 0), ("warmup", -1),
                                           ("mode", "sideways")])
def test_run_kernel_bad_option_value_names_option(option, value):
    with pytest.raises(harness.KernelError) as info:
        harness.run_kernel(KERNEL, {**TINY, option: value})
    message = str(info.value)
    assert f"--{option}" in message
    assert KERNEL in message


def test_run_kernel_unknown_option_names_it():
    with pytest.raises(harness.KernelError, match="--bogus"):
        harness.run_kernel(KERNEL, {**TINY, "bogus": 1})


def test_run_kernel_missing_kernel_names_it():
    with pytest.raises(harness.KernelError, match="add_constant_O7"):
        harness.run_kernel("add_constant_O7", TINY)


def test_run_kernel_failed_validation_raises():
    with pytest.raises(harness.KernelError) as info:
        harness.run_kernel(KERNEL, {**TINY, "corrupt-for-test": 1})
    message = str(info.value)
    assert KERNEL in message
    assert "validation failed" in message


@pytest.mark.parametrize("mode", ["inplace", "immutable"])
def test_run_kernel_failed_validation_both_modes(mode):
    with pytest.raises(harness.KernelError, match="validation failed"):
        harness.run_kernel(KERNEL, {**TINY, "mode": mode, "corrupt-for-test": 1})


# --- kernels directory override and output parsing (fake kernels) -----------------------------

def test_kernels_dir_default(monkeypatch):
    monkeypatch.delenv("THROUGHPUT_KERNELS_DIR", raising=False)
    assert harness.kernels_dir() == harness.DEFAULT_KERNELS_DIR


def test_kernels_dir_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv("THROUGHPUT_KERNELS_DIR", str(tmp_path))
    assert harness.kernels_dir() == tmp_path
    # the real kernel is not in tmp_path: it must not be found any more
    with pytest.raises(harness.KernelError, match=KERNEL) as info:
        harness.kernel_path(KERNEL)
    assert str(tmp_path) in str(info.value)


def test_env_override_runs_kernel_from_there(monkeypatch, tmp_path):
    body = (
        "if [ \"$1\" = --build-info ]; then\n"
        "  echo '{\"record\": \"build_info\", \"kernel\": \"fake\", \"compiler\": \"c\", \"cxx_flags\": \"f\", \"opt\": \"Ofake\"}'\n"
        "  exit 0\nfi\n"
        "echo \"{\\\"record\\\": \\\"timing\\\", \\\"rep\\\": -1, \\\"warmup\\\": true, \\\"wall_s\\\": 1.0, \\\"cpu_s\\\": 1.0, \\\"args\\\": \\\"$*\\\"}\"\n"
        "echo '{\"record\": \"timing\", \"rep\": 0, \"warmup\": false, \"wall_s\": 2.0, \"cpu_s\": 2.0, \"args\": \"\"}'\n"
        "echo\n"
        "echo '{\"record\": \"validation\", \"ok\": true, \"checksum\": 42}'\n"
        "echo \"{\\\"record\\\": \\\"env\\\", \\\"bind\\\": \\\"$OMP_PROC_BIND\\\"}\"\n"
    )
    _fake_kernel(tmp_path, "fake", body)
    monkeypatch.setenv("THROUGHPUT_KERNELS_DIR", str(tmp_path))
    assert harness.kernel_path("fake") == tmp_path / "fake"
    run = harness.run_kernel("fake", {"n": 5, "mode": "x"})
    assert run.build_info["opt"] == "Ofake"
    assert run.validation["checksum"] == 42
    assert len(run.timings) == 2
    assert list(run.timings["warmup"]) == [True, False]
    assert run.timings["args"].iloc[0] == "--n 5 --mode x"


def test_pinned_env_sets_openmp_pinning():
    env = harness.pinned_env({"EXTRA": "1"})
    assert env["OMP_PROC_BIND"] == "close"
    assert env["OMP_PLACES"] == "cores"
    assert env["OMP_DYNAMIC"] == "false"
    assert env["EXTRA"] == "1"
    assert env["PATH"] == os.environ["PATH"]


def test_a_single_threaded_kernel_is_pinned_to_the_last_allowed_core(monkeypatch, tmp_path):
    """run_kernel(core=...) pins the child (the kernel reads its own affinity back); none where
    the process may use one core only."""
    _fake_kernel(tmp_path, "affinity", "grep Cpus_allowed_list /proc/self/status | awk '{print \"{\\\"record\\\": "
                 "\\\"validation\\\", \\\"ok\\\": true, \\\"cpus\\\": \\\"\" $2 \"\\\"}\"}'\n"
                 "[ \"$1\" = --build-info ] && exit 0 || true")
    monkeypatch.setenv("THROUGHPUT_KERNELS_DIR", str(tmp_path))
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        assert harness.single_core() is None
        pytest.skip("one core allowed: nothing to pin to")
    core = harness.single_core()
    assert core == allowed[-1]
    assert harness.run_kernel("affinity", {}, core=core).validation["cpus"] == str(core)
    assert harness.run_kernel("affinity", {}).validation["cpus"] != str(core)  # unpinned: all allowed


def test_calibration_follows_bench_hpp(monkeypatch):
    """The Python Calibration is bench::Calibration's rule: one call per warm-up repetition, then
    ceil(1.1 * minimum / call) from the last warm-up call, raised (never lowered) after a short
    sample, and capped by what the sample may cost in all."""
    calibration = harness.Calibration(warmup=1, min_sample_s=0.1)
    assert calibration.loops(0) == 1
    calibration.update(0, 1, 0.008, 0.008)
    assert calibration.loops(1) == 14  # ceil(13.75)
    calibration.update(1, 14, 0.05, 0.05)  # short: the pass ran faster than the warm-up
    assert calibration.loops(2) == 31  # ceil(0.11 / (0.05 / 14))
    calibration.update(2, 31, 0.2, 0.2)  # long enough: kept
    assert calibration.loops(3) == 31
    capped = harness.Calibration(warmup=1, min_sample_s=0.1, max_sample_s=1.0)
    capped.update(0, 1, 0.008, 0.4)  # a pass reads 8 ms but costs 0.4 s with its opening
    assert capped.loops(1) == 2


def test_non_json_output_raises(monkeypatch, tmp_path):
    _fake_kernel(tmp_path, "chatty", "echo 'hello world'")
    monkeypatch.setenv("THROUGHPUT_KERNELS_DIR", str(tmp_path))
    with pytest.raises(harness.KernelError, match="not JSON"):
        harness.run_kernel("chatty", {})


def test_missing_validation_record_raises(monkeypatch, tmp_path):
    _fake_kernel(tmp_path, "novalid",
                 "echo '{\"record\": \"timing\", \"rep\": 0, \"warmup\": false, \"wall_s\": 1.0}'")
    monkeypatch.setenv("THROUGHPUT_KERNELS_DIR", str(tmp_path))
    with pytest.raises(harness.KernelError, match="one validation record"):
        harness.run_kernel("novalid", {})


def test_validation_not_ok_with_exit_zero_raises(monkeypatch, tmp_path):
    _fake_kernel(tmp_path, "liar",
                 "echo '{\"record\": \"timing\", \"rep\": 0, \"warmup\": false, \"wall_s\": 1.0}'\n"
                 "echo '{\"record\": \"validation\", \"ok\": false, \"wrong_values\": 3}'")
    monkeypatch.setenv("THROUGHPUT_KERNELS_DIR", str(tmp_path))
    with pytest.raises(harness.KernelError, match="validation failed"):
        harness.run_kernel("liar", {})


def test_nonzero_exit_includes_stderr(monkeypatch, tmp_path):
    _fake_kernel(tmp_path, "crash", "echo 'something broke' >&2\nexit 7")
    monkeypatch.setenv("THROUGHPUT_KERNELS_DIR", str(tmp_path))
    with pytest.raises(harness.KernelError) as info:
        harness.run_kernel("crash", {"n": 3})
    message = str(info.value)
    assert "crash" in message and "7" in message and "something broke" in message


# --- time_python ------------------------------------------------------------------------------

def test_time_python_rows_and_outputs():
    calls = []

    def function():
        calls.append(len(calls))
        return len(calls) * 10

    frame, outputs = harness.time_python(function, repetitions=3, warmup=2, method="test", n=7)
    assert len(calls) == 5
    assert outputs == [10, 20, 30, 40, 50]
    assert len(frame) == 5
    assert list(frame["warmup"]) == [True, True, False, False, False]
    assert list(frame["rep"]) == [-2, -1, 0, 1, 2]
    assert set(frame["method"]) == {"test"} and set(frame["n"]) == {7}
    assert (frame["wall_s"] >= 0).all()
    assert {"wall_s", "cpu_s"} <= set(frame.columns)


def test_time_python_no_warmup():
    frame, outputs = harness.time_python(lambda: "x", repetitions=1, warmup=0)
    assert len(frame) == 1 and outputs == ["x"]
    assert not frame["warmup"].any()
    assert list(frame["rep"]) == [0]


@pytest.mark.parametrize("repetitions, warmup", [(0, 1), (-1, 0), (1, -1)])
def test_time_python_rejects_bad_counts(repetitions, warmup):
    called = []
    with pytest.raises(ValueError, match="repetitions"):
        harness.time_python(lambda: called.append(1), repetitions=repetitions, warmup=warmup)
    assert not called


def test_retakes_rule_judges_the_delay_by_the_samples_threads():
    rule = harness.Retakes(max_share=0.02, max_retakes=3)
    assert rule.disturbed(0.03, 1.0) and not rule.disturbed(0.01, 1.0)
    assert not rule.disturbed(0.03, 1.0, threads=2) and rule.disturbed(0.05, 1.0, threads=2)
    assert not rule.disturbed(math.nan, 1.0)  # unknown: never called disturbed
    assert not harness.Retakes().disturbed(10.0, 1.0)  # no rule, no retake
    assert rule.kernel_args() == {"max-run-delay-share": 0.02, "max-sample-retakes": 3}
    for share, retakes in ((1.0, 1), (-0.01, 1), (0.02, -1)):
        with pytest.raises(ValueError, match="max_share"):
            harness.Retakes(share, retakes)


def test_time_python_retakes_a_disturbed_sample_never_a_warmup(monkeypatch):
    # a process that waits a whole second for a CPU around every take: every measured sample
    # is disturbed, and is taken again as often as the rule allows; every call is returned
    monkeypatch.setattr(harness, "run_delay_since", lambda before: 1.0)
    frame, outputs = harness.time_python(lambda: "x", repetitions=2, warmup=1,
                                         retakes=harness.Retakes(max_share=0.02, max_retakes=2))
    assert list(frame["sample_retakes"]) == [0, 2, 2] and list(frame["run_delay_s"]) == [1.0, 1.0, 1.0]
    assert len(outputs) == harness.passes_made(frame) == 1 + 3 + 3


def test_time_python_keeps_an_undisturbed_sample_and_an_unknown_delay(monkeypatch):
    frame, _ = harness.time_python(lambda: None, 2, 0, retakes=harness.Retakes(0.02, 3))
    assert frame["sample_retakes"].le(3).all() and frame["run_delay_s"].ge(0).all()
    monkeypatch.setattr(harness, "run_delay_since", lambda before: math.nan)
    frame, outputs = harness.time_python(lambda: None, 2, 0, retakes=harness.Retakes(0.02, 3))
    assert list(frame["sample_retakes"]) == [0, 0] and len(outputs) == 2


def test_every_live_thread_has_its_run_delay():
    own = harness.run_delay_seconds()
    delays = harness.thread_run_delays()
    assert str(threading.get_native_id()) in delays and delays[str(threading.get_native_id())] >= own >= 0


def test_a_thread_that_ends_during_a_sample_never_makes_its_run_delay_negative(monkeypatch):
    # a thread with 5 s of run delay ends during the sample: the live threads' totals would fall by 5 s
    snapshots = iter([{"1": 1.0, "2": 5.0}, {"1": 1.25, "3": 0.5}])
    monkeypatch.setattr(harness, "thread_run_delays", lambda: next(snapshots))
    before = harness.thread_run_delays()
    assert harness.run_delay_since(before) == pytest.approx(0.25 + 0.5)  # the main thread's, the new one's whole
    monkeypatch.setattr(harness, "thread_run_delays", lambda: {})
    assert math.isnan(harness.run_delay_since({"1": 1.0}))
    monkeypatch.undo()
    # a real sample that starts and ends threads
    threads = [threading.Thread(target=sum, args=(range(10**5),)) for _ in range(8)]
    row = harness.timed(lambda: [[t.start() for t in threads], [t.join() for t in threads]])
    assert row["run_delay_s"] >= 0


def _who_and_where(value: int) -> tuple[int, set[int], int]:
    return os.getpid(), os.sched_getaffinity(0), value + 1


def _fails(name: str) -> None:
    raise ValueError(f"{name} is not a method")


def _numba_state() -> tuple[bool, int, bool]:
    from numba.core import entrypoints

    from throughput.inputs.checksums import _mix_sum_numba

    return entrypoints._already_initialized, len(_mix_sum_numba.overloads), "scipy.linalg" in sys.modules


def test_a_fresh_process_finds_numbas_set_up_done_and_loads_its_methods_code_itself():
    # core/jit_setup.py: the fork server ran numba's extension entry points and its BLAS probe
    # (scipy.linalg), once; the method's own compiled code is not there: a round loads it itself
    initialized, overloads, blas_probed = harness.in_fresh_process(_numba_state)
    assert initialized and blas_probed and overloads == 0


def test_a_python_method_runs_in_a_fresh_pinned_process_and_its_error_comes_back():
    core = harness.single_core()
    first = harness.in_fresh_process(_who_and_where, 41, core=core)
    second = harness.in_fresh_process(_who_and_where, 1)
    assert first[2] == 42 and second[2] == 2
    assert len({os.getpid(), first[0], second[0]}) == 3  # a new interpreter each call, never this one
    assert first[1] == ({core} if core is not None else os.sched_getaffinity(0))
    assert second[1] == os.sched_getaffinity(0)  # unpinned: every core this process may use
    with pytest.raises(ValueError, match="numpyy is not a method"):
        harness.in_fresh_process(_fails, "numpyy")
