# Every experiment's notebook rule, made from its spec (throughput.experiments.SPECS):
# the notebook and kernels it needs, the figures and tables it declares, all cores
# (a benchmark needs the machine to itself: no other job runs beside it).
# An experiment's own rule file (rules/<experiment>.smk, read before this one)
# adds what else it needs:
#   EXPERIMENT_INPUTS[name]      generated inputs the notebook reads (datasets, the Java reader)
#   EXPERIMENT_PARAMETERS[name]  notebook parameters besides its config section (a dict)
# The parameters are one string, made here from the config: Snakemake records it with
# the notebook's output and re-runs the notebook when it changes (--rerun-triggers
# params). It must not be a function of `input`: Snakemake neither records nor
# compares such params, so a changed config would re-run nothing.
# An experiment whose spec sets `shows_archived` also gets the config section `machines`
# and every archived machine's files as inputs: a machine archived or changed re-runs it.
# Its Python is an input too (its package and the shared rooms, not the other experiments):
# edited code re-runs the notebook, whose stored measurements are reused unless what measures
# them changed (their reuse keys hold the kernels' binaries and the measuring sources).
_ARCHIVE_DIR = machines.archive_dir(STUDY["machines"])
ARCHIVED_FILES = sorted(str(p) for p in _ARCHIVE_DIR.glob("*/**/*") if p.is_file()) if _ARCHIVE_DIR.is_dir() else []


_PACKAGE = REPO / "src" / "throughput"


def _python_sources(name):
    shared = [p for p in _PACKAGE.rglob("*.py") if p.relative_to(_PACKAGE).parts[0] != "experiments"]
    own = [_PACKAGE / "experiments" / "__init__.py", *(_PACKAGE / "experiments" / name).rglob("*.py")]
    return sorted(str(p) for p in shared + own)


def _notebook_parameters_of(spec):
    machines = {"machines": STUDY["machines"]} if spec.shows_archived else {}
    return notebook_parameters(spec.name, **machines, **EXPERIMENT_PARAMETERS.get(spec.name, {}))


for _spec in SPECS.values():
    _outputs = _spec.outputs()

    rule:
        name:
            _spec.name
        input:
            notebook=str(_spec.notebook),
            kernels=KERNELS[_spec.name],
            python=_python_sources(_spec.name),
            data=EXPERIMENT_INPUTS.get(_spec.name, []),
            archived=ARCHIVED_FILES if _spec.shows_archived else [],
        output:
            notebook=str(_outputs["notebook"]),
            figures=[str(p) for p in _outputs["figures"]],
            tables=[str(p) for p in _outputs["tables"]],
            data=[str(p) for p in _outputs["data"]],
        params:
            parameters=_notebook_parameters_of(_spec),
        threads: workflow.cores
        shell:
            "python -m throughput.core.notebook {input.notebook:q} {output.notebook:q} "
            "--cwd {REPO:q}/notebooks --parameters {params.parameters:q}"

    PAPER_INPUTS += getattr(rules, _spec.name).output
