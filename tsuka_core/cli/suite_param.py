"""The ``--suite`` value every command takes: a folder of test files, or the name of a registered suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from tsuka_core.errors import SuiteError
from tsuka_core.suite.loading import resolve_suite

__all__ = ["SUITE_TYPE", "SuiteParam"]


class SuiteParam(click.ParamType[Path, Any]):
    """A suite folder: the value itself when it is an existing folder, else the folder of the suite it names."""

    name = "suite"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        """The folder ``value`` stands for; an unknown name fails with the closest registered names."""

        try:
            return resolve_suite(value)
        except SuiteError as exc:
            self.fail(str(exc), param, ctx)


SUITE_TYPE = SuiteParam()
"""The type of every ``--suite`` option and ``SUITE`` argument."""
