"""BFCL's multi-turn classes as a tool environment: the file system, trading bot, vehicle... a call really changes.

The environment builds each class the test names from the installed
``bfcl-eval`` (nothing of it is copied here) and loads the test's initial
configuration into it, as BFCL's ``execute_multi_turn_func_call`` does. A call
runs the public method of that name (when two classes have one, the last
class named wins, as in BFCL), with the arguments as keywords; its result is
text as BFCL makes it (a dict as JSON). Unlike BFCL, which ``eval``s a string
built from the model's call, tsuka never runs anything but a method of one of
those classes: any other name gets BFCL's error for an undefined name. The
names BFCL refuses (``kill``, ``exit``...) are refused with its words. The
state is every public attribute of every instance, and two environments
differ where BFCL's state check says they do (``!=`` on each attribute).
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tsuka_core import ToolEnvironment

__all__ = ["CLASSES", "BfclConfig", "BfclEnvironment", "method_owner", "reference_call"]

_SOURCE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
CLASSES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
"""BFCL's multi-turn classes, and the module of each in bfcl-eval."""
_STATELESS = frozenset({"MathAPI"})
_REFUSED = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")
"""The names BFCL's executor refuses to call."""

ClassName = Literal[
    "GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI", "TradingBot", "TravelAPI",
    "VehicleControlAPI",
]  # fmt: skip


class BfclConfig(BaseModel):
    """Which of BFCL's classes a test involves, and the scenario each starts from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    classes: list[ClassName] = Field(min_length=1, max_length=len(CLASSES))
    """BFCL's ``involved_classes``, in BFCL's order."""
    initial_config: dict[str, Any] = Field(default_factory=dict)
    """BFCL's ``initial_config``: each class's scenario, by class name."""
    long_context: bool = False
    """Load each scenario with BFCL's long context (its long-context category)."""


def _class(name: str) -> Any:
    return getattr(importlib.import_module(f"{_SOURCE}.{CLASSES[name]}"), name)


def method_owner(classes: list[str], method: str) -> str | None:
    """The class whose public method ``method`` a call runs: the last of ``classes`` that has it, as in BFCL."""
    found = None
    for name in classes:
        if not method.startswith("_") and inspect.isfunction(getattr(_class(name), method, None)):
            found = name
    return found


def reference_call(classes: list[str], source: str) -> tuple[str, dict[str, Any]]:
    """One of BFCL's ground-truth calls (``cd(folder='document')``, ``sort('a.pdf')``) as a name and keyword
    arguments: positional arguments named by the method's signature. ValueError for anything but a call of a
    method with literal arguments."""
    import ast

    node = ast.parse(source.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a call of a method: {source!r}")
    name = node.func.id
    owner = method_owner(classes, name)
    if owner is None:
        raise ValueError(f"{name!r} is not a method of {', '.join(classes)}")
    parameters = [p for p in inspect.signature(getattr(_class(owner), name)).parameters if p != "self"]
    if len(node.args) > len(parameters):
        raise ValueError(f"{source!r}: more arguments than {name} takes")
    arguments = {parameters[i]: ast.literal_eval(arg) for i, arg in enumerate(node.args)}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise ValueError(f"{source!r}: ** arguments")
        arguments[keyword.arg] = ast.literal_eval(keyword.value)
    return name, arguments


def _text(result: Any) -> str:
    """A method's result as BFCL's executor makes it text."""
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


def _jsonable(value: Any, depth: int = 0) -> Any:
    """An attribute's value for display: JSON values as they are, an object as its public attributes."""
    if depth > 12:
        return repr(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v, depth + 1) for v in value]
    if hasattr(value, "__dict__"):
        public = {k: v for k, v in vars(value).items() if not k.startswith("_") and k != "parent"}
        return {"type": type(value).__name__, **{k: _jsonable(v, depth + 1) for k, v in public.items()}}
    return repr(value)


class BfclEnvironment(ToolEnvironment[BfclConfig]):
    """BFCL's multi-turn classes (its file system, messaging, trading bot, travel, vehicle...), as BFCL runs them."""

    name = "bfcl"
    config_model = BfclConfig

    def __init__(self, config: BfclConfig) -> None:
        super().__init__(config)
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Any] = {}
        for name in config.classes:
            instance = _class(name)()
            if name not in _STATELESS:
                scenario = copy.deepcopy(config.initial_config.get(name, {}))
                instance._load_scenario(scenario, long_context=config.long_context)
            self.instances[name] = instance
            for method, bound in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not method.startswith("_"):
                    self.methods[method] = bound

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Run the method ``name`` with ``arguments`` as keywords; its result as BFCL's executor makes it text."""
        if name in _REFUSED:
            raise RuntimeError(f"Function call {name} is not allowed.")
        method = self.methods.get(name)
        if method is None:
            raise NameError(f"name '{name}' is not defined")
        return _text(method(**arguments))

    def state(self) -> dict[str, Any]:
        """Every public attribute of every instance, by class."""
        return {
            name: {k: _jsonable(v) for k, v in vars(instance).items() if not k.startswith("_")}
            for name, instance in self.instances.items()
        }

    def differences(self, other: ToolEnvironment[BfclConfig]) -> dict[str, Any]:
        """Where BFCL's state check finds the two differ: each public attribute of the reference's instances."""
        assert isinstance(other, BfclEnvironment)
        found: dict[str, Any] = {}
        for name, reference in other.instances.items():
            mine = self.instances[name]
            for attribute in vars(reference):
                if attribute.startswith("_"):
                    continue
                ours, theirs = getattr(mine, attribute), getattr(reference, attribute)
                if ours != theirs:
                    found[f"{name}.{attribute}"] = {"model": _jsonable(ours), "reference": _jsonable(theirs)}
        return found
