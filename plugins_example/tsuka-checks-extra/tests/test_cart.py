"""The shop environment: what its tools do, and its multi-turn test run against scripted answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tsuka_checks_extra import plugin
from tsuka_checks_extra.cart import CartConfig, ShoppingCart

from tsuka_core import Registry
from tsuka_core.testing import registry_of, run_test_file, tool_call

TEST = Path(__file__).parents[1] / "tsuka_checks_extra" / "suites" / "extra" / "40_tool_cart_turns.json"


@pytest.fixture(scope="module")
def registry() -> Registry:
    """This plugin and the built-in check types."""
    return registry_of(plugin)


def test_the_tools_change_the_stock_and_the_cart() -> None:
    shop = ShoppingCart(CartConfig(stock={"apple": 2}, prices={"apple": 0.5}))
    assert json.loads(shop.call("add_to_cart", {"item": "apple", "quantity": 2})) == {"cart": {"apple": 2}}
    assert json.loads(shop.call("add_to_cart", {"item": "apple"})) == {"error": "only 0 apple left"}
    assert json.loads(shop.call("view_cart", {})) == {"cart": {"apple": 2}, "total": 1.0}
    assert json.loads(shop.call("checkout", {})) == {"order": 1}
    assert shop.state() == {"stock": {"apple": 0}, "cart": {}, "orders": [{"items": {"apple": 2}, "total": 1.0}]}
    with pytest.raises(ValueError, match="there is no tool 'steal'"):
        shop.call("steal", {})


def test_the_multi_turn_test_passes_the_right_calls(registry: Registry) -> None:
    answers = [tool_call("add_to_cart", {"item": "apple", "quantity": 2}), "Two apples are in.",
               tool_call("view_cart", {}), tool_call("checkout", {}), "Bought, 1.00 in all."]  # fmt: skip
    verdict = asyncio.run(run_test_file(TEST, answers, registry=registry))
    assert verdict.score == 1.0, verdict


def test_too_many_apples_leave_another_state_than_the_reference(registry: Registry) -> None:
    answers = [tool_call("add_to_cart", {"item": "apple", "quantity": 3}), "Done.", tool_call("checkout", {}), "Ok."]
    verdict = asyncio.run(run_test_file(TEST, answers, registry=registry))
    failed = {c.location: c.outcome.detail for c in verdict.checks if not c.outcome.passed}
    assert set(failed) == {"turns[0].checks[1]", "turns[1].checks[0]", "turns[1].checks[1]"}
    assert "the state differs from the reference in cart, stock" in failed["turns[0].checks[1]"]
