"""The memory-bandwidth experiment's report, tested without running a kernel (the kernels'
own tests are tests/kernels/test_kernels_memory_bandwidth.py)."""
from __future__ import annotations

import math

import pytest

from throughput.experiments.memory_bandwidth import analysis as mb_analysis
from throughput.experiments.memory_bandwidth import report as mb_report

MIB = 2**20


@pytest.mark.parametrize("n, cache, state, ratio, macros", [
    # 2^24 doubles (128 MiB) against a 32 MiB cache: four times, well beyond
    (2**24, 32 * MIB, "beyond", 4.0, {"MbwCacheRatio": r"\num{4}", "MbwCacheMiB": r"\num{32}"}),
    # 2^22 doubles (32 MiB) against a 24 MiB cache: 1.33 times, partly cache rates
    (2**22, 24 * MIB, "notbeyond", 4 / 3, {"MbwCacheRatio": r"\num{1.3}", "MbwCacheMiB": r"\num{24}"}),
    # just under four times: not beyond
    (2**24 - 1, 32 * MIB, "notbeyond", 4 - 8 / (32 * MIB), {"MbwCacheRatio": r"\num{4}", "MbwCacheMiB": r"\num{32}"}),
    # no cache size on this host
    (2**24, None, "unknown", math.nan, {"MbwCacheRatio": "n/a", "MbwCacheMiB": "n/a"}),
])
def test_the_cache_state_and_numbers_are_the_ones_the_sizes_give(monkeypatch, n, cache, state, ratio, macros):
    """The section words MbwCacheState (paper/sections/memory_bandwidth.tex); its numbers are macros."""
    monkeypatch.setattr(mb_analysis.provenance, "last_level_cache_bytes", lambda: cache)
    fit = mb_analysis.cache_fit(n)
    assert fit["state"] == state
    assert fit["ratio"] == pytest.approx(ratio, nan_ok=True)
    assert fit["cache_mib"] == pytest.approx(cache / MIB if cache else math.nan, nan_ok=True)
    assert mb_report._cache_macros(fit) == {"MbwCacheState": state, **macros}


def test_the_huge_page_state_and_counts_are_the_ones_the_processes_recorded():
    """A process counts as in huge pages where every byte of its arrays was (STREAM: three arrays,
    an immutable add two, an in-place add one, each n doubles); -1: it could not tell. The section
    words MbwHugePagesState."""
    import pandas as pd

    n = 1000
    rows = pd.DataFrame({"method": ["C++", "C++", "STREAM", "STREAM", "numba"], "mode": ["inplace", "immutable",
                         "n/a", "n/a", "inplace"], "run": ["a", "b", "c", "c", "d"], "round": [0, 0, 0, 1, 0],
                         "n": n, "huge_page_bytes": [8 * n, 8 * n, 3 * 8 * n, -1, 0]})
    pages = mb_analysis.huge_pages(rows)
    # a: its one array whole; b: half of its two; c round 0: all three; c round 1: could not tell; numba: not asked
    assert pages == {"state": "recorded", "full": 2, "processes": 4, "unknown": 1}
    macros = mb_report._huge_page_macros(pages)
    assert (macros["MbwHugePagesState"], macros["MbwHugePagesUnknownState"]) == ("recorded", "some")
    assert mb_report._huge_page_macros({**pages, "unknown": 0})["MbwHugePagesUnknownState"] == "none"
    assert mb_analysis.huge_pages(rows.drop(columns="huge_page_bytes"))["state"] == "notrecorded"
