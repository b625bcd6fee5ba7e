# Reader comparison (seed 000, Table 1 and Figure 1): notebooks/reader_comparison.ipynb
# reads one attribute of every particle collection with every reader (C++
# methods, uproot, Java/laurelin, RNTuple, a Numpy file, rootreadspeed) and
# writes Table 1's analogue, the rate-vs-values figure and the ratio tables. Its
# notebook rule comes from its spec (rules/notebooks.smk); here its inputs: the shared
# NanoAOD-like and MiniAOD-like files with their RNTuple and Numpy copies, and the copies of
# the real files (all made by rules/datasets.smk), and here the Java reader.
from throughput.experiments.reader_comparison import spec as rc_spec

RC = STUDY["reader_comparison"]
RC_COMPRESSION = STUDY["datasets"]["compression"]
RC_JAVA = "build/java/reader_comparison/laurelin-reader.jar"
RC_WANTS_JAVA = "laurelin" in RC["readers"] and rc_spec.java_available() is None


def rc_inputs():
    """Every input set of the notebook: {set: {role, layout, compression, root, rntuple, numpy}}."""
    sets = {}

    def nanoaod(events, compression, role):
        count = rc_spec.file_count(events, STUDY["datasets"]["events_per_file"])
        sets[f"nanoaod/{compression}"] = {
            "role": role, "layout": "nanoaod", "compression": compression,
            "root": nanoaod_files(compression, count), "rntuple": nanoaod_files(compression, count, rntuple=True),
            "numpy": numpy_files("nanoaod", compression, count)}

    nanoaod(RC["nanoaod_events"], RC_COMPRESSION, "main")
    count = rc_spec.file_count(RC["aod_events"], RC["aod_events_per_file"])
    sets[f"aod/{RC_COMPRESSION}"] = {
        "role": "main", "layout": "aod", "compression": RC_COMPRESSION,
        "root": aod_files("aod", RC_COMPRESSION, count), "rntuple": aod_files("aod", RC_COMPRESSION, count, rntuple=True),
        "numpy": numpy_files("aod", RC_COMPRESSION, count)}
    if RC["object_events"]:  # one file of split std::vector<aod::Type>, with its RNTuple and Numpy copies
        sets[f"aod_objects/{RC_COMPRESSION}"] = {
            "role": "objects", "layout": "aod_objects", "compression": RC_COMPRESSION,
            "root": aod_files("aod_objects", RC_COMPRESSION, 1),
            "rntuple": aod_files("aod_objects", RC_COMPRESSION, 1, rntuple=True),
            "numpy": numpy_files("aod_objects", RC_COMPRESSION, 1)}
    for compression in RC["compression_scan"]:
        if compression != RC_COMPRESSION:
            nanoaod(RC["scan_events"], compression, "scan")
    for name in RC["real_files"]:
        stem = name.removesuffix(".root")
        sets[f"real/{stem}"] = {
            "role": "real", "layout": rc_spec.real_layout(stem),
            "compression": rc_spec.file_compression(REAL_FILES[stem]), "root": [str(REAL_FILES[stem])],
            "rntuple": [real_copy(stem, ".ntuple.root")], "numpy": [real_copy(stem, ".npz")]}
    return sets


RC_INPUTS = rc_inputs()


def rc_inputs_absolute():
    """The same, with absolute paths (the notebook runs in notebooks/)."""
    return {name: {key: [str(Path(p).resolve()) for p in value] if isinstance(value, list) else value
                   for key, value in spec.items()} for name, spec in RC_INPUTS.items()}


rule reader_comparison_java:
    input:
        [str(p) for p in rc_spec.source_files(rc_spec.LAURELIN_SOURCES)],
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
