# Every generated input (src/throughput/inputs/datasets.py), shared by the experiments:
#   data/nanoaod/<compression>/part<k>.root          NanoAOD-like, resampled from the real CMS file
#   data/nanoaod/<compression>/part<k>.ntuple.root   the same events as an RNTuple
#   data/rdataframe/<compression>/e<events>/part<k>.root
#                                                    NanoAOD-like sets of the RDataFrame experiment's size
#   data/reader_comparison/aod/<compression>/part<k>.root[.ntuple.root]
#   data/reader_comparison/aod_objects/<compression>/part0.root[.ntuple.root]
#                                                    MiniAOD-like (seed 000's particle types), flat and as
#                                                    split objects; the reader comparison reads them, the
#                                                    writing experiment builds its data products from the flat one
#   data/reader_comparison/numpy/<layout>/<compression>/part<k>.npz
#                                                    the Numpy copy of a NanoAOD-like or MiniAOD-like file
#   data/reader_comparison/real/<stem>.npz, <stem>.ntuple.root
#                                                    the real files' Numpy and RNTuple copies (reader_comparison.real_files)
# File k of a set uses seed datasets.seed + k. An experiment asks for them with
# nanoaod_files(compression, count), aod_files(layout, compression, count),
# numpy_files(layout, compression, count) and real_copy(stem, suffix): the names of
# throughput.inputs.layout (data_files, real_copy), which a standalone notebook uses too.
from functools import partial

from throughput.experiments.reader_comparison import spec as _rc_spec
from throughput.inputs import layout as _layout
from throughput.inputs import datasets as _datasets

KERNELS["datasets"] = [f"{KERNEL_BIN}/{name}" for name in ("make_nanoaod_like", "make_aod_like", "tree_to_rntuple")]
DATASET_KERNEL = dict(zip(("nanoaod", "aod", "rntuple"), KERNELS["datasets"]))
# (under the reader comparison's folder, where they were first made: existing files stay valid)
AOD_DATA = "data/reader_comparison"


def nanoaod_files(compression, count, rntuple=False):
    """The NanoAOD-like files (or their RNTuple copies) of `compression`."""
    return _layout.data_files("data", "nanoaod", compression, count, "rntuple" if rntuple else "root")


def aod_files(layout, compression, count, rntuple=False):
    """The MiniAOD-like files of `layout` ("aod": flat, "aod_objects": split objects, one file)."""
    return _layout.data_files("data", layout, compression, count, "rntuple" if rntuple else "root")


def numpy_files(layout, compression, count):
    """The Numpy copies of the files of `layout` ("nanoaod", "aod" or "aod_objects")."""
    return _layout.data_files("data", layout, compression, count, "numpy")


# The real files: local copies in datasets.source, else fetched by scikit-hep-testdata.
REAL_FILES = {Path(name).stem: _datasets.real_file(name, STUDY["datasets"])
              for name in STUDY["reader_comparison"]["real_files"]}


def real_copy(stem, suffix):
    """The copy of real file `stem` as a Numpy (".npz") or RNTuple (".ntuple.root") file."""
    return _layout.real_copy("data", stem, suffix)


def aod_events(index):
    """Events in flat AOD-like file `index` (reader_comparison.aod_events in files of
    reader_comparison.aod_events_per_file; the last file takes the rest)."""
    per_file = STUDY["reader_comparison"]["aod_events_per_file"]
    return min(per_file, STUDY["reader_comparison"]["aod_events"] - int(index) * per_file)


wildcard_constraints:
    compression="none|ZLIB|LZ4|ZSTD|LZMA",
    index=r"\d+",
    events=r"\d+",
    tree_set=f"data/nanoaod|{AOD_DATA}/aod|{AOD_DATA}/aod_objects",
    rc_layout="nanoaod|aod|aod_objects",
    rc_stem=r"[A-Za-z0-9_.-]+",


rule nanoaod_like:
    input:
        kernel=DATASET_KERNEL["nanoaod"],
    output:
        "data/nanoaod/{compression}/part{index}.root",
        # the values readers must find in it, taken when it is made (throughput.inputs.references)
        "data/nanoaod/{compression}/part{index}.root.reference.json",
    params:
        section=json.dumps(STUDY["datasets"]),
        events=STUDY["datasets"]["events_per_file"],
    shell:
        "python -m throughput.inputs.datasets nanoaod {output[0]:q} --compression {wildcards.compression} "
        "--index {wildcards.index} --events {params.events} --section {params.section:q}"


# The same, in sets of another size (the RDataFrame experiment's rdataframe.events_per_file).
use rule nanoaod_like as nanoaod_like_sized with:
    output:
        "data/rdataframe/{compression}/e{events}/part{index}.root",
        "data/rdataframe/{compression}/e{events}/part{index}.root.reference.json",
    params:
        section=json.dumps(STUDY["datasets"]),
        events=lambda wildcards: int(wildcards.events),


# MiniAOD-like: flat files of aod_events(index) events ...
rule aod_like:
    input:
        kernel=DATASET_KERNEL["aod"],
        source=_datasets.source_path(STUDY["datasets"]),
    output:
        f"{AOD_DATA}/aod/{{compression}}/part{{index}}.root",
        f"{AOD_DATA}/aod/{{compression}}/part{{index}}.root.reference.json",
    params:
        section=json.dumps(STUDY["datasets"]),
        events=lambda wildcards: aod_events(wildcards.index),
        objects="",
    shell:
        "python -m throughput.inputs.datasets aod {output[0]:q} {params.objects} --compression {wildcards.compression} "
        "--index {wildcards.index} --events {params.events} --section {params.section:q}"


# ... and one file of split std::vector<aod::Type> (reader_comparison.object_events events)
use rule aod_like as aod_like_objects with:
    output:
        f"{AOD_DATA}/aod_objects/{{compression}}/part{{index}}.root",
        f"{AOD_DATA}/aod_objects/{{compression}}/part{{index}}.root.reference.json",
    params:
        section=json.dumps(STUDY["datasets"]),
        events=STUDY["reader_comparison"]["object_events"],
        objects="--objects",


rule rntuple_copy:  # of every generated TTree file: NanoAOD-like, flat AOD-like and split-object
    input:
        kernel=DATASET_KERNEL["rntuple"],
        tree="{tree_set}/{compression}/part{index}.root",
    output:
        "{tree_set}/{compression}/part{index}.ntuple.root",
    params:
        section=json.dumps(STUDY["datasets"]),
    shell:
        "python -m throughput.inputs.datasets rntuple {output:q} --input {input.tree:q} "
        "--compression {wildcards.compression} --section {params.section:q}"


# The Numpy copy of a NanoAOD-like or MiniAOD-like file (the reader comparison's Numpy baseline) ...
def rc_numpy_source(wildcards):
    files = nanoaod_files if wildcards.rc_layout == "nanoaod" else partial(aod_files, wildcards.rc_layout)
    return files(wildcards.compression, int(wildcards.index) + 1)[-1]


rule reader_comparison_numpy:
    input:
        rc_numpy_source,
    output:
        f"{AOD_DATA}/numpy/{{rc_layout}}/{{compression}}/part{{index}}.npz",
    shell:
        "python -m throughput.experiments.reader_comparison make-numpy {input:q} {output:q} --layout {wildcards.rc_layout}"


# ... and the real files' Numpy and RNTuple copies.
rule reader_comparison_real_copies:
    input:
        kernel=DATASET_KERNEL["rntuple"],  # the RNTuple copy (tree_to_rntuple)
        source=lambda wildcards: str(REAL_FILES[wildcards.rc_stem]),
    output:
        numpy=real_copy("{rc_stem}", ".npz"),
        rntuple=real_copy("{rc_stem}", ".ntuple.root"),
    params:
        layout=lambda wildcards: _rc_spec.real_layout(wildcards.rc_stem),
        compression=lambda wildcards: _rc_spec.file_compression(REAL_FILES[wildcards.rc_stem]),
        level=lambda wildcards: _datasets.level(STUDY["datasets"], _rc_spec.file_compression(REAL_FILES[wildcards.rc_stem])),
    shell:
        "python -m throughput.experiments.reader_comparison make-numpy {input.source:q} {output.numpy:q} "
        "--layout {params.layout} && "
        "python -m throughput.experiments.reader_comparison make-rntuple {input.source:q} {output.rntuple:q} "
        "--layout {params.layout:q} --compression {params.compression:q} --level {params.level}"
