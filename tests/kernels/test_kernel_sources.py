"""Each kernel binary's own sources (what its Snakemake rule depends on)."""
from __future__ import annotations

import pytest

from throughput.core import harness
from throughput.setup import kernel_sources


def _relative(binary: str) -> set[str]:
    return {path.split("/kernels/", 1)[1] for path in kernel_sources.sources(binary)}


def test_every_built_kernel_is_known_with_its_main_source():
    # (beside the programs: the AOD classes' ROOT dictionary files, which ROOT looks for there)
    built = {p.name for p in harness.kernels_dir().iterdir() if p.is_file() and not p.name.startswith(".")
             and not p.name.endswith(("_rdict.pcm", ".rootmap"))}
    known = kernel_sources.main_sources()
    assert built - set(known) == set(), "built kernels that no CMakeLists.txt defines"
    assert {f"add_constant_O{level}" for level in range(4)} <= set(known)  # the foreach loop is expanded


def test_a_reader_kernel_depends_on_its_headers_and_not_on_its_neighbours():
    sources = _relative("read_branch")
    assert {"reader_comparison/read_branch.cpp", "reader_comparison/pass.hpp", "common/page_cache.hpp",
            "common/bench.hpp", "CMakeLists.txt", "reader_comparison/CMakeLists.txt", "build.sh"} <= sources
    assert "datasets/make_aod_like.cpp" not in sources
    assert "common/aod_classes.cmake" in sources  # generates the classes it reads (aod_classes.h)
    assert not any(s.startswith(("writing/", "memory_bandwidth/", "datasets/")) for s in sources)


def test_a_generator_does_not_depend_on_the_readers_of_its_data():
    sources = _relative("make_nanoaod_like")
    assert "datasets/make_nanoaod_like.cpp" in sources
    assert "common/page_cache.hpp" not in sources and "datasets/tree_to_rntuple.cpp" not in sources
    # every generated input's generator lives in datasets/ (the AOD-like one too: two experiments read its files)
    assert kernel_sources.main_sources()["make_aod_like"] == kernel_sources.KERNELS_DIR / "datasets/make_aod_like.cpp"


def test_a_kernel_with_a_static_library_depends_on_the_library_sources():
    sources = _relative("read_simple")
    assert {"writing/read_simple.cpp", "writing/media.cpp", "writing/simple_format.hpp"} <= sources
    assert "writing/write_bench.cpp" not in sources


def test_an_unknown_kernel_is_named():
    with pytest.raises(kernel_sources.UnknownKernel, match="no_such_kernel"):
        kernel_sources.sources("no_such_kernel")


def test_the_cuda_program_depends_on_the_python_table_its_case_rows_are_generated_from():
    """gpu_bandwidth_cases.inc is made at build time from gpu_bandwidth/cases.py (KERNEL_CASES):
    an edit to that table rebuilds the program and re-runs what it measured."""
    from throughput import REPO

    sources = {str(path) for path in kernel_sources.sources("gpu_bandwidth_cuda")}
    assert str(REPO / "src/throughput/experiments/gpu_bandwidth/cases.py") in sources
    assert str(REPO / "kernels/gpu_bandwidth/CMakeLists.txt") in sources
