"""The checksum every reader computes per value (kernels/reader_comparison/pass.hpp's
definition), shared by the readers that are measured and the references they are checked
against: each value's bit pattern, zero-extended to 64 bits, mixed and summed modulo 2^64."""
from __future__ import annotations

import numpy as np

# The mixing constant of pass.hpp (2^64 / golden ratio), so C++, Java and Python agree.
GOLDEN = 0x9E3779B97F4A7C15

def _mix_sum_numpy(bits: np.ndarray) -> int:
    total = 0
    for start in range(0, bits.size, 1 << 20):
        h = (bits[start:start + (1 << 20)].astype(np.uint64) + np.uint64(1)) * np.uint64(GOLDEN)
        h ^= h >> np.uint64(32)
        total = (total + int(h.sum(dtype=np.uint64))) % 2**64
    return total


try:  # fused into one loop with numba, as the C++ readers do it per value
    import numba

    @numba.njit(cache=True, nogil=True)
    def _mix_sum_numba(bits):
        total = np.uint64(0)
        one, golden, shift = np.uint64(1), np.uint64(GOLDEN), np.uint64(32)
        for b in bits:
            h = (np.uint64(b) + one) * golden
            total += h ^ (h >> shift)
        return total
except ImportError:  # pragma: no cover - numba is in the pinned environment
    _mix_sum_numba = None


# The value types the readers compare (read_branch's leaf types: Float_t, Double_t,
# Char_t ... ULong64_t, Bool_t), as numpy kinds: bool, signed and unsigned integers, floats.
NUMERIC_KINDS = "biuf"


def checksum(values: np.ndarray) -> int:
    """The readers' checksum of `values` (an int in [0, 2^64)): each value's bit pattern in
    its own type, zero-extended to 64 bits (pass.hpp), so float32 and float64 of the same
    number differ."""
    values = np.ascontiguousarray(values)
    if values.dtype.kind not in NUMERIC_KINDS or values.dtype.itemsize not in (1, 2, 4, 8):
        raise TypeError(f"the readers compare numeric values (bool, integers, floats), got {values.dtype}")
    bits = values.reshape(-1).view(f"=u{values.dtype.itemsize}")
    return int(_mix_sum_numba(bits)) if _mix_sum_numba is not None else _mix_sum_numpy(bits)


def hex_checksum(value: int) -> str:
    return f"{value % 2**64:016x}"
