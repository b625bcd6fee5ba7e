"""``python -m throughput.experiments.reader_comparison ...``: runs command_line.main.

`main` lives in command_line, not here, so that the package can re-export it:
a package importing its own __main__ makes ``python -m`` print a RuntimeWarning
on stderr, where a reader process's error is read from."""
import sys

from .command_line import main

if __name__ == "__main__":
    sys.exit(main())
