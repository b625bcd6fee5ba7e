#!/usr/bin/env bash
# Rebuilds what a Binder-like host would from binder/ alone (no Docker here):
# a fresh virtual environment from binder/requirements.txt, binder/postBuild,
# then every notebook executed with papermill and its default parameters.
#   binder/check_fresh_env.sh WORK_DIR
# Outputs (environment, kernels, executed notebooks, results) stay in WORK_DIR.
set -euo pipefail
work=$(mkdir -p "${1:?usage: binder/check_fresh_env.sh WORK_DIR}" && cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check -r binder/requirements.txt
export PATH="$work/venv/bin:$PATH" THROUGHPUT_BUILD_DIR="$work/kernels" THROUGHPUT_KERNELS_DIR="$work/kernels/bin"
bash binder/postBuild

mkdir -p "$work/executed"
# The notebooks run side by side: this checks that each executes with its
# defaults in the fresh environment (its timings are not used), and halves
# the wall time on 2 cores.
pids=()
for notebook in notebooks/*.ipynb; do
  name=$(basename "$notebook" .ipynb)
  echo "executing $notebook with its defaults"
  # Only the output folders are set, so nothing is written into the checkout.
  ( papermill --cwd notebooks --no-progress-bar "$notebook" "$work/executed/$name.ipynb" \
      -p results_dir "$work/results/$name" -p figures_dir "$work/figures/$name" -p paper_dir "$work/paper/$name" \
      >"$work/executed/$name.log" 2>&1 ||
    { echo "FAILED: $notebook (last lines of $work/executed/$name.log):"; tail -n 40 "$work/executed/$name.log"; exit 1; } ) &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
[ "$status" -eq 0 ] || exit 1
echo "binder check passed: ${#pids[@]} notebook(s) executed in a fresh environment"
