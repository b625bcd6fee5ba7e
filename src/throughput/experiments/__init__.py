"""The experiments: one package each (throughput.experiments.<name>: its
measured methods, measuring through the generic loop of throughput.core.experiment,
analysis and report) and one entry each in SPECS, which declares its kernels
and outputs once (throughput.setup.spec). Adding an experiment: its package,
notebook, kernels folder and paper section, and one entry here.

This module stays light (Snakemake imports SPECS while it plans), and so does each
experiment's package: importing it runs only its cheap `spec` module (the config
section's check, constants, input paths: what Snakemake and throughput.configuration
take); its measured code, analysis and report are imported on first use of one of
their names, by the package's `__getattr__` and `load_later` below.
"""
from __future__ import annotations

from typing import Any

from ..setup.spec import Spec


def load_later(namespace: dict[str, Any], loaded: dict[str, Any], name: str) -> Any:
    """For an experiment package's `__getattr__`, once it has imported the names of its measured
    code, analysis and report (`loaded`, its locals): put them in the package (`namespace`, its
    globals; none starting with '_'), and give `name`, or AttributeError when it has none."""
    namespace.update((key, value) for key, value in loaded.items() if not key.startswith("_"))
    try:
        return namespace[name]
    except KeyError:
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}") from None


SPECS: dict[str, Spec] = {spec.name: spec for spec in (
    Spec("memory_bandwidth",  # seed 000, "Memory bandwidth"
         kernels=(*(f"add_constant_O{level}" for level in range(4)), "stream_O3"),
         figures=("thread_scaling", "opt_levels"),
         tables=("opt_table", "ratio_table", "machine_table"), shows_archived=True),
    Spec("gpu_bandwidth",  # seed 000, Table 2
         kernels=("host_copy",), cuda_kernels=("gpu_bandwidth_cuda",),
         figures=("table2", "jagged"),
         tables=("table2", "gpu_detail", "jagged_table", "machines_table", "archived_detail", "archived_jagged"),
         shows_archived=True),
    Spec("reader_comparison",  # seed 000, Table 1 and Figure 1
         kernels=("read_branch", "make_aod_like", "page_cache"),
         figures=("timeline", "table1", "time_split"),
         tables=("table1_aod", "table1_nanoaod", "ratio_table", "open_table", "compression_table",
                 "real_table", "failures_table", "cold_table", "table1_objects", "object_split_table", "machine_table"),
         shows_archived=True),
    Spec("writing",  # seeds 001 and 003
         kernels=("write_bench", "read_simple"),
         figures=("random_runtime", "random_speedup", "random_memory", "events_scaling"),
         tables=("random_table", "events_table", "seed001_table", "seed001_size_table", "seed001_setup_table",
                 "seed003_table", "machine_table"), shows_archived=True),
    Spec("rdataframe",  # seeds 002 and 004
         kernels=("rdf_bench", "rdf_rate_reader", "rdf_raw_read", "page_cache"),
         figures=("scaling", "rate_model"),
         tables=("scaling_table", "storage_table", "compression_table", "nhist_table", "pdf_table",
                 "dask_table", "agreement_table", "rate_components_table", "rate_fit_table", "machine_table"),
         shows_archived=True),
)}
