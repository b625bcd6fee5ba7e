"""The study's configuration checked whole: read and checked against the schema by
throughput.setup.config, then each section checked against this machine by its owner's
check_config (an experiment's spec, throughput.inputs.datasets, throughput.machines.tables),
each imported here by name, from above them all (docs/architecture.md).

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
from typing import Any

from .experiments.gpu_bandwidth import spec as gpu_bandwidth
from .experiments.memory_bandwidth import spec as memory_bandwidth
from .experiments.rdataframe import spec as rdataframe
from .experiments.reader_comparison import spec as reader_comparison
from .experiments.writing import spec as writing
from .inputs import datasets
from .machines import tables as machines
from .setup import config
from .setup.config import DEFAULT_CONFIG, ConfigError, read  # noqa: F401 (the Snakefile's names)

# Each section's check against this machine (check_config(section_values, fitter)), in the
# sections' order; a section with none (noise) is checked by the schema alone.
SECTION_CHECKS: dict[str, config.SectionCheck] = {
    "datasets": datasets.check_config,
    "gpu_bandwidth": gpu_bandwidth.check_config,
    "machines": machines.check_config,
    "memory_bandwidth": memory_bandwidth.check_config,
    "rdataframe": rdataframe.check_config,
    "reader_comparison": reader_comparison.check_config,
    "writing": writing.check_config,
}


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
