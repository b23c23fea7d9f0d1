"""`tsuka --help` loads no heavy module: the command line imports them only when a command needs them."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("httpx", "pydantic", "rich", "jmespath", "regex", "json_repair", "sqlite3", "asyncio", "tsuka_core.checks")


def test_help_imports_no_heavy_module() -> None:
    code = (
        "import sys\n"
        "from tsuka_core.cli.main import cli\n"
        "try:\n"
        "    cli(['--help'], prog_name='tsuka')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "Usage: tsuka" in done.stdout
    assert done.stdout.splitlines()[-1] == "", f"loaded at --help: {done.stdout.splitlines()[-1]}"


def test_validate_loads_no_http_client_nor_event_loop() -> None:
    """Registering the built-in backends must not import what only a request needs."""
    code = (
        "import sys\n"
        "from tsuka_core.cli.main import cli\n"
        "try:\n"
        "    cli(['validate'], prog_name='tsuka')\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print(','.join(m for m in ('httpx', 'asyncio', 'sqlite3', 'json_repair') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "suite hash" in done.stdout
    assert done.stdout.splitlines()[-1] == "", f"loaded by validate: {done.stdout.splitlines()[-1]}"
