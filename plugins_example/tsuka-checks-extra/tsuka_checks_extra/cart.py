"""A tool environment: a small shop whose stock and cart the model's calls really change.

A multi-turn test names it (``"environment": {"type": "shopping_cart", "config":
{"stock": {...}, "prices": {...}}}``) and offers the tools in :data:`TOOLS`; each
call the model makes runs here, and its result goes back to the model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# docs:start environment
import tsuka_core


class CartConfig(BaseModel):
    """What the shop holds when the test begins."""

    model_config = ConfigDict(extra="forbid")

    stock: dict[str, int] = Field(default_factory=dict)
    """Each item on sale, and how many are left."""
    prices: dict[str, float] = Field(default_factory=dict)
    """Each item's price."""


class ShoppingCart(tsuka_core.ToolEnvironment[CartConfig]):
    """A shop: add to the cart, remove from it, look at it, check out."""

    name = "shopping_cart"
    config_model = CartConfig

    def __init__(self, config: CartConfig) -> None:
        super().__init__(config)
        self.stock = dict(config.stock)
        self.cart: dict[str, int] = {}
        self.orders: list[dict[str, Any]] = []

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        tools: dict[str, Callable[..., dict[str, Any]]] = {
            "add_to_cart": self.add_to_cart, "remove_from_cart": self.remove_from_cart,
            "view_cart": self.view_cart, "checkout": self.checkout,
        }  # fmt: skip
        if name not in tools:
            raise ValueError(f"there is no tool {name!r}")
        return json.dumps(tools[name](**arguments))

    def add_to_cart(self, item: str, quantity: int = 1) -> dict[str, Any]:
        if self.stock.get(item, 0) < quantity or quantity < 1:
            return {"error": f"only {self.stock.get(item, 0)} {item} left"}
        self.stock[item] -= quantity
        self.cart[item] = self.cart.get(item, 0) + quantity
        return {"cart": self.cart}

    def remove_from_cart(self, item: str) -> dict[str, Any]:
        self.stock[item] = self.stock.get(item, 0) + self.cart.pop(item, 0)
        return {"cart": self.cart}

    def view_cart(self) -> dict[str, Any]:
        total = sum(self.config.prices.get(item, 0.0) * n for item, n in self.cart.items())
        return {"cart": self.cart, "total": round(total, 2)}

    def checkout(self) -> dict[str, Any]:
        if not self.cart:
            return {"error": "the cart is empty"}
        self.orders.append({"items": self.cart, "total": self.view_cart()["total"]})
        self.cart = {}
        return {"order": len(self.orders)}

    def state(self) -> dict[str, Any]:
        return {"stock": self.stock, "cart": self.cart, "orders": self.orders}


# docs:end environment


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


TOOLS = [
    _tool("add_to_cart", "Put an item in the cart.",
          {"item": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1}}, ["item"]),
    _tool("remove_from_cart", "Take an item out of the cart.", {"item": {"type": "string"}}, ["item"]),
    _tool("view_cart", "Show the cart and its total.", {}, []),
    _tool("checkout", "Buy what is in the cart.", {}, []),
]  # fmt: skip
"""The shop's tools, as a test file offers them."""
