# NanoAOD-like inputs (src/throughput/inputs/datasets.py), shared by the experiments:
#   data/nanoaod/<compression>/part<k>.root          resampled from the real CMS file
#   data/nanoaod/<compression>/part<k>.ntuple.root   the same events as an RNTuple
# An experiment asks for them with nanoaod_files(compression, count).
KERNELS["datasets"] = [f"{KERNEL_BIN}/make_nanoaod_like", f"{KERNEL_BIN}/tree_to_rntuple"]


def nanoaod_files(compression, count, rntuple=False):
    suffix = ".ntuple.root" if rntuple else ".root"
    return [f"data/nanoaod/{compression}/part{k}{suffix}" for k in range(count)]


wildcard_constraints:
    compression="none|ZLIB|LZ4|ZSTD|LZMA",
    index=r"\d+",


rule nanoaod_like:
    input:
        kernel=KERNELS["datasets"][0],
    output:
        "data/nanoaod/{compression}/part{index}.root",
        # the values readers must find in it, taken when it is made (throughput.inputs.references)
        "data/nanoaod/{compression}/part{index}.root.reference.json",
    params:
        section=json.dumps(STUDY["datasets"]),
    shell:
        "python -m throughput.inputs.datasets nanoaod {output[0]:q} --compression {wildcards.compression} "
        "--index {wildcards.index} --section {params.section:q}"


rule nanoaod_rntuple:
    input:
        kernel=KERNELS["datasets"][1],
        tree="data/nanoaod/{compression}/part{index}.root",
    output:
        "data/nanoaod/{compression}/part{index}.ntuple.root",
    params:
        section=json.dumps(STUDY["datasets"]),
    shell:
        "python -m throughput.inputs.datasets rntuple {output:q} --input {input.tree:q} "
        "--compression {wildcards.compression} --section {params.section:q}"
