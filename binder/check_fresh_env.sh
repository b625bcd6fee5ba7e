#!/usr/bin/env bash
# Rebuilds what a Binder-like host would from binder/ alone (no Docker here):
# a fresh virtual environment from binder/requirements.txt, binder/postBuild,
# then every notebook executed with papermill and its default parameters, one
# at a time, its wall time and peak memory measured (binder/measure_notebook.py).
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
# One notebook at a time, as a reviewer runs them: each one's wall time and the
# peak memory of its whole process tree go to $work/executed/NAME.json
# (tests/workflow/test_binder.py holds them to the Binder host's limits).
status=0
count=0
for notebook in notebooks/*.ipynb; do
  name=$(basename "$notebook" .ipynb)
  count=$((count + 1))
  echo "executing $notebook with its defaults"
  # Only the output folders are set, so nothing is written into the checkout.
  python binder/measure_notebook.py "$notebook" "$work" ||
    { status=1; echo "FAILED: $notebook (last lines of $work/executed/$name.log):"; tail -n 40 "$work/executed/$name.log"; }
done
[ "$status" -eq 0 ] || exit 1
echo "binder check passed: $count notebook(s) executed in a fresh environment"
