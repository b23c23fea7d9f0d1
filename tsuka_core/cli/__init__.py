"""The ``tsuka`` command line: each command a thin shell over the public API."""

from tsuka_core.cli.main import main

__all__ = ["main"]
