"""`tsuka --help` loads no heavy module: the command line imports them only when a command needs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEAVY = (
    "httpx",
    "pydantic",
    "rich",
    "jmespath",
    "regex",
    "json_repair",
    "sqlite3",
    "asyncio",
    "tsuka_core.judge.checks",
)


def _command_loads(args: list[str], modules: tuple[str, ...]) -> tuple[str, list[str]]:
    """Run ``tsuka ARGS`` in a fresh interpreter: its output, and which of ``modules`` it loaded."""
    code = (
        "import sys\n"
        "from tsuka_core.cli.main import cli\n"
        "try:\n"
        f"    cli({args!r}, prog_name='tsuka')\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        f"print(','.join(m for m in {modules!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    *output, loaded = done.stdout.splitlines()
    return "\n".join(output), [m for m in loaded.split(",") if m]


def test_help_imports_no_heavy_module() -> None:
    output, loaded = _command_loads(["--help"], HEAVY)
    assert "Usage: tsuka" in output
    assert loaded == []


def test_validate_loads_no_http_client_nor_event_loop() -> None:
    """Registering the built-in backends must not import what only a request needs."""
    output, loaded = _command_loads(["validate"], ("httpx", "asyncio", "sqlite3", "json_repair"))
    assert "suite hash" in output
    assert loaded == []


def test_hash_loads_no_check_type() -> None:
    """Hashing a suite reads its bytes: the check types, pydantic and the plugins stay unloaded."""
    output, loaded = _command_loads(["hash"], ("pydantic", "tsuka_core.judge.checks", "pluggy", "regex"))
    assert output.strip()
    assert loaded == []


def test_every_command_is_registered_lazily_with_its_own_short_help() -> None:
    """The root group's table names each command's module and short help; both must match the command itself."""
    import importlib
    import inspect

    import click

    from tsuka_core.cli.commands import COMMANDS

    found: dict[str, str] = {}
    for path in sorted((ROOT / "tsuka_core" / "cli").glob("*_cmd*.py")):
        module = importlib.import_module(f"tsuka_core.cli.{path.stem}")
        commands = {a: v for a, v in vars(module).items() if isinstance(v, click.Command)}
        nested = {id(c) for g in commands.values() if isinstance(g, click.Group) for c in g.commands.values()}
        for attribute, value in commands.items():
            if inspect.getmodule(value.callback) is module and id(value) not in nested and value.name:
                found[value.name] = f"{path.stem}.{attribute}"
    registered = {name: f"{lazy.module}.{lazy.attribute}" for name, lazy in COMMANDS.items()}
    assert found == registered
    for name, lazy in COMMANDS.items():
        command = getattr(importlib.import_module(f"tsuka_core.cli.{lazy.module}"), lazy.attribute)
        assert command.get_short_help_str(10**6) == lazy.short_help, name
