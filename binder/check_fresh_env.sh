#!/usr/bin/env bash
# Rebuilds what a Binder-like host would from binder/ alone (no Docker here):
# a fresh virtual environment from binder/requirements.txt, binder/postBuild,
# then every notebook executed with papermill and its default parameters, one
# at a time, its wall time and peak memory measured (throughput.core.standalone).
#   binder/check_fresh_env.sh WORK_DIR [--python-env DIR] [--kernels DIR] [--no-notebooks]
# Outputs (environment, kernels, executed notebooks, results) stay in WORK_DIR.
#   --python-env DIR  use the environment DIR instead of building one, when its packages are
#                     exactly binder/requirements.txt's (checked; else it stops, saying which differ)
#   --kernels DIR     postBuild builds the kernels into DIR (incrementally) instead of WORK_DIR/kernels
#   --no-notebooks    stop after postBuild (the workflow's rule standalone_notebook measures the
#                     notebooks in the same environment: tests/workflow/test_binder.py)
set -euo pipefail
work=$(mkdir -p "${1:?usage: binder/check_fresh_env.sh WORK_DIR [--python-env DIR] [--kernels DIR] [--no-notebooks]}" && cd "$1" && pwd)
shift
repo=$(cd "$(dirname "$0")/.." && pwd)
venv="" kernels="$work/kernels" notebooks=1
while [ $# -gt 0 ]; do
  case "$1" in
    --python-env) venv=$(cd "${2:?--python-env needs a folder}" && pwd); shift 2 ;;
    --kernels) kernels=$(mkdir -p "${2:?--kernels needs a folder}" && cd "$2" && pwd); shift 2 ;;
    --no-notebooks) notebooks=0; shift ;;
    *) echo "binder/check_fresh_env.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
cd "$repo"

# Pinned requirements as NAME==VERSION with the name normalized as PEP 503 does (lower case, a run
# of - _ . as one -): pip freeze spells some as their wheels do (hepdata_lib for hepdata-lib), and
# a fresh environment of exactly these packages was refused for that, rebuilt in minutes.
normalized() {
  grep -v '^#' | sed '/^$/d' | awk -F'==' '{ name = tolower($1); gsub(/[-_.]+/, "-", name); print name "==" $2 }' | sort
}

if [ -n "$venv" ]; then
  # The same environment as a fresh one when it holds exactly the pinned packages (the project
  # itself, installed editable by postBuild, left out).
  if ! diff <(normalized < binder/requirements.txt) \
            <("$venv/bin/pip" freeze --exclude-editable --disable-pip-version-check | normalized) > "$work/env.diff"; then
    echo "binder check: $venv does not hold exactly binder/requirements.txt's packages (< pinned, > installed):" >&2
    cat "$work/env.diff" >&2
    exit 1
  fi
  echo "binder check: $venv holds exactly binder/requirements.txt's packages; used as the fresh environment"
else
  venv="$work/venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r binder/requirements.txt
fi
export PATH="$venv/bin:$PATH" THROUGHPUT_BUILD_DIR="$kernels" THROUGHPUT_KERNELS_DIR="$kernels/bin"
bash binder/postBuild

[ "$notebooks" -eq 1 ] || { echo "binder check passed: environment and postBuild (notebooks not executed here)"; exit 0; }
mkdir -p "$work/executed"
# One notebook at a time, as a reviewer runs them: each one's wall time and the
# peak memory of its whole process tree go to $work/executed/NAME.json.
status=0
count=0
for notebook in notebooks/*.ipynb; do
  name=$(basename "$notebook" .ipynb)
  count=$((count + 1))
  echo "executing $notebook with its defaults"
  # Only the output folders are set, so nothing is written into the checkout.
  python -m throughput.core.standalone "$notebook" "$work" ||
    { status=1; echo "FAILED: $notebook (last lines of $work/executed/$name.log):"; tail -n 40 "$work/executed/$name.log"; }
done
[ "$status" -eq 0 ] || exit 1
echo "binder check passed: $count notebook(s) executed in a fresh environment"
