# GPU memory bandwidth, explode and combine (seed 000, Table 2):
# notebooks/gpu_bandwidth.ipynb measures with the kernels (where a GPU exists;
# elsewhere its GPU rows say "not measured" and why) and writes the tables,
# figures and macros the paper uses. The CUDA program is built only where an
# nvcc is found (kernels/build.sh says so when it is not).
from throughput.experiments import gpu_bandwidth as _gpu_bandwidth

KERNELS["gpu_bandwidth"] = [f"{KERNEL_BIN}/host_copy"] + (
    [f"{KERNEL_BIN}/gpu_bandwidth_cuda"] if _gpu_bandwidth.find_nvcc() else []
)


rule gpu_bandwidth:
    input:
        notebook=str(REPO / "notebooks" / "gpu_bandwidth.ipynb"),
        kernels=KERNELS["gpu_bandwidth"],
    output:
        notebook="results/gpu_bandwidth/gpu_bandwidth.ipynb",
        figures=expand("figures/gpu_bandwidth/{name}.pdf", name=["table2", "jagged"]),
        tables=expand(
            "paper/generated/gpu_bandwidth/{name}.tex",
            name=["table2", "gpu_detail", "jagged_table", "macros"],
        ),
    params:
        parameters=lambda wildcards: notebook_parameters("gpu_bandwidth"),
    # A benchmark needs the machine to itself: take every core so that no
    # other job runs beside it.
    threads: workflow.cores
    shell:
        "python -m throughput.notebook {input.notebook} {output.notebook} "
        "--cwd {REPO}/notebooks --parameters {params.parameters:q}"


PAPER_INPUTS += rules.gpu_bandwidth.output
