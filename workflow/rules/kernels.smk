# One rule per compiled kernel (KERNELS, filled by the experiments' rules),
# its inputs exactly the sources it is made from (src/throughput/setup/kernel_sources.py):
# an edit to one experiment's kernel re-runs that experiment alone, and a
# dataset is re-made only when its generator's sources change. The CMake build
# (kernels/build.sh) is incremental and takes turns between jobs.
from throughput.setup import kernel_sources

KERNEL_NAMES = sorted({Path(binary).name for group in KERNELS.values() for binary in group})


rule kernel:
    input:
        lambda wildcards: kernel_sources.sources(wildcards.kernel, REPO / "kernels"),
    output:
        f"{KERNEL_BIN}/{{kernel}}",
    wildcard_constraints:
        kernel="|".join(KERNEL_NAMES),
    log:
        "results/logs/kernels/{kernel}.log",
    # the compiler jobs it may run: what Slurm gives the job (cpus_per_task follows threads)
    # and what cmake --parallel uses, rather than ninja's default of every core of the node
    threads: 4
    # ninja leaves a binary alone when what it is built from did not change in a
    # way that matters to it; touching it keeps Snakemake from seeing it older
    # than an edited CMake file forever. Only this binary: nothing else re-runs.
    shell:
        "CMAKE_BUILD_PARALLEL_LEVEL={threads} {REPO:q}/kernels/build.sh build/kernels python {wildcards.kernel:q} "
        "> {log:q} 2>&1 && touch {output:q}"
