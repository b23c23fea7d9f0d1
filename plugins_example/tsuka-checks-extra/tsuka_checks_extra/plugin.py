"""The plugin module the ``tsuka`` entry point names: it registers every check type and the suite of this package."""

from __future__ import annotations

from importlib.resources import files

# docs:start hookimpl
import tsuka_core
from tsuka_checks_extra.counts import ToolCallCount, WordCountRange
from tsuka_checks_extra.schema import JsonSchema, ToolArgsSchema

CHECK_TYPES = (JsonSchema, ToolArgsSchema, WordCountRange, ToolCallCount)


@tsuka_core.hookimpl
def register_check_types(register: tsuka_core.RegisterCheckType) -> None:
    """Register the four check types of tsuka-checks-extra."""
    for check_type in CHECK_TYPES:
        register(check_type)


# docs:end hookimpl


# docs:start suite-hookimpl
@tsuka_core.hookimpl
def register_suites(register: tsuka_core.RegisterSuite) -> None:
    """Register the ``extra`` suite: a few tests judged by this package's check types."""
    register("extra", files("tsuka_checks_extra") / "suites" / "extra")


# docs:end suite-hookimpl


@tsuka_core.hookimpl
def register_scorecards(register: tsuka_core.RegisterScorecard) -> None:
    """Register the pass-rate scorecard of the ``extra`` suites."""
    from tsuka_checks_extra.scorecard import PassRate

    register(PassRate)


@tsuka_core.hookimpl
def register_tool_environments(register: tsuka_core.RegisterToolEnvironment) -> None:
    """Register the shop the ``extra`` suite's multi-turn test runs in."""
    from tsuka_checks_extra.cart import ShoppingCart

    register(ShoppingCart)
