# All compiled kernels (KERNELS, filled by the experiments' rules), in one
# CMake build (kernels/build.sh): incremental, so re-running costs seconds and
# only changed sources are recompiled.
rule kernels:
    input:
        sources=[str(p) for p in (REPO / "kernels").rglob("*") if p.is_file()],
    output:
        [binary for group in KERNELS.values() for binary in group],
    log:
        "results/logs/kernels.log",
    # ninja relinks only what changed; touching every output keeps Snakemake
    # from seeing the untouched binaries as older than the edited source forever.
    shell:
        "{REPO}/kernels/build.sh build/kernels python > {log} 2>&1 && touch {output}"
