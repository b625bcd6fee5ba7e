# The two commands of the study:
#   make paper   set up everything, run the whole workflow, build paper/build/paper.pdf
#   make test    set up everything, run the test suite
#   make check   the quick lane of a developer's loop: unit and kernel tests (about a minute once set up)
# Set-up is done once and reused: the venv is rebuilt only when
# envs/requirements.txt changes, TeX is installed only when missing, and the
# kernels are rebuilt incrementally.
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV := .venv
PYTHON_BASE ?= python3
CORES ?= all
# Another scale over config/config.yaml, e.g. make paper CONFIG=config/medium.yaml
CONFIG ?=

# Jupyter, IPython, matplotlib, numba and Snakemake write caches under $HOME
# unless told otherwise; keep them in the project (git-ignored).
export XDG_CACHE_HOME ?= $(CURDIR)/.cache
export MPLCONFIGDIR ?= $(XDG_CACHE_HOME)/matplotlib
export IPYTHONDIR ?= $(XDG_CACHE_HOME)/ipython
export JUPYTER_RUNTIME_DIR ?= $(XDG_CACHE_HOME)/jupyter-runtime
export NUMBA_CACHE_DIR ?= $(XDG_CACHE_HOME)/numba
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: help paper check-config test check lab archive env system-build system-tex system-slurm kernels java builds binder lock clean

help:
	@echo "make paper   build paper/build/paper.pdf (sets everything up first); CONFIG=config/medium.yaml for another scale"
	@echo "make test    run the test suite (sets everything up first)"
	@echo "make check   the quick lane: unit and kernel tests, the package's import layers included"
	@echo "make lab     open JupyterLab on notebooks/ in the project's environment"
	@echo "make archive NAME=<label>  pack this machine's raw results into archive/<label>"
	@echo "make binder  regenerate binder/ from envs/;  make lock  re-pin envs/requirements.txt"

# The config files are checked before Snakemake reads them (a file that is not YAML, not a
# mapping or not there is named with its line), and before the longer set-up steps.
paper: check-config system-tex builds
	snakemake --cores $(CORES) $(if $(CONFIG),--configfile $(CONFIG))
	python -m throughput.report.paper_check

check-config: env
	python -m throughput.configuration check $(CONFIG)

# Two workers (pytest-xdist): independent test modules side by side, the tiny study's module on one
# of them, first (tests/conftest.py orders the modules; xdist would otherwise put the modules of
# most tests first and start the tiny study last); TEST_WORKERS=0 runs them one after another.
TEST_WORKERS ?= 2
test: env system-tex system-slurm builds
	pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# Neither the workflow, the experiments' measurements nor TeX: what a code change breaks first.
check: env kernels
	pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder tests/unit tests/kernels

lab: env kernels
	jupyter lab notebooks/

# This machine's raw results of every experiment, with provenance and fingerprint, into
# archive/$(NAME) (committed on purpose: throughput/machines/archive.py says what is checked).
archive: env
	@test -n "$(NAME)" || { echo "make archive: say which label, e.g. make archive NAME=my-laptop" >&2; exit 2; }
	python -m throughput.machines.archive pack $(NAME)

# uv installs the pinned environment where pip did: the same packages and versions, in about 55 s
# on a fresh clone where pip took about 200 s (2026-12-02, 2 cores, empty caches: downloads in
# parallel, bytecode compiled on every core). The bytecode is compiled here because these machines set
# PYTHONDONTWRITEBYTECODE=1: without it every process would compile what it imports, every time.
# uv itself goes to build/uv, not the venv, which holds exactly envs/requirements.txt (the Binder
# check reuses it only then: binder/check_fresh_env.sh).
UV := uv==0.13.9
UV_PIP := build/uv/bin/uv pip install --quiet --python $(VENV)/bin/python --compile-bytecode
env: $(VENV)/.installed
$(VENV)/.installed: envs/requirements.txt pyproject.toml | system-build
	$(PYTHON_BASE) -m venv $(VENV)
	$(PYTHON_BASE) -m pip install --quiet --disable-pip-version-check --upgrade --target build/uv $(UV)
	$(UV_PIP) -r envs/requirements.txt
	$(UV_PIP) --no-deps -e .
	touch $@

system-build:
	@envs/install-system.sh build

system-tex:
	@envs/install-system.sh tex

# Slurm and munge, only for the test that runs the Slurm profile on a real Slurm.
system-slurm:
	@envs/install-system.sh slurm

kernels: env
	@kernels/build.sh build/kernels $(VENV)/bin/python

# The reader comparison's Java readers (laurelin, root4j) into build/java/, which its notebook
# would otherwise build on first use (in `make test`, the Binder check's postBuild: 208 s of it on a
# fresh clone). Maven's downloads, about 140 MB on a fresh machine and mostly a wait on the network,
# overlap the C++ compile when `builds` runs both at once. Never fails: where Java, Maven or Maven
# Central is missing, the reader comparison's rows say why.
READERS := python -m throughput.experiments.reader_comparison
java: env
	@$(READERS) build-java build/java/reader_comparison || echo "make java: laurelin's reader not built (above)" >&2
	@$(READERS) build-root4j build/java/root4j_reader || echo "make java: root4j's reader not built (above)" >&2

# The C++ kernels and the Java readers side by side (two jobs, whatever -j was given).
builds: env
	@$(MAKE) --no-print-directory -j2 kernels java

# binder/ is derived from envs/ (tests/workflow/test_binder.py checks they agree).
binder:
	cp envs/requirements.txt binder/requirements.txt
	cp envs/apt.txt binder/apt.txt

lock:
	rm -rf build/lock-venv && $(PYTHON_BASE) -m venv build/lock-venv
	build/lock-venv/bin/pip install --quiet -r envs/requirements.in
	{ echo "# Generated by 'make lock' from envs/requirements.in on Python 3.11; do not edit by hand."; \
	  build/lock-venv/bin/pip freeze --exclude-editable; } > envs/requirements.txt
	$(MAKE) binder

clean:
	rm -rf build .snakemake results figures paper/generated paper/build
