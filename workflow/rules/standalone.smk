# Each notebook with its own defaults, one at a time, as a reviewer re-executes it on a
# Binder-like host: its wall time and the peak memory of its process tree
# (throughput.core.standalone, under the measurement lock), which the method section states
# (config key standalone_notebooks: every notebook, some, or none). Its outputs go under
# results/standalone/ only. throughput.report.paper_check (after `make paper`) and
# tests/workflow/test_tiny_study.py (its one notebook) hold each run to a Binder host's means.
# Each depends on what its experiment's notebook rule does (its kernels and Python:
# rules/notebooks.smk), not on the config: a standalone run takes none of it.
STANDALONE_DIR = "results/standalone"
STANDALONE_SPECS = {spec.notebook.stem: spec for spec in SPECS.values()}
STANDALONE_NOTEBOOKS = sorted(STANDALONE_SPECS)
# the config's standalone_notebooks: true (every notebook), a list of notebook names, or false (none)
STANDALONE_RUN = (STANDALONE_NOTEBOOKS if STUDY["standalone_notebooks"] is True
                  else sorted(STUDY["standalone_notebooks"] or []))
STANDALONE_RECORDS = expand(f"{STANDALONE_DIR}/executed/{{notebook}}.json", notebook=STANDALONE_RUN)


rule standalone_notebook:
    input:
        notebook=lambda wildcards: str(STANDALONE_SPECS[wildcards.notebook].notebook),
        kernels=lambda wildcards: KERNELS[STANDALONE_SPECS[wildcards.notebook].name],
        python=lambda wildcards: _python_sources(STANDALONE_SPECS[wildcards.notebook].name),
    output:
        f"{STANDALONE_DIR}/executed/{{notebook}}.json",
    wildcard_constraints:
        notebook="|".join(STANDALONE_NOTEBOOKS),
    threads: workflow.cores  # the machine to itself, as every measuring rule
    shell:
        "python -m throughput.core.standalone {input.notebook:q} {STANDALONE_DIR}"


rule study_standalone:
    input:
        STANDALONE_RECORDS,
    output:
        "paper/generated/standalone.tex",
    run:
        import json

        from throughput.report import paper, standalone

        records = [json.loads(Path(p).read_text()) for p in input] if STANDALONE_RUN else None
        paper.write_macros(standalone.macros(records), output[0])
