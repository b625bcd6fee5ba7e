"""The study's configuration checked whole: read and checked against the schema by
throughput.setup.config, then each section checked against this machine by its owner's
check_config (each experiment's, which its Spec carries; throughput.inputs.datasets',
throughput.machines.tables'), from above them all (docs/architecture.md).

`python -m throughput.configuration check [FILE...]` checks config files before
Snakemake reads them (`make paper CONFIG=...` runs it): config/config.yaml and
each FILE over it, as the workflow merges them, each read strictly (naming the
file, and the line and column of bad YAML), then validated. Exit status 1 and
every problem on stderr when anything is wrong. The Snakefile validates with the
same `validate`.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .experiments import SPECS
from .inputs import datasets
from .machines import tables as machines
from .setup import config, machine_fit
from .setup.config import DEFAULT_CONFIG, ConfigError, read  # noqa: F401 (the Snakefile's names)

# Each section's check against this machine (check_config(section_values, fitter)), in the
# sections' order: the shared sections' owners', and each experiment's, which its spec carries. A
# section with none (noise) is checked by the schema alone.
SECTION_CHECKS: dict[str, config.SectionCheck] = dict(sorted({
    "datasets": datasets.check_config,
    "machines": machines.check_config,
    **{name: spec.check_config for name, spec in SPECS.items() if spec.check_config is not None},
}.items()))


@dataclass(frozen=True)
class Session:
    """What an experiment's notebook measures and writes with, made once from its parameters cell."""

    name: str
    settings: dict[str, Any]  # the validated config
    params: dict[str, Any]  # its spec's parameters (throughput.setup.spec.Spec.parameters)
    fits: list[dict[str, Any]]  # what was lowered to fit this machine (setup.machine_fit.record)
    noise: Any  # core.noise.Settings for this experiment (Settings.for_experiment)
    results_dir: Path
    figures_dir: Path
    paper_dir: Path
    outputs: Any  # report.outputs.Outputs: only what the spec declares
    # the notebook's input parameters, as the workflow passed them (a None among them: made by the
    # experiment's measure, standalone); each experiment's measure says which it reads
    inputs: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def archived(self) -> list[Any]:
        """The archived machines the config's machines section shows (machines.tables.load_archived:
        validated when read), read once for the section's tables and its macros."""
        return machines.load_archived(self.settings["machines"])


def session(name: str, given: dict[str, Any], *, fitted_to_machine: list[dict[str, Any]] | None,
            results_dir: str | os.PathLike, figures_dir: str | os.PathLike,
            paper_dir: str | os.PathLike, inputs: dict[str, Any] | None = None) -> Session:
    """A notebook's set-up: `given` (its parameters, as config sections) checked as the workflow checks
    them (a bad one stops here, naming it), what was lowered to fit this machine (`fitted_to_machine`,
    the workflow's; None: this run's own), the experiment's parameters and noise settings, its
    output folders and its input parameters (`inputs`). Its experiment then runs
    `measured = <experiment>.measure(session)` and `<experiment>.macros(measured, session)`."""
    # Imported here, not at the top: the Snakefile imports this module while it plans, and these
    # bring matplotlib.pyplot (0.5 s measured) that only a notebook needs.
    from .core import noise
    from .report.outputs import Outputs

    settings = validate(given)
    fits = machine_fit.record(settings["fitted_to_machine"][name] if fitted_to_machine is None else fitted_to_machine)
    params = SPECS[name].parameters(settings)
    return Session(name, settings, params, fits, noise.Settings.for_experiment(params, settings["noise"]),
                   Path(results_dir), Path(figures_dir), Path(paper_dir), Outputs(SPECS[name], figures_dir, paper_dir),
                   dict(inputs or {}))


def validate(given: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """throughput.setup.config.validate (its keyword arguments) with every section's check."""
    return config.validate(given, checks=SECTION_CHECKS, **kwargs)


def load(path: str | os.PathLike = DEFAULT_CONFIG, **kwargs: Any) -> dict[str, Any]:
    """Read a YAML file (throughput.setup.config.read) and validate it."""
    return validate(read(path), **kwargs)


def check(paths: list[str | os.PathLike], **kwargs: Any) -> dict[str, Any]:
    """throughput.setup.config.check (the workflow's config files, read strictly and merged) with every
    section's check."""
    return config.check(paths, checks=SECTION_CHECKS, **kwargs)


def main(argv: list[str] | None = None) -> int:
    """`python -m throughput.configuration check [FILE...]`: 0 if the workflow would take these config files."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m throughput.configuration",
                                     description="Check config files before the workflow reads them.")
    commands = parser.add_subparsers(dest="command", required=True)
    checking = commands.add_parser("check", help="config/config.yaml and each FILE over it, read strictly and validated")
    checking.add_argument("files", nargs="*", metavar="FILE", help="config files, in the order given to --configfile")
    checking.add_argument("--no-resources", action="store_true",
                          help="check files and values only, not this machine's memory, disk and cores")
    args = parser.parse_args(argv)
    try:
        check(args.files, check_resources=not args.no_resources)
    except ConfigError as error:
        print(f"{parser.prog} check: {error}", file=sys.stderr)
        return 1
    print(f"{parser.prog} check: valid: {' + '.join(str(p) for p in [DEFAULT_CONFIG, *args.files])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
