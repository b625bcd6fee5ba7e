"""Which source files each compiled kernel is made from, for Snakemake.

Each kernel binary gets its own rule whose inputs are exactly its sources, so
that an edit to one experiment's kernel re-runs that experiment alone, and a
dataset is re-made only when its generator's sources change (one rule for all
binaries made every notebook and dataset stale on any edit).

A binary's sources: its main file (named in its folder's CMakeLists.txt by
`throughput_kernel(NAME FILE LEVEL)` or `add_executable(NAME FILE)`), the
folder's other C++/CUDA files (its static libraries, e.g. writing_common), every
project header those include (followed through `#include "..."`), and the CMake
files and build script; a header generated at configure time (not a file of the
source tree) by the script that generates it (GENERATED_HEADERS). Read from the text rather than from the build system so
the answer is the same before the first build (a fresh clone) and after it.
"""
from __future__ import annotations

import re
import shutil
import sysconfig
from functools import lru_cache
from pathlib import Path

from .. import REPO

KERNELS_DIR = REPO / "kernels"
SOURCE_SUFFIXES = (".cpp", ".cu")
_TARGET = re.compile(r"^\s*(?:throughput_kernel|add_executable)\(\s*([^\s)]+)\s+([^\s)]+)", re.MULTILINE)
_LOOP = re.compile(r"foreach\(\s*(\w+)\s+([^)]*)\)")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


# Headers CMake generates in the build tree, and the files that generate them.
GENERATED_HEADERS = {"aod_classes.h": ("common/aod_classes.cmake", "common/CMakeLists.txt"),
                     "gpu_bandwidth_cases.inc": ("../src/throughput/experiments/gpu_bandwidth/cases.py",
                                                 "gpu_bandwidth/CMakeLists.txt")}


class UnknownKernel(KeyError):
    """A binary that no CMakeLists.txt under kernels/ defines."""


@lru_cache(maxsize=None)
def main_sources(kernels_dir: Path = KERNELS_DIR) -> dict[str, Path]:
    """Binary name -> its main source file, from every folder's CMakeLists.txt
    (`foreach(level 0 1 2 3)` loops around a target are expanded)."""
    binaries = {}
    for cmake in sorted(kernels_dir.glob("*/CMakeLists.txt")):
        text = cmake.read_text()
        loops = {name: values.split() for name, values in _LOOP.findall(text)}
        for name, source in _TARGET.findall(text):
            names = [name]
            for variable, values in loops.items():
                if "${" + variable + "}" in name:
                    names = [n.replace("${" + variable + "}", v) for n in names for v in values]
            for expanded in names:
                binaries[expanded] = cmake.parent / source
    return binaries


def _includes(path: Path, kernels_dir: Path) -> set[Path]:
    """`path` and every project header it includes, transitively (system headers are left out;
    a header generated at configure time stands for the files that generate it)."""
    seen: set[Path] = set()
    generators: set[Path] = set()
    todo = [path]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for name in _INCLUDE.findall(current.read_text()):
            found = [(folder / name).resolve() for folder in (current.parent, kernels_dir / "common")
                     if (folder / name).is_file()]
            if found:
                todo.append(found[0])
            else:
                generators |= {(kernels_dir / g).resolve() for g in GENERATED_HEADERS.get(name, ())}
    return seen | generators


def sources(binary: str, kernels_dir: Path = KERNELS_DIR) -> list[str]:
    """Every file whose change can change `binary`, sorted (paths as strings)."""
    mains = main_sources(kernels_dir)
    if binary not in mains:
        raise UnknownKernel(f"no CMakeLists.txt under {kernels_dir} defines a kernel named {binary!r} "
                            f"(known: {', '.join(sorted(mains))})")
    main = mains[binary]
    folder = main.parent
    other_mains = {p for p in mains.values() if p.parent == folder}
    library = [p for p in folder.iterdir() if p.suffix in SOURCE_SUFFIXES and p not in other_mains]
    files: set[Path] = set()
    for source in [main, *library]:
        files |= _includes(source.resolve(), kernels_dir.resolve())
    files |= {(kernels_dir / "CMakeLists.txt").resolve(), (folder / "CMakeLists.txt").resolve(),
              (kernels_dir / "build.sh").resolve()}
    return sorted(str(p) for p in files)


def find_nvcc() -> Path | None:
    """The nvcc kernels/build.sh uses: the venv's (PyPI's nvidia-cuda-nvcc), else
    one on PATH; None where there is none (the CUDA kernels are then not built)."""
    found = sorted(Path(sysconfig.get_paths()["purelib"]).glob("nvidia/cu*/bin/nvcc"))
    if found:
        return found[-1]
    on_path = shutil.which("nvcc")
    return Path(on_path) if on_path else None
