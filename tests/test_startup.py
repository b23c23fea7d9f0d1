"""`tsuka --help` loads no heavy module: the command line imports them only when a command needs them."""

from __future__ import annotations

import subprocess
import sys

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
