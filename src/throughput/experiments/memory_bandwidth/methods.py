"""The measured Python methods (numpy, numba) and the exact check of every
output value that all methods share, with the expected checksum."""
from __future__ import annotations

import numba
import numpy as np
import pandas as pd

from ...core import flat_add, harness
from .vocabulary import CONSTANT, INIT_PERIOD

def huge_page_bytes() -> int:
    """Bytes of this process's anonymous memory in transparent huge pages (AnonHugePages of
    /proc/self/smaps_rollup), -1 where unknown: as the C++ kernels report theirs (NumPy asks
    for huge pages on its own large arrays, with madvise, as kernels/common/bench.hpp does)."""
    try:
        with open("/proc/self/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def expected_checksum(n: int, mode: str, passes: int) -> float:
    """Sum of the output array after `passes` in-place passes (or one immutable pass)."""
    full, rest = divmod(n, INIT_PERIOD)
    base = full * (INIT_PERIOD * (INIT_PERIOD - 1) // 2) + rest * (rest - 1) // 2
    return float(base + n * CONSTANT * (passes if mode == "inplace" else 1))


def _initial_chunks(n: int, chunk: int = 1 << 22):
    """(start, stop, i % 1000 as float64 for i in [start, stop)): the initial values a chunk at a time."""
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        yield start, stop, (np.arange(start, stop) % INIT_PERIOD).astype(np.float64)


def _initial(n: int, chunk: int = 1 << 22) -> np.ndarray:
    """i % 1000 as float64, filled in chunks so no n-sized temporaries are made."""
    a = np.empty(n)
    for start, stop, values in _initial_chunks(n, chunk):
        a[start:stop] = values
    return a


def _check(out: np.ndarray, n: int, mode: str, passes: int, method: str, chunk: int = 1 << 22) -> float:
    """Check every element of `out` exactly against its known value, i % 1000 plus
    the constant once per pass (once for immutable; `passes` 0: the untouched
    input), as the C++ kernel does; return the checksum (the sum). Runs after
    the timed passes, a chunk at a time."""
    if out.shape != (n,):
        raise AssertionError(f"{method} {mode}: output has shape {out.shape}, expected ({n},)")
    added = CONSTANT * (passes if mode == "inplace" else 1)
    wrong, first = 0, None
    for start, stop, values in _initial_chunks(n, chunk):
        values += added
        bad = np.flatnonzero(out[start:stop] != values)
        if len(bad) and first is None:
            first = (start + int(bad[0]), float(out[start + bad[0]]), float(values[bad[0]]))
        wrong += len(bad)
    if wrong:
        index, got, expected_value = first
        raise AssertionError(f"{method} {mode}: {wrong} of {n} values wrong, the first at index {index}: "
                             f"{got} != {expected_value}")
    checksum = float(out.sum())
    expected = expected_checksum(n, mode, passes)
    if checksum != expected:
        raise AssertionError(f"{method} {mode}: checksum {checksum} != expected {expected}")
    return checksum


def _check_outputs(a: np.ndarray, out: np.ndarray, n: int, mode: str, passes: int, method: str) -> float:
    """The output's every element; for immutable, also that the input was left as it was."""
    if mode == "immutable":
        _check(a, n, "inplace", 0, f"{method} (its input)")
    return _check(out, n, mode, passes, method)


def _numpy_method(mode: str, n: int, repetitions: int, warmup: int, min_sample_s: float = 0.0,
                  retakes: harness.Retakes = harness.Retakes()) -> tuple[pd.DataFrame, float]:
    a = _initial(n)
    if mode == "inplace":
        huge = huge_page_bytes()
        frame, calls = harness.time_python(lambda: np.add(a, CONSTANT, out=a), repetitions, warmup, min_sample_s,
                                           retakes)
        out = a
    else:
        b = np.full(n, -1.0)
        huge = huge_page_bytes()
        frame, calls = harness.time_python(lambda: np.add(a, CONSTANT, out=b), repetitions, warmup, min_sample_s,
                                           retakes)
        out = b
    frame["huge_page_bytes"] = huge  # after the first touch of both arrays, as the kernels read it
    return frame, _check_outputs(a, out, n, mode, len(calls), "numpy")


def _numba_method(mode: str, n: int, threads: int, repetitions: int, warmup: int, min_sample_s: float = 0.0,
                  retakes: harness.Retakes = harness.Retakes()) -> tuple[pd.DataFrame, float]:
    numba.set_num_threads(threads)
    a = _initial(n)
    # Compile outside the timed passes (the warm-up pass would absorb it too,
    # but then warm-up timings would mix JIT and memory effects).
    if mode == "inplace":
        flat_add.add_in_place(np.zeros(2), 0.0)
        huge = huge_page_bytes()
        frame, calls = harness.time_python(lambda: flat_add.add_in_place(a, CONSTANT), repetitions, warmup,
                                           min_sample_s, retakes, threads)
        out = a
    else:
        flat_add.add_immutable(np.zeros(2), np.zeros(2), 0.0)
        b = np.full(n, -1.0)
        huge = huge_page_bytes()
        frame, calls = harness.time_python(lambda: flat_add.add_immutable(a, b, CONSTANT), repetitions, warmup,
                                           min_sample_s, retakes, threads)
        out = b
    frame["huge_page_bytes"] = huge
    return frame, _check_outputs(a, out, n, mode, len(calls), "numba")
