"""RDataFrame thread scaling, distributed RDataFrame, and the PROOF-Lite I/O rate model (seeds 002 and 004).

RDataFrame (seed 002), measured by the compiled kernel `rdf_bench`
(kernels/rdataframe/): histograms filled from many NanoAOD-like files,
sequentially and with ROOT::EnableImplicitMT(n); the same data in several
compressions; 1 to 101 histograms with one Define each; the PDF weights
histogrammed four ways (one Define and Histo2D per weight, the seed's Histo3D
trick, a THnD with scalar and vector columns, RDataFrame's Vary). The same
analysis runs on Dask with distributed RDataFrame (from Python: the column
functions and binnings come from the kernel's own header, declared in Cling).

Every histogram of every run is compared bin by bin with a sequential
(no IMT) run of the compiled kernel: counts must be identical; sums of
weights must be identical or, where floating-point sums were added in another
order, within `rtol` of the larger of the bin content and its statistical
uncertainty. A disagreement raises.

The I/O rate model (seed 004): Np reader processes (`rdf_rate_reader`),
started together, read disjoint entry ranges of the same files; R(Np) is
fitted with R = R1*Np / (1 + R1/R_IO*(Np-1)), cold and warm page cache,
TTreeCache on and off, and R1 is also predicted from separately measured
rates: 1/R1 = 1/R_IO + 1/R_dec + 1/R_proc.

Units: MB = 1e6 bytes; every rate of the I/O model is in MB/s of *file*
bytes (compressed, as stored), so that the rates add as the model assumes;
event rates are in kHz (1e3 events/s).

Modules, one role each. The names the notebook, the tests, the workflow's rule
and throughput.configuration use are imported here from them (all but the spec's
and dask_scheduler's on first use: throughput.setup.spec.load_later), so that
`from throughput.experiments import rdataframe as rdf; rdf.<name>` works:

- spec: what Snakemake and throughput.configuration take, cheap to import:
  thread, worker and process counts resolved to this machine, the files each
  part needs and where each lives, check_config;
- dask_scheduler: whether the configured Dask scheduler answers, and a Client
  connected to it;
- inputs: where the input files live, generated or taken from the workflow's
  data directory, and preflight (every file and branch checked first);
- measuring: the compiled kernels' plumbing (file lists, page cache, reuse
  keys) and the compiled RDataFrame runs (rdf_bench), planned and measured or
  reused;
- distributed_rdf: distributed RDataFrame on Dask, booked and measured from
  Python;
- io_rate_model: the I/O rate model (seed 004): reader processes, the rates
  measured apart, the model, its fit and the rates summarised;
- analysis: histograms compared bin by bin, summaries of the timings, the
  Amdahl and USL fits;
- report: the seeds' figures, the paper's tables, numbers (paper_macros) and
  figures, and the thread scan of every machine shown (this one and the
  archived ones, throughput.machines.tables);
- entry: the notebook's calls, the same in every experiment: measure(session)
  (every part above, in turn, as a Measured),
  figures(measured, session), tables(measured, session) and macros(measured, session).
"""
from __future__ import annotations

from ...setup.spec import load_later, submodule_first
from .dask_scheduler import SchedulerError, scheduler_problem
from .spec import check_config, data_path, file_sets, resolve_counts


def __getattr__(_name: str):
    if (submodule := submodule_first(__name__, _name)) is not None:
        return submodule  # imported alone, without the names below
    from .analysis import (HistogramMismatch, check_agreement, compare_histograms, fit_amdahl, fit_usl,
                           load_histograms, summary)
    from .distributed_rdf import measure_dask
    from .inputs import InputError, make_inputs, preflight, resolve_inputs, select_inputs
    from .entry import RUN_COLUMNS, Measured, figures, macros, measure, tables
    from .io_rate_model import (BURST_SHARE, THROTTLED, asymptote_against_raw_read, check_model_passes,
                                check_raw_bytes, cold_reads_verdict, fit_rate_model, fitted_up_to,
                                largest_residual, measure_rate_model, model_check, rate_model, rate_summary,
                                run_processes, saturation, slowest_limit, split_ranges, throttled_check,
                                ttree_cache_sharing)
    from .measuring import KERNELS, cpp_groups, cpp_plan, measure_cpp, set_cache
    from .report import (SEED_NHIST, SEED_PDF, SEED_STORAGE, agreement_macros, agreement_table, amdahl_macros,
                         archived_scan, cold_reads_macros, compression_table, dask_macros, dask_table, machine_table,
                         model_check_macros, nhist_table, not_measured_figure, oversubscribed_macros, paper_macros,
                         pdf_table, pdf_weights_macros, rate_components_table, rate_figure, rate_fit_table,
                         scaling_figure, scaling_table, sharing_macros, storage_table, throttle_macros, usl_macros)
    return load_later(globals(), locals(), _name)
