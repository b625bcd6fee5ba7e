"""numba's one-time set-up, done by the fork server of harness.in_fresh_process before it forks
a round's process.

The first compiled function a process calls, loaded from numba's cache or compiled, first makes
numba run its extensions' entry points (awkward's imports awkward), probe for a BLAS (importing
scipy.linalg) and fill its target's registries: about 0.9 s of every fresh process here
(2026-12-02), none of it the measured method's. That is the library's set-up, as an import is,
so the server does it once; a round's process still loads (or compiles) its own method's code
itself, untimed before its warm-up pass. Nothing here starts a thread (the function is not
parallel) or touches a GPU: forking after either is unsafe, and a CUDA context is a round's own.
"""
from __future__ import annotations

import numba


@numba.njit(cache=True)
def _increment(value):
    return value + 1


_increment(1)
