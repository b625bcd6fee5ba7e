"""Whether one array is well beyond a cache, so that the rates measured on it are memory rates
rather than partly cache rates: one check for the CPU's last-level cache
(experiments.memory_bandwidth.analysis.cache_fit) and the GPU's L2 (experiments.gpu_bandwidth.device.l2_fit).
The paper words each state."""
from __future__ import annotations

import math
from typing import Any

def beyond(array_bytes: float, cache_bytes: float | None, factor: float, size_key: str = "cache_mib") -> dict[str, Any]:
    """`state` beyond (the array is at least `factor` times the cache), notbeyond, or unknown (no
    cache size: `cache_bytes` None), with the array over the cache (`ratio`) and the cache in MiB
    (under `size_key`); both NaN where unknown."""
    if cache_bytes is None:
        return {"state": "unknown", "ratio": math.nan, size_key: math.nan}
    ratio = array_bytes / cache_bytes
    return {"state": "beyond" if ratio >= factor else "notbeyond", "ratio": ratio, size_key: cache_bytes / 2**20}
