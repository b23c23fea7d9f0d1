"""Click's usage errors (a bad option value, an unknown option, a missing argument) are one line and exit 2 too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from history_helpers import invoke

TSUKA = Path(sys.executable).with_name("tsuka")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["gate", "m", "--tools", "nope.json"], "Invalid value for '--tools': File 'nope.json' does not exist."),
        (["run", "--jsn"], "No such option '--jsn'. (Did you mean one of: '--json', '--json-file', '--junit'?)"),
        (["run", "-j", "abc"], "Invalid value for '-j' / '--concurrency': 'abc' is not a valid integer range."),
        (["run", "--temperature", "nan"], "Invalid value for '--temperature': nan is not a finite number."),
        (["compare", "1"], "Missing argument 'B'."),
    ],
)
def test_a_usage_error_is_one_line_with_where_help_is(args: list[str], said: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    command = f"tsuka {args[0]}"
    assert result.stderr == f"tsuka: error: {said} (see '{command} --help')\n"
    assert result.stdout == ""


@pytest.mark.parametrize(("args", "said"), [(["--bogus"], "No such option '--bogus'."), (["nope"], "No such command")])
def test_the_groups_own_usage_errors_are_one_line_through_the_installed_command(args: list[str], said: str) -> None:
    done = subprocess.run([str(TSUKA), *args], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"tsuka: error: {said}")
    assert line.endswith("(see 'tsuka --help')")
    assert "Usage:" not in done.stdout + done.stderr


def test_control_characters_in_a_bad_value_are_escaped() -> None:
    result = invoke("run", "-j", "\x1b]0;owned\x07")
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr
    assert "\x07" not in result.stderr


def test_no_command_still_shows_the_help() -> None:
    done = subprocess.run([str(TSUKA)], capture_output=True, text=True, timeout=60, check=False)
    assert "Usage: tsuka [OPTIONS] COMMAND" in done.stdout + done.stderr
