#!/usr/bin/env bash
# Installs the Debian packages the study needs, only when something is missing.
#   envs/install-system.sh build   compilers, CMake, LZ4, Java, Maven (envs/apt.txt)
#   envs/install-system.sh tex     LaTeX for the paper (envs/apt-tex.txt)
#   envs/install-system.sh slurm   Slurm and munge for the Slurm test (envs/apt-slurm.txt)
# As root it runs apt-get; otherwise it says what to install and fails, but for slurm:
# without it only tests/workflow/test_slurm.py is skipped (it says why).
set -euo pipefail
what=${1:?usage: envs/install-system.sh build|tex|slurm}
here=$(cd "$(dirname "$0")" && pwd)
case "$what" in
  build) list=$here/apt.txt
         present() { command -v cmake && command -v c++ && command -v make && command -v javac && command -v mvn &&
                    [ -f /usr/include/lz4.h ]; } ;;
  tex)   list=$here/apt-tex.txt
         present() { command -v latexmk && command -v pdflatex && command -v pdftotext && kpsewhich siunitx.sty booktabs.sty lmodern.sty | [ "$(wc -l)" -eq 3 ]; } ;;
  slurm) list=$here/apt-slurm.txt
         present() { command -v sbatch && command -v srun && command -v squeue && command -v scontrol &&
                    [ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && [ -x /usr/sbin/munged ]; } ;;
  *) echo "envs/install-system.sh: unknown set '$what' (build, tex or slurm)" >&2; exit 2 ;;
esac
present >/dev/null 2>&1 && exit 0

packages=$(grep -v '^\s*#' "$list" | xargs)
if [ "$(id -u)" -ne 0 ]; then
  echo "Missing system packages for '$what'. Install them with:" >&2
  echo "  sudo apt-get install -y --no-install-recommends $packages" >&2
  [ "$what" = slurm ] && { echo "(until then the Slurm test is skipped)" >&2; exit 0; }
  exit 1
fi
echo "Installing $what packages with apt-get (once): $packages"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $packages >/dev/null
present >/dev/null 2>&1 || { echo "envs/install-system.sh: '$what' still incomplete after apt-get" >&2; exit 1; }
