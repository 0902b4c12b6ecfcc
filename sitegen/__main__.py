"""`python -m sitegen`: hands over to the command line; does nothing else."""

from __future__ import annotations

from sitegen.cli import run

if __name__ == "__main__":
    run()
