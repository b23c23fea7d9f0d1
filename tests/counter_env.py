"""A tool environment for the tests: a counter the calls change, and tools that misbehave on purpose."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from pydantic import BaseModel, ConfigDict

import tsuka_core


class CounterConfig(BaseModel):
    """Where the counter starts."""

    model_config = ConfigDict(extra="forbid")

    start: int = 0
    broken: bool = False


class Counter(tsuka_core.ToolEnvironment[CounterConfig]):
    """A counter: add to it, read it; and tools that hang, print, or say which process runs them."""

    name = "counter"
    config_model = CounterConfig

    def __init__(self, config: CounterConfig) -> None:
        if config.broken:
            raise RuntimeError("this counter is broken on purpose")
        super().__init__(config)
        self.value = config.start

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        if name == "add":
            self.value += int(arguments.get("amount", 1))
            return json.dumps({"value": self.value})
        if name == "read":
            return str(self.value)
        if name == "hang":
            time.sleep(600)
        if name == "noisy":
            print("noise on stdout that must not reach tsuka")
            return "quiet"
        if name == "pid":
            return str(os.getpid())
        raise ValueError(f"no tool {name!r}")

    def state(self) -> dict[str, Any]:
        return {"value": self.value}


@tsuka_core.hookimpl
def register_tool_environments(register: tsuka_core.RegisterToolEnvironment) -> None:
    """The counter."""
    register(Counter)


def tool(name: str, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """A tool schema for one of the counter's tools."""
    parameters = {"type": "object", "properties": properties or {}}
    return {"type": "function", "function": {"name": name, "description": name, "parameters": parameters}}
