"""Validate one test file's JSON into a Test, collecting every problem with its location."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, cast

from pydantic import ValidationError

from tsuka_core.judge.jsontools import json_type_name
from tsuka_core.plugins.registry import Registry
from tsuka_core.suite.model import Check, Step, Test
from tsuka_core.terms import CATEGORIES, Category

__all__ = ["TEST_KEYS", "parse_test"]

TEST_KEYS = ("name", "category", "description", "weight", "tools", "system", "prompt", "checks", "steps")
STEP_KEYS = ("prompt", "toolResult", "checks")
TIERS = ("small", "medium", "large")


def _suggest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    import difflib  # only a file with a problem needs it

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _input_kind(value: Any) -> str:
    """The JSON type of a value as written: 2.0 is a number, 2 an integer."""
    return "number" if isinstance(value, float) else json_type_name(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class _Parser:
    def __init__(self, file: str, registry: Registry) -> None:
        self.file = file
        self.registry = registry
        self.problems: list[str] = []

    def problem(self, where: str, message: str) -> None:
        self.problems.append(f"{self.file}: {where}: {message}" if where else f"{self.file}: {message}")

    def unknown_keys(self, where: str, data: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
        for key in data:
            if key not in allowed:
                prefix = f"{where}." if where else ""
                self.problem(f"{prefix}{key}", f"unknown key{_suggest(key, allowed)}")

    def text(self, data: Mapping[str, Any], key: str, where: str, *, required: bool) -> str | None:
        value = data.get(key)
        loc = f"{where}.{key}" if where else key
        if value is None:
            if required or key in data:
                self.problem(loc, "required, a non-empty string" if required else "must be a string")
            return None
        if not isinstance(value, str):
            self.problem(loc, f"must be a string, got {json_type_name(value)}")
            return None
        if required and not value.strip():
            self.problem(loc, "must not be empty")
            return None
        return value

    def weight(self, data: Mapping[str, Any], where: str) -> float:
        if "weight" not in data:
            return 1
        value = data["weight"]
        loc = f"{where}.weight" if where else "weight"
        if not _is_number(value):
            self.problem(loc, f"must be a number > 0, got {json_type_name(value)}")
            return 1
        if not math.isfinite(value):
            self.problem(loc, f"must be a finite number > 0, got {value}")
            return 1
        if not value > 0:
            self.problem(loc, f"must be > 0, got {value}")
            return 1
        return float(value) if isinstance(value, float) else value

    def tools(self, data: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
        raw = data.get("tools", [])
        if not isinstance(raw, list):
            self.problem("tools", f"must be an array of tool schemas, got {json_type_name(raw)}")
            return ()
        for index, tool in enumerate(raw):
            loc = f"tools[{index}]"
            function = tool.get("function") if isinstance(tool, dict) else None
            if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
                self.problem(loc, 'must be {"type": "function", "function": {...}}')
                continue
            if not isinstance(function.get("name"), str) or not function["name"]:
                self.problem(f"{loc}.function.name", "required, a non-empty string")
            params = function.get("parameters")
            if params is not None and not isinstance(params, dict):
                self.problem(f"{loc}.function.parameters", "must be a JSON Schema object")
            for where, holder in ((loc, tool), (f"{loc}.function", function)):
                tier = holder.get("requiredTier", "small")
                if tier not in TIERS:
                    self.problem(f"{where}.requiredTier", f"must be one of {', '.join(TIERS)}, got {tier!r}")
        return tuple(raw)

    def check(self, raw: Any, where: str) -> Check | None:
        if not isinstance(raw, dict):
            self.problem(where, f"a check must be an object, got {json_type_name(raw)}")
            return None
        type_name = raw.get("type")
        if not isinstance(type_name, str) or not type_name:
            self.problem(f"{where}.type", "required, the name of a check type ('tsuka checks' lists them)")
            return None
        check_type = self.registry.check_type(type_name)
        if check_type is None:
            hint = _suggest(type_name, sorted(self.registry.check_types))
            self.problem(f"{where}.type", f"unknown check type {type_name!r}{hint} ('tsuka checks' lists them)")
            return None
        weight = self.weight(raw, where)
        fields = {k: v for k, v in raw.items() if k not in ("type", "weight")}
        try:
            params = check_type.params_model.model_validate(fields)
        except ValidationError as exc:
            allowed = ("type", "weight", *check_type.params_model.model_fields)
            for error in exc.errors():
                self.pydantic_problem(where, type_name, error, allowed)
            return None
        return Check(type_name, weight, params, check_type(params), where)

    def pydantic_problem(self, where: str, type_name: str, error: Any, allowed: tuple[str, ...]) -> None:
        loc = ".".join(str(part) for part in error["loc"])
        at = f"{where}.{loc}" if loc else where
        kind = error["type"]
        if kind == "missing":
            self.problem(at, f"required by check type {type_name!r}")
        elif kind == "extra_forbidden":
            key = str(error["loc"][-1])
            self.problem(at, f"unknown key for check type {type_name!r}{_suggest(key, allowed)}")
        else:
            message = str(error["msg"]).removeprefix("Value error, ")
            if kind.endswith("_type"):
                message = f"{message}, got {_input_kind(error.get('input'))}"
            self.problem(at, message)

    def step(self, raw: Any, where: str, first: bool) -> Step | None:
        if not isinstance(raw, dict):
            self.problem(where, f"a step must be an object, got {json_type_name(raw)}")
            return None
        self.unknown_keys(where, raw, STEP_KEYS)
        prompt = self.text(raw, "prompt", where, required=False)
        tool_result = self.text(raw, "toolResult", where, required=False)
        if first and "prompt" not in raw:
            self.problem(f"{where}.prompt" if where else "prompt", "the first step needs a prompt")
        elif "prompt" not in raw and "toolResult" not in raw:
            self.problem(where, "a step needs a 'prompt' or a 'toolResult' (or both)")
        checks = self.checks(raw.get("checks"), f"{where}.checks" if where else "checks")
        return Step(prompt, tool_result, checks)

    def checks(self, raw: Any, where: str) -> tuple[Check, ...]:
        if not isinstance(raw, list) or not raw:
            self.problem(where, "required, a non-empty array of checks")
            return ()
        found = [self.check(item, f"{where}[{i}]") for i, item in enumerate(raw)]
        return tuple(c for c in found if c is not None)

    def steps(self, data: Mapping[str, Any]) -> tuple[Step, ...]:
        short = "prompt" in data or "checks" in data
        if short and "steps" in data:
            self.problem("", "has both 'prompt'/'checks' and 'steps': use one form")
            return ()
        if not short and "steps" not in data:
            self.problem("", "needs 'prompt' with 'checks', or 'steps'")
            return ()
        if short:
            step = self.step({k: data[k] for k in ("prompt", "checks") if k in data}, "", True)
            return (step,) if step else ()
        raw = data["steps"]
        if not isinstance(raw, list) or not raw:
            self.problem("steps", "must be a non-empty array of steps")
            return ()
        found = [self.step(item, f"steps[{i}]", i == 0) for i, item in enumerate(raw)]
        return tuple(s for s in found if s is not None)

    def test(self, data: Any) -> Test | None:
        if not isinstance(data, dict):
            self.problem("", f"a test file must hold a JSON object, got {json_type_name(data)}")
            return None
        self.unknown_keys("", data, TEST_KEYS)
        name = self.text(data, "name", "", required=True)
        category = data.get("category")
        if category not in CATEGORIES:
            got = f"{category!r}" if isinstance(category, str) else json_type_name(category)
            hint = _suggest(category, CATEGORIES) if isinstance(category, str) else ""
            self.problem("category", f"must be one of {', '.join(CATEGORIES)}, got {got}{hint}")
        description = self.text(data, "description", "", required=False) or ""
        system = self.text(data, "system", "", required=False)
        weight = self.weight(data, "")
        tools = self.tools(data)
        steps = self.steps(data)
        if self.problems or name is None:
            return None
        return Test(self.file, name, cast(Category, category), steps, weight, description, tools, system)


def parse_test(file: str, data: Any, registry: Registry) -> tuple[Test | None, list[str]]:
    """Validate one file's parsed JSON; returns the test (or ``None``) and every problem found."""
    parser = _Parser(file, registry)
    test = parser.test(data)
    return test, parser.problems
