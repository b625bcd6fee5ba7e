"""numba kernels that add a constant to every value of a flat array, in place and
into a second array: a method of the CPU memory-bandwidth experiment, and the flat
baseline beside the GPU experiment's jagged explode/combine on the CPU. One
definition, so both measure the same loop."""
from __future__ import annotations

import numba


@numba.njit(parallel=True, cache=True)
def add_in_place(a, c):
    for i in numba.prange(a.size):
        a[i] += c


@numba.njit(parallel=True, cache=True)
def add_immutable(a, b, c):
    for i in numba.prange(a.size):
        b[i] = a[i] + c
