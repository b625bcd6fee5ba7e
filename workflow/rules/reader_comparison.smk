# Reader comparison (seed 000, Table 1 and Figure 1): notebooks/reader_comparison.ipynb
# reads one attribute of every particle collection with every reader (C++
# methods, uproot, Java/laurelin, RNTuple, a Numpy file, rootreadspeed) and
# writes Table 1's analogue, the rate-vs-values figure and the ratio tables. Its
# notebook rule comes from its spec (rules/notebooks.smk); here its inputs: the shared
# NanoAOD-like and MiniAOD-like files with their RNTuple copies (rules/datasets.smk), and
# here their Numpy copies, the copies of the real files, and the Java reader.
from functools import partial

from throughput.experiments import reader_comparison as rc_module
from throughput.inputs import datasets as _datasets
from throughput.experiments.reader_comparison import processes as _rc_processes

RC = STUDY["reader_comparison"]
RC_COMPRESSION = STUDY["datasets"]["compression"]
RC_DATA = "data/reader_comparison"
# The real files: local copies in datasets.source, else fetched by scikit-hep-testdata.
RC_REAL = {Path(name).stem: _datasets.real_file(name, STUDY["datasets"]) for name in RC["real_files"]}
RC_JAVA = "build/java/reader_comparison/laurelin-reader.jar"
RC_WANTS_JAVA = "laurelin" in RC["readers"] and rc_module.java_available() is None


def rc_inputs():
    """Every input set of the notebook: {set: {role, layout, compression, root, rntuple, numpy}}."""
    sets = {}

    def nanoaod(events, compression, role):
        count = rc_module.file_count(events, STUDY["datasets"]["events_per_file"])
        sets[f"nanoaod/{compression}"] = {
            "role": role, "layout": "nanoaod", "compression": compression,
            "root": nanoaod_files(compression, count), "rntuple": nanoaod_files(compression, count, rntuple=True),
            "numpy": [f"{RC_DATA}/numpy/nanoaod/{compression}/part{k}.npz" for k in range(count)]}

    nanoaod(RC["nanoaod_events"], RC_COMPRESSION, "main")
    count = rc_module.file_count(RC["aod_events"], RC["aod_events_per_file"])
    sets[f"aod/{RC_COMPRESSION}"] = {
        "role": "main", "layout": "aod", "compression": RC_COMPRESSION,
        "root": aod_files("aod", RC_COMPRESSION, count), "rntuple": aod_files("aod", RC_COMPRESSION, count, rntuple=True),
        "numpy": [f"{RC_DATA}/numpy/aod/{RC_COMPRESSION}/part{k}.npz" for k in range(count)]}
    if RC["object_events"]:  # one file of split std::vector<aod::Type>, with its RNTuple and Numpy copies
        sets[f"aod_objects/{RC_COMPRESSION}"] = {
            "role": "objects", "layout": "aod_objects", "compression": RC_COMPRESSION,
            "root": aod_files("aod_objects", RC_COMPRESSION, 1),
            "rntuple": aod_files("aod_objects", RC_COMPRESSION, 1, rntuple=True),
            "numpy": [f"{RC_DATA}/numpy/aod_objects/{RC_COMPRESSION}/part0.npz"]}
    for compression in RC["compression_scan"]:
        if compression != RC_COMPRESSION:
            nanoaod(RC["scan_events"], compression, "scan")
    for name in RC["real_files"]:
        stem = name.removesuffix(".root")
        sets[f"real/{stem}"] = {
            "role": "real", "layout": rc_module.real_layout(stem),
            "compression": rc_module.file_compression(RC_REAL[stem]), "root": [str(RC_REAL[stem])],
            "rntuple": [f"{RC_DATA}/real/{stem}.ntuple.root"], "numpy": [f"{RC_DATA}/real/{stem}.npz"]}
    return sets


RC_INPUTS = rc_inputs()


def rc_inputs_absolute():
    """The same, with absolute paths (the notebook runs in notebooks/)."""
    return {name: {key: [str(Path(p).resolve()) for p in value] if isinstance(value, list) else value
                   for key, value in spec.items()} for name, spec in RC_INPUTS.items()}


wildcard_constraints:
    rc_layout="nanoaod|aod|aod_objects",
    rc_stem=r"[A-Za-z0-9_.-]+",


def rc_numpy_source(wildcards):
    files = nanoaod_files if wildcards.rc_layout == "nanoaod" else partial(aod_files, wildcards.rc_layout)
    return files(wildcards.compression, int(wildcards.index) + 1)[-1]


rule reader_comparison_numpy:
    input:
        rc_numpy_source,
    output:
        f"{RC_DATA}/numpy/{{rc_layout}}/{{compression}}/part{{index}}.npz",
    shell:
        "python -m throughput.experiments.reader_comparison make-numpy {input:q} {output:q} --layout {wildcards.rc_layout}"


rule reader_comparison_real_copies:
    input:
        kernel=DATASET_KERNEL["rntuple"],  # the RNTuple copy (tree_to_rntuple)
        source=lambda wildcards: str(RC_REAL[wildcards.rc_stem]),
    output:
        numpy=f"{RC_DATA}/real/{{rc_stem}}.npz",
        rntuple=f"{RC_DATA}/real/{{rc_stem}}.ntuple.root",
    params:
        layout=lambda wildcards: rc_module.real_layout(wildcards.rc_stem),
        compression=lambda wildcards: rc_module.file_compression(RC_REAL[wildcards.rc_stem]),
        level=lambda wildcards: _datasets.level(STUDY["datasets"], rc_module.file_compression(RC_REAL[wildcards.rc_stem])),
    shell:
        "python -m throughput.experiments.reader_comparison make-numpy {input.source:q} {output.numpy:q} "
        "--layout {params.layout} && "
        "python -m throughput.experiments.reader_comparison make-rntuple {input.source:q} {output.rntuple:q} "
        "--layout {params.layout:q} --compression {params.compression:q} --level {params.level}"


rule reader_comparison_java:
    input:
        [str(p) for p in _rc_processes.source_files(_rc_processes.LAURELIN_SOURCES)],
    output:
        RC_JAVA,
    shell:
        # Maven (the parent kernels/reader_comparison/java/pom.xml, -pl laurelin -am): offline
        # from the local repository under $XDG_CACHE_HOME/m2 when it has everything, else
        # from Maven Central (laurelin 1.0.1 and the build plugins).
        "python -m throughput.experiments.reader_comparison build-java build/java/reader_comparison"


EXPERIMENT_INPUTS["reader_comparison"] = [
    *(path for spec in RC_INPUTS.values() for key in ("root", "rntuple", "numpy") for path in spec.get(key, [])),
    *([RC_JAVA] if RC_WANTS_JAVA else []),
]
EXPERIMENT_PARAMETERS["reader_comparison"] = {"compression": RC_COMPRESSION, "inputs": rc_inputs_absolute()}
