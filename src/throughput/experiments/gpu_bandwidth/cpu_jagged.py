"""Explode and combine, and the flat add beside them, on the CPU: numba (one
thread and many) and awkward, timed by the steady clock in samples calibrated to a
minimum length (harness.time_python), validated exactly after the last pass."""
from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np
import pandas as pd

from ...core import flat_add, harness
from .cases import CONSTANT, CPU_METHOD_JAGGED, CPU_METHODS
from .data import (Jagged, exact_checksum, from_counts, jagged_bytes_moved, jagged_values, reference,
                   validate_output)


@numba.njit(parallel=True, cache=True)
def explode_cpu(offsets, event_values, out):
    """out[j] = event_values[e] for every particle j of event e (events in parallel)."""
    for e in numba.prange(event_values.size):
        value = event_values[e]
        for j in range(offsets[e], offsets[e + 1]):
            out[j] = value


@numba.njit(cache=True)
def pair_offsets_cpu(offsets, pair_offsets):
    """Where each event's pairs start: a sequential prefix sum of n(n-1)/2."""
    pair_offsets[0] = 0
    for e in range(offsets.size - 1):
        n = offsets[e + 1] - offsets[e]
        pair_offsets[e + 1] = pair_offsets[e] + n * (n - 1) // 2


@numba.njit(parallel=True, cache=True)
def _combine_fill_cpu(offsets, pair_offsets, values, out):
    for e in numba.prange(offsets.size - 1):
        k = pair_offsets[e]
        end = offsets[e + 1]
        for i in range(offsets[e], end):
            for j in range(i + 1, end):
                out[k] = values[i] + values[j]
                k += 1


def combine_cpu(offsets, values, pair_offsets, out):
    """Every pair i < j within an event, row by row: out = values[i] + values[j]."""
    pair_offsets_cpu(offsets, pair_offsets)
    _combine_fill_cpu(offsets, pair_offsets, values, out)


def _awkward_array(data: Jagged):
    import awkward as ak

    layout = ak.contents.ListOffsetArray(ak.index.Index64(data.offsets), ak.contents.NumpyArray(data.values))
    return ak.Array(layout)


def awkward_op(op: str, jagged_array, event_values: np.ndarray, constant) -> np.ndarray:
    """The same operations with awkward's own functions (immutable only)."""
    import awkward as ak

    if op == "flat_immutable":
        return ak.to_numpy(ak.flatten(jagged_array + constant))
    if op == "explode":
        return ak.to_numpy(ak.flatten(ak.broadcast_arrays(event_values, jagged_array)[0]))
    if op == "combine":
        pairs = ak.combinations(jagged_array, 2)
        return ak.to_numpy(ak.flatten(pairs["0"] + pairs["1"]))
    raise ValueError(f"awkward has no {op!r} here (only {', '.join(CPU_METHOD_JAGGED['awkward'])})")


def jagged_cpu(method: str, op: str, data: Jagged, threads: int, repetitions: int, warmup: int,
               min_sample_s: float = 0.0,
               retakes: harness.Retakes = harness.Retakes()) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Time one jagged operation on the CPU: `warmup` passes alone, then `repetitions` samples
    of as many passes as reach `min_sample_s` (each row's `loops`; its wall and CPU time the
    sample's), each taken again while `retakes` says it was disturbed; validate the output exactly, counting every pass (an in-place add adds once per
    pass)."""
    dtype = data.values.dtype
    c = dtype.type(CONSTANT)
    if method == "numba":
        numba.set_num_threads(threads)
        tiny = from_counts(np.array([2, 0, 3]), dtype.name)  # compile outside the timed passes
        if op == "flat_inplace":
            flat_add.add_in_place(tiny.values.copy(), c)
            a = data.values.copy()
            run = functools.partial(flat_add.add_in_place, a, c)
            got = lambda: a  # noqa: E731
        elif op == "flat_immutable":
            flat_add.add_immutable(tiny.values, tiny.values.copy(), c)
            b = np.full(data.particles, -1, dtype)
            run = functools.partial(flat_add.add_immutable, data.values, b, c)
            got = lambda: b  # noqa: E731
        elif op == "explode":
            explode_cpu(tiny.offsets, tiny.event_values, np.empty(tiny.particles, dtype))
            out = np.full(data.particles, -1, dtype)
            run = functools.partial(explode_cpu, data.offsets, data.event_values, out)
            got = lambda: out  # noqa: E731
        elif op == "combine":
            combine_cpu(tiny.offsets, tiny.values, np.empty_like(tiny.pair_offsets), np.empty(tiny.pairs, dtype))
            out = np.full(data.pairs, -1, dtype)
            pair_offsets = np.empty_like(data.pair_offsets)
            run = functools.partial(combine_cpu, data.offsets, data.values, pair_offsets, out)
            got = lambda: out  # noqa: E731
        else:
            raise ValueError(f"unknown jagged operation {op!r}")
    elif method == "awkward":
        threads = 1
        array = _awkward_array(data)
        last = []  # only the last output kept: a sample may repeat the pass a hundred times

        def run():
            last[:] = [awkward_op(op, array, data.event_values, c)]

        got = lambda: last[0]  # noqa: E731
    else:
        raise ValueError(f"unknown CPU method {method!r} (known: {', '.join(CPU_METHODS)})")
    frame, calls = harness.time_python(run, repetitions, warmup, min_sample_s, retakes, threads)
    passes = len(calls)
    expected = reference(op, data, passes)
    validation = validate_output(got(), expected, f"{method} {op} {dtype.name}")
    validation["passes"] = passes
    if validation["checksum"] != exact_checksum(op, data, passes):
        raise AssertionError(f"{method} {op} {dtype.name}: checksum {validation['checksum']} != "
                             f"{exact_checksum(op, data, passes)}")
    n = jagged_values(op, data)
    # n and bytes_moved are one pass's (as host_copy's rows give them): rated by the time per pass
    frame = frame.assign(case=op, dtype=dtype.name, n=n, threads=threads, bytes_moved=jagged_bytes_moved(op, data),
                         clock="steady_clock")
    return frame, validation
