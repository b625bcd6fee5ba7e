"""The command line, ``python -m throughput.experiments.reader_comparison
{read,make-numpy,make-rntuple,build-java,build-root4j} ...``: the entry points of
the workflow's rules and of the Python reader processes (the generated files' own
commands, MiniAOD-like files included, are ``python -m throughput.inputs.datasets``)."""
from __future__ import annotations

import sys

from ...core import harness
from .readers import read_main
from .spec import ReaderError
from .vocabulary import COMPRESSIONS, LAYOUTS, branch_name, tree_name

# The other commands' modules are imported by their command: `read` runs in the fork server that
# every Python reader's round is forked from (read_captured), and on its own as a command, and
# importing the copies' makers (the datasets' pandas among them) would add about half a second.


def read_captured(argv: list[str]) -> tuple[int, str, str]:
    """`read argv` in this process, as `python -m ... read` runs it: its exit status and the
    JSON lines and errors it printed. A Python reader's round (processes.run_python_reader)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        returncode = main(["read", *argv])
    return returncode, out.getvalue(), err.getvalue()


def main(argv: list[str] | None = None) -> int:
    """Entry points for the workflow's rules and the reader processes."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print("usage: python -m throughput.experiments.reader_comparison "
              "{read,make-numpy,make-rntuple,build-java,build-root4j} ...", file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    try:
        if command == "read":
            return read_main(rest)
        import argparse

        parser = argparse.ArgumentParser(prog=f"reader_comparison {command}")
        if command == "make-numpy":
            parser.add_argument("source")
            parser.add_argument("output")
            parser.add_argument("--layout", required=True, choices=sorted(LAYOUTS))
            a = parser.parse_args(rest)
            from .inputs import make_numpy_copy

            make_numpy_copy(a.source, a.output, tree_name(a.layout),
                            [branch_name(a.layout, c) for c in LAYOUTS[a.layout][2]])
        elif command == "make-rntuple":
            parser.add_argument("source")
            parser.add_argument("output")
            parser.add_argument("--layout", required=True, choices=sorted(LAYOUTS))
            parser.add_argument("--compression", required=True, choices=COMPRESSIONS)
            parser.add_argument("--level", type=int, default=1)
            a = parser.parse_args(rest)
            from .inputs import make_rntuple_copy

            make_rntuple_copy(a.source, a.output, a.compression, a.level, tree_name(a.layout))
        elif command == "build-java":
            parser.add_argument("target")
            a = parser.parse_args(rest)
            from .processes import build_java_reader

            build_java_reader(a.target)
        elif command == "build-root4j":
            parser.add_argument("target")
            a = parser.parse_args(rest)
            from .processes import build_root4j_reader

            build_root4j_reader(a.target)
        else:
            print(f"unknown command {command!r}", file=sys.stderr)
            return 2
    except (ReaderError, harness.KernelError) as error:
        print(f"reader_comparison {command}: error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # a reader's unexpected exception: one line, its failure row's reason
        if command != "read":
            raise
        print(f"reader_comparison {command}: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return 0
