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
