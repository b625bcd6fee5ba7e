"""Reader comparison (seed 000, "ROOT file reading": Table 1 and Figure 1).

The pT (for the real HZZ files, the x momentum Px) of one particle collection
is read by every reader, one process per reader group and input set:

* C++ (kernel ``read_branch``, one program, ``--methods``): a columnar reader
  (only the value branch and its counter, no objects: the seed's "FemtoCode
  ROOT reader"), ROOT's bulk I/O, TTreeReader, TTree::Draw, RDataFrame on one
  thread, a CMSSW-like reader that reads every attribute of the collection and
  builds a ``std::vector<Particle>`` per event (on the split-object file: the
  whole ``std::vector<aod::Type>`` branch streamed into objects by ROOT through
  the generated classes' dictionary), "members" (every attribute into flat
  buffers, no objects: where the CMSSW-like time goes), and RNTupleReader on
  the RNTuple copy;
* uproot (today's non-C++ implementation, as root4j was) and the same values
  as a deflate-compressed Numpy file (the seed's baseline), in Python (the
  ``read`` command, ``python -m throughput.experiments.reader_comparison read``,
  each round in a process of its own forked by harness.in_fresh_process);
* two Java readers, modules of one Maven parent (kernels/reader_comparison/java, with
  their shared module common): laurelin from Maven Central (java/laurelin) and the
  seed's root4j, built from its pinned source with our patch (java/root4j;
  processes.build_root4j_reader);
* ROOT's own ``rootreadspeed`` on the same branches, the reference the C++
  readers are held against.

Every reader reports items, events, the exact checksum of
kernels/reader_comparison/pass.hpp (sum mod 2^64 of a 64-bit mix of each
value's bit pattern in its own type: order-independent), wall and CPU time, and a
sample every ``sample_every`` items. All readers of the same files and branch
must agree on items and checksum (``check_agreement``); a disagreement fails
the run. Files are warm (pre-read, checked resident with mincore) unless the
run is labelled cold (posix_fadvise DONTNEED, checked absent).

Units: kHz = 10^3 events per second per process (the seed's unit); MHz of
items = 10^6 values per second; MB = 10^6 bytes.

Modules, one role each:

- vocabulary: collections, readers and their labels, layouts, compressions,
  the seed's figures and our target; the names of a layout's tree and branches;
- readers: the Python readers whose speed is measured (uproot, the Numpy
  baseline; ``read``) and the checksum every reader computes;
- spec: what Snakemake and throughput.configuration take, cheap to import:
  check_config, a file's layout, compression and count, ReaderError, whether
  Java is there and what the Java readers are built from, and the input sets
  (input_sets, with the files' places of throughput.inputs.layout: declared
  once, for the workflow's rules and a standalone run alike);
- inputs: what an input file holds, making the files (MiniAOD-like, RNTuple and
  Numpy copies), prepare_inputs (spec.input_sets, each missing file made);
- processes: running a reader as a process (JSON lines) and classifying its
  failure, building the Java reader, rootreadspeed, the page_cache kernel;
- measuring: the plan of runs, their groups (one per input set and cache
  state), measured interleaved or reused when stored;
- analysis: agreement and reference checks, summaries, rates, ratios,
  targets, the timeline, the collections' shapes;
- report: the paper's tables (LaTeX cells), figures and macros (paper_macros);
- entry: the notebook's calls, the same in every experiment: measure(session)
  (the input sets, input_sets, then the runs, checked, as a Measured), figures(measured, session),
  tables(measured, session) and macros(measured, session);
- own_file: every reader on a user's own file and branches (``python -m
  throughput.readers``), measured as above, printed as a table;
- command_line: ``main``, what ``python -m throughput.experiments.reader_comparison``
  runs (through __main__) for the workflow's rules and the reader processes.

The names the notebook, the workflow, the tests and throughput.configuration use
are imported here (all but the spec's on first use: throughput.setup.spec.load_later), so that
``from throughput.experiments import reader_comparison as rc; rc.<name>`` works.
"""
from ...setup.spec import load_later, submodule_first
from .spec import (ReaderError, check_config, compression_name, file_compression, file_count, java_available,
                   main_sets, named_set, real_layout)


def __getattr__(_name: str):
    if (submodule := submodule_first(__name__, _name)) is not None:
        return submodule  # imported alone, without the names below
    from ...inputs.checksums import GOLDEN, checksum, hex_checksum
    from .analysis import (cannot_read, check_agreement, check_references, collection_shapes, fill_bytes,
                           layout_targets, rate_estimate, ratios, summary, targets, timeline)
    from .command_line import main
    from .inputs import (aod_sources, collection_attributes, make_aod_like, make_numpy_copy, make_rntuple_copy,
                         prepare_inputs, tree_compression_factor)
    from .entry import Measured, figures, input_sets, macros, measure, tables
    from .measuring import groups, measure_runs, plan, run_name
    from .processes import (ReaderFailed, build_java_reader, build_root4j_reader, classify_failure, page_cache,
                            parse_rootreadspeed, run_json_process)
    from .report import (cold_frame, compression_frame, escape_name, failure_summary, failures_frame, machine_frame,
                         object_frames, paper_macros, object_split_frame, open_frame, plot_table1,
                         plot_time_split, plot_timeline, ratio_frame, real_frame, table1_frame)
    from .vocabulary import (COLLECTIONS, CPP_METHODS, LABELS, NUMPY_TARGET, OBJECT_METHODS, PYTHON_READERS,
                             branch_name)
    from ...report.seeds import READER_JAVA_SLOWDOWN as SEED_JAVA_SLOWDOWN, READER_TABLE1 as SEED_TABLE1
    return load_later(globals(), locals(), _name)
