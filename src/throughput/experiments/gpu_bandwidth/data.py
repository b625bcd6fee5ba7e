"""The inputs of every method and the checks of its output: the initial values
(i % 1000), the jagged events (the same as kernels/gpu_bandwidth/jagged.hpp's),
the expected output of each jagged operation (numpy alone, and its sum in closed
form), the exact validation, and the bytes a case moves (from cases.KERNEL_CASES)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .cases import CONSTANT, INIT_PERIOD, JAGGED_KERNEL_CASE, JAGGED_OPS, KERNEL_CASE


def initial(n: int, dtype: str) -> np.ndarray:
    """i % 1000 as `dtype`, without n-sized integer temporaries."""
    return np.resize(np.arange(INIT_PERIOD, dtype=dtype), n)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """kernels/gpu_bandwidth/jagged.hpp's splitmix64, in uint64 arithmetic (wraps like C++)."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def jagged_counts(events: int, mean: int) -> np.ndarray:
    """Particles per event: splitmix64(e) % (2*mean + 1), empty events included."""
    return (_splitmix64(np.arange(events, dtype=np.uint64)) % np.uint64(2 * mean + 1)).astype(np.int64)


@dataclass
class Jagged:
    """Offsets + content: event e owns particles offsets[e]..offsets[e+1]."""

    offsets: np.ndarray        # int64, events + 1
    event_values: np.ndarray   # e % 1000
    values: np.ndarray         # particle j: j % 1000
    pair_offsets: np.ndarray   # int64, events + 1: where each event's pairs start

    @property
    def events(self) -> int:
        return self.offsets.size - 1

    @property
    def particles(self) -> int:
        return int(self.offsets[-1])

    @property
    def pairs(self) -> int:
        return int(self.pair_offsets[-1])


def make_jagged(events: int, mean: int, dtype: str) -> Jagged:
    counts = jagged_counts(events, mean)
    return from_counts(counts, dtype)


def from_counts(counts: np.ndarray, dtype: str, values: np.ndarray | None = None,
                event_values: np.ndarray | None = None) -> Jagged:
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    pair_offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts * (counts - 1) // 2, out=pair_offsets[1:])
    particles = int(offsets[-1])
    if values is None:
        values = initial(particles, dtype)
    if event_values is None:
        event_values = initial(counts.size, dtype)
    return Jagged(offsets, np.asarray(event_values, dtype=dtype), np.asarray(values, dtype=dtype), pair_offsets)


def reference(op: str, data: Jagged, passes: int) -> np.ndarray:
    """Expected output of `op`, with numpy alone (independent of numba, awkward and CUDA)."""
    dtype = data.values.dtype
    if op == "flat_inplace":
        return data.values + dtype.type(passes * CONSTANT)
    if op == "flat_immutable":
        return data.values + dtype.type(CONSTANT)
    counts = np.diff(data.offsets)
    if op == "explode":
        return np.repeat(data.event_values, counts)
    if op == "combine":
        out = np.empty(data.pairs, dtype=dtype)
        for n in np.unique(counts[counts >= 2]):
            events = np.nonzero(counts == n)[0]
            i, j = np.triu_indices(int(n), 1)  # row by row: (0,1), (0,2), ..., (1,2), ...
            first = data.offsets[events][:, None]
            where = data.pair_offsets[events][:, None] + np.arange(i.size)
            out[where] = data.values[first + i] + data.values[first + j]
        return out
    raise ValueError(f"unknown jagged operation {op!r} (known: {', '.join(JAGGED_OPS)})")


def exact_checksum(op: str, data: Jagged, passes: int) -> float:
    """Sum of the output of `op`, from closed forms in integers."""
    counts = np.diff(data.offsets)
    values = data.values.astype(np.int64)
    if op == "flat_inplace":
        return float(int(values.sum()) + data.particles * passes * int(CONSTANT))
    if op == "flat_immutable":
        return float(int(values.sum()) + data.particles * int(CONSTANT))
    if op == "explode":
        return float(int((counts * data.event_values.astype(np.int64)).sum()))
    if op == "combine":
        running = np.concatenate([[0], np.cumsum(values)])
        per_event = running[data.offsets[1:]] - running[data.offsets[:-1]]
        return float(int(((counts - 1).clip(min=0) * per_event).sum()))
    raise ValueError(f"unknown jagged operation {op!r}")


def validate_output(got: np.ndarray, expected: np.ndarray, label: str) -> dict[str, Any]:
    """Exact comparison; raises AssertionError (fails the job) on any wrong value."""
    got = np.asarray(got)
    if got.shape != expected.shape:
        raise AssertionError(f"{label}: {got.size} values, expected {expected.size}")
    wrong = int(np.count_nonzero(got != expected))
    checksum = float(got.sum(dtype=np.float64))
    if wrong:
        raise AssertionError(f"{label}: validation failed: {wrong} of {got.size} values wrong")
    return {"ok": True, "wrong_values": wrong, "checksum": checksum}


def case_shape(n: int = 0, particles: int = 0, events: int = 0, pairs: int = 0) -> dict[str, int]:
    """The counts the case table's terms name (`offsets`: events + 1)."""
    return {"n": n, "particles": particles, "events": events, "offsets": events + 1, "pairs": pairs}


def jagged_shape(data: Jagged) -> dict[str, int]:
    """A jagged run's counts (the flat add's n: its particles)."""
    return case_shape(data.particles, data.particles, data.events, data.pairs)


def case_bytes_moved(case: str, dtype, counts: dict[str, int]) -> int:
    """Bytes one pass of the CUDA program's `case` reads and writes (its row of cases.KERNEL_CASES)."""
    widths = {"value": np.dtype(dtype).itemsize, "index": 8}
    return sum(times * counts[count] * widths[width] for times, count, width in KERNEL_CASE[case].bytes_moved)


def added(case: str, takes: int) -> int:
    """How many times the constant `case`'s expected values hold after `takes` takes."""
    return {"none": 0, "one": 1, "every_take": takes}[KERNEL_CASE[case].adds]


def jagged_values(op: str, data: Jagged) -> int:
    """The values a jagged operation's record counts (its n): particles, or pairs for combine."""
    return jagged_shape(data)[KERNEL_CASE[JAGGED_KERNEL_CASE[op]].values]


def jagged_bytes_moved(op: str, data: Jagged) -> int:
    """Bytes an operation reads and writes (the same counting for every method: the case table's)."""
    return case_bytes_moved(JAGGED_KERNEL_CASE[op], data.values.dtype, jagged_shape(data))
