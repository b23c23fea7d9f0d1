"""`tsuka --help` loads no heavy module: the command line imports them only when a command needs them."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("httpx", "pydantic", "rich", "jmespath", "regex", "json_repair", "sqlite3", "asyncio", "tsuka_core.checks")


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


def test_creating_the_check_params_models_reads_no_source() -> None:
    """Field docstrings are read when a schema is generated; importing the check types parses no source."""
    code = (
        "import ast, inspect\n"
        "import pydantic.main\n"
        "read = []\n"
        "for module, name in ((inspect, 'findsource'), (inspect, 'getsourcelines'), (ast, 'parse')):\n"
        "    def spy(*args, _original=getattr(module, name), _name=name, **kwargs):\n"
        "        read.append(_name)\n"
        "        return _original(*args, **kwargs)\n"
        "    setattr(module, name, spy)\n"
        "import tsuka_checks_builtin.plugin\n"
        "from tsuka_core import CheckParams\n"
        "class Later(CheckParams):\n"
        "    value: int\n"
        "    '''A plugin's field.'''\n"
        "print(','.join(read))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.splitlines()[-1] == "", f"source read while creating models: {done.stdout.splitlines()[-1]}"


def test_hash_loads_no_check_type() -> None:
    """Hashing a suite reads its bytes: the check types, pydantic and the plugins stay unloaded."""
    output, loaded = _command_loads(["hash"], ("pydantic", "tsuka_core.checks", "pluggy", "regex"))
    assert output.strip()
    assert loaded == []
