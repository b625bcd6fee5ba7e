"""Writing (seeds 001 and 003): TBufferMerger, ROOT + IMT, a simple per-event format, RNTuple.

Three workloads, one kernel (kernels/writing/write_bench):

* "random" (seed 003, "TBufferMerger performance benchmarks revisited"):
  N threads write uniform random doubles with ROOT::TBufferMerger (each
  thread fills its own TTree and hands its buffers over at every flush) and,
  beside it, with ROOT::RNTupleParallelWriter (one fill context per thread),
  per compression algorithm and output medium (disk, tmpfs, memory, and a
  disk throttled to a set rate: a medium slower than the producers).
* "events" (seed 001, "Thread scaling of different output methods"):
  NanoAOD-like events, read into memory first, written by a TTree with LZ4
  and implicit multi-threading, by a simple format of our own (each event
  serialized and LZ4-compressed on its own by N threads, appended as a
  length-prefixed record), and by RNTupleParallelWriter.
* "objects" (seed 001 as it measured it): the reader comparison's flat AOD-like
  events built into data products (one std::vector<aod::Type> per collection
  and event) before timing, written by a TTree of split product branches
  (root_imt), by the simple format with each product ROOT-serialized
  (simple_root, TBufferFile), and by the simple format copying the same values
  as flat columns (simple); read back, the products are flattened into those
  columns.

The output of each process's first pass and of its last is read back and every
column's checksum and the entry count compared with what was written (a
difference fails the kernel; why not every pass: write_bench.cpp). The record of a sample that read back carries what was read
from its own output (every column's checksum, the entry count and their
digest); check_agreement compares those
across all writers of one workload and against the digest of the source's
entries, recomputing the digest from the column checksums.

Units: MB = 10^6 bytes, MB/s = 10^6 bytes per second of *uncompressed* data
written ("written MB/s" counts the file's bytes); peak memory is the
process's peak resident set size during a pass, reported above the RSS it had
once the entries were in memory and before the first pass ("baseline").

Modules:

* spec: check_config and resolve_threads (the config section fitted to this
  machine), filesystem_type, input_files (the files it reads, named once for the
  workflow's rules and a standalone run): what throughput.configuration and
  Snakemake take, cheap to import.
* measuring: the kernels and what they can write (compressions, media, methods,
  their labels); plan (every run, in order), medium_dirs and disk_fit (where each
  medium writes and what the disk is here); measure_runs (runs write_bench, or reuses a
  stored run with the same parameters, binary and inputs) and with_rates; digest and
  check_agreement (all writers read back the source's entries). writing.setup_parts adds
  runs at twice the entries (`scale` 2, SETUP_METHODS) in the same rounds.
* analysis: summary (median per run, speed-up, efficiency), one and versus (a run,
  one method against another), efficiency_target, seed 001's figures against ours
  (seed001_rows; size_rows: the size table from the passes, with ROOT's metadata share;
  setup_rows: each writer's fixed cost per pass, 2 T(N) - T(2N), and the speed-ups with and
  without it), seed 003's claims against this run (seed003_claims: each one's state and
  figures; back_pressure: its back-pressure claim's; compression_costs and media_ratio: its
  compressions and media, paired by round; compression_share and uncompressed_speedup: seed 001's
  time in compression and its serialization, from the uncompressed reference runs measuring.plan
  adds) and its regime (random_setup_rows: set-up and last flush as a share of a pass).
* report: the figures (figure_random, figure_memory, figure_events), the paper's
  tables (random_table, events_table, seed001_table, seed001_size_table, seed001_setup_table,
  seed003_table: seed 003's claims as states and numbers that the section words, and
  machine_table: the speed-ups of this machine and every archived one side by side) and
  macros (paper_macros: numbers, and states the section words).
* entry: the notebook's calls, the same in every experiment: measure(session) (the inputs,
  input_files, then the runs, checked, as a Measured),
  figures(measured, session), tables(measured, session) and macros(measured, session).

The names used from outside (notebooks/writing.ipynb, tests, throughput.configuration's
check_config) are re-exported here (all but the spec's on first use: throughput.setup.spec.load_later).
"""
from ...setup.spec import load_later, submodule_first
from .spec import check_config, filesystem_type, resolve_threads


def __getattr__(_name: str):
    if (submodule := submodule_first(__name__, _name)) is not None:
        return submodule  # imported alone, without the names below
    from .analysis import (SEED001, SEED001_THREADS, back_pressure, compression_costs, compression_share,
                           efficiency_target, fixed_cost, media_ratio, random_setup_rows, rntuple_versus_tbuffermerger,
                           seed001_rows, seed003_claims, setup_rows, size_rows, summary, uncompressed_speedup)
    from .entry import Measured, figures, input_files, macros, measure, tables
    from .measuring import (COMPRESSIONS, KERNEL, READER, check_agreement, digest, disk_fit, groups, measure_runs,
                            medium_dirs, plan, run_name, with_rates)
    from .report import (events_table, figure_events, figure_memory, figure_random, machine_table, paper_macros,
                         random_table, seed001_setup_table, seed001_size_table, seed001_table, seed003_table)
    return load_later(globals(), locals(), _name)


__all__ = [
    "COMPRESSIONS", "KERNEL", "READER", "SEED001", "SEED001_THREADS",
    "back_pressure", "check_agreement", "check_config", "compression_costs", "compression_share", "digest",
    "disk_fit", "efficiency_target", "events_table",
    "figure_events", "figure_memory", "figure_random", "filesystem_type", "groups", "input_files", "macros",
    "measure", "Measured", "measure_runs", "paper_macros",
    "fixed_cost", "media_ratio", "medium_dirs", "plan", "random_setup_rows", "random_table", "resolve_threads",
    "rntuple_versus_tbuffermerger", "run_name",
    "seed001_rows", "seed001_setup_table", "seed001_size_table", "seed001_table", "seed003_claims", "seed003_table",
    "setup_rows", "size_rows", "summary", "uncompressed_speedup", "with_rates",
]
