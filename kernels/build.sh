#!/usr/bin/env bash
# Builds the benchmark kernels against the ROOT wheel of a Python environment.
#   kernels/build.sh BUILD_DIR [PYTHON [TARGET...]]
# PYTHON defaults to the `python3` on PATH (the project's .venv when run from
# make or Snakemake); TARGETs (binary names) default to every kernel.
# Re-running only rebuilds what changed. Builds into one BUILD_DIR take turns
# (a lock), so Snakemake may run one job per binary side by side.
#
# The wheel's CMake config and root-config point to a `mock_site_packages`
# folder that does not exist (DESIGN.md, "Environment facts"); the two links
# below make both resolve to the real site-packages.
set -euo pipefail
build_dir=${1:?usage: kernels/build.sh BUILD_DIR [PYTHON]}
python=${2:-python3}
targets=("${@:3}")
source_dir=$(cd "$(dirname "$0")" && pwd)

site=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if [ ! -d "$site/ROOT/cmake" ]; then
  echo "kernels/build.sh: no ROOT wheel in $site (install envs/requirements.txt first)" >&2
  exit 1
fi
[ -e "$(dirname "$site")/mock_site_packages" ] || ln -s "$site" "$(dirname "$site")/mock_site_packages"
[ -e "$site/ROOT/mock_site_packages" ] || ln -s .. "$site/ROOT/mock_site_packages"

# CUDA kernels (GPU part of seed 000's Table 2): the venv's nvcc (PyPI's
# nvidia-cuda-nvcc), else one on PATH; none: those kernels are skipped.
nvcc=$(ls "$site"/nvidia/cu*/bin/nvcc 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$nvcc" ] || nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || echo "kernels/build.sh: CUDA kernels skipped: no nvcc found (neither in $site/nvidia nor on PATH)" >&2

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
mkdir -p "$build_dir"
exec 9>"$build_dir/.build.lock"
flock 9
cached_nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build_dir/CMakeCache.txt" 2>/dev/null | sed 's/.*NOTFOUND$//' || true)
# the Python that generates the GPU case rows from the package (kernels/gpu_bandwidth/CMakeLists.txt)
python_path=$(command -v "$python")
cached_python=$(sed -n 's/^THROUGHPUT_PYTHON:[A-Z]*=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
if [ ! -f "$build_dir/CMakeCache.txt" ] || [ "$cached_nvcc" != "$nvcc" ] || [ "$cached_python" != "$python_path" ]; then
  cmake -S "$source_dir" -B "$build_dir" "${generator[@]}" ${nvcc:+-DCMAKE_CUDA_COMPILER="$nvcc"} \
    -DTHROUGHPUT_PYTHON="$python_path" \
    -DROOT_DIR="$site/ROOT/cmake" -DROOT_WHEEL_LIBS="$site/root.libs" >"$build_dir/configure.log" 2>&1 ||
    { cat "$build_dir/configure.log" >&2; exit 1; }
fi
cmake --build "$build_dir" --parallel ${targets[@]:+--target "${targets[@]}"}
