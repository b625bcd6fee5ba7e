"""CPU memory bandwidth (seed 000, "Memory bandwidth: conventional vs GPU vs KNL").

Add a constant to N doubles, in place and into a second array ("immutable"),
with the C++ kernel at -O0..-O3, numpy and numba; scale the threads up to the
memory-bus limit; and hold every figure against a STREAM-like reference
measured in the same run. Every run is validated against the exact expected
values, and all methods must give the same checksum.

Units: a rate in "GHz", as the seed uses it, is 10^9 float64 values per
second; GB/s is 10^9 bytes per second, counting the bytes the loop reads and
writes (STREAM's convention: no write-allocate traffic).

Modules, one role each:

- vocabulary: the seed's figures, the targets, the modes and bytes per value;
- methods: the measured Python methods (numpy, numba) and the exact check of
  every output value;
- spec: check_config (called by throughput.configuration), cheap to import;
- measuring: the plan, the groups (one per thread count) measured interleaved,
  or reused when stored;
- analysis: rates, agreement, the summary, the -O and ratio tables, targets,
  and the machine table (this machine beside the archived ones);
- report: those tables as the paper prints them, and every macro it quotes (paper_macros);
- entry: the notebook's calls, the same in every experiment:
  measure(session) (its runs, checked, as a Measured),
  figures(measured, session), tables(measured, session) and macros(measured, session).

The names the notebook, throughput.repeatability and the tests use are
imported here: ``from throughput.experiments import memory_bandwidth as mb``; all
but the spec's on first use (throughput.setup.spec.load_later).
"""
from ...setup.spec import load_later, submodule_first
from .spec import check_config


def __getattr__(_name: str):
    if (submodule := submodule_first(__name__, _name)) is not None:
        return submodule  # imported alone, without the names below
    from .analysis import (cache_fit, check_agreement, estimate, huge_pages, machine_table, opt_ratios,
                           opt_table, opt_verdict, paired_ratio, plateau_verdict, ratio_table, stream_at, summary,
                           targets, with_rates)
    from .entry import Measured, figures, macros, measure, tables
    from .measuring import groups, measure_runs, plan, run_label, run_name
    from .report import (machine_table_frame, opt_levels_figure, opt_table_frame, paper_macros, ratio_table_frame,
                         thread_scaling_figure)
    from .methods import expected_checksum
    from .vocabulary import (BUS_BYTES_PER_VALUE, CONSTANT, MODES, PLATEAU_BAND, SEED_N, SEED_PLATEAU_GHZ,
                             SEED_SECONDS, SINGLE_TARGET, STREAM_OPS)
    return load_later(globals(), locals(), _name)
