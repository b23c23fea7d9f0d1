"""Paths that are not regular files, or links to foreign files: one line each, bounded, nothing written."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from loopback import LoopbackServer

from tsuka_core.errors import StoreError
from tsuka_core.storage.files import MAX_FILE_BYTES, UnreadableFileError, read_regular_file
from tsuka_core.storage.store import ProfileStore

ROOT = Path(__file__).resolve().parents[1]
TSUKA = Path(sys.executable).with_name("tsuka")
MEMORY = 2 * 1024**3
"""Address space a command may use here: a read that never ends fails at this, not at the machine's limit."""

pytestmark = pytest.mark.usefixtures("fast_retries")


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def tsuka(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``tsuka`` in a fresh process with at most :data:`MEMORY` of address space and 60 s."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    env["PYTHONPATH"] = str(ROOT)
    command = [str(TSUKA), *map(str, args)]
    return subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, cwd=cwd, timeout=60, preexec_fn=limited
    )


def one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("tsuka: error:")]
    for needle in needles:
        assert needle in line, line


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo.json"
    os.mkfifo(path)
    return path


def test_a_device_or_a_fifo_as_the_store_is_refused(tmp_path: Path, fifo: Path) -> None:
    one_line_error(tsuka("profiles", "--profiles", "/dev/zero"), "/dev/zero", "character device")
    one_line_error(tsuka("profiles", "--profiles", fifo), "FIFO")
    (tmp_path / "models_profile.json").symlink_to("/dev/zero")
    one_line_error(tsuka("profiles", cwd=tmp_path), "models_profile.json", "character device")


def test_a_device_or_a_fifo_as_the_tools_file_is_refused(tmp_path: Path, fifo: Path) -> None:
    for tools, kind in (("/dev/zero", "character device"), (fifo, "FIFO")):
        result = tsuka("gate", "m", "--tools", tools, "--profiles", tmp_path / "p.json")
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        assert kind in result.stderr


def test_a_file_over_the_limit_is_refused_without_reading_past_it(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(UnreadableFileError, match="larger than the 64 MiB limit"):
        read_regular_file(big)
    with pytest.raises(StoreError, match="larger than the 64 MiB limit"):
        ProfileStore(big).read()


def test_a_store_link_to_a_foreign_file_is_never_written_through(tmp_path: Path) -> None:
    foreign = tmp_path / "settings.json"
    foreign.write_text('{"theme": "dark"}', encoding="utf-8")
    link = tmp_path / "models_profile.json"
    link.symlink_to(foreign)
    with LoopbackServer() as server:
        result = tsuka("run", "m1", "--base-url", server.base_url, "--profiles", link, "-e", "none", "--no-history")
    one_line_error(result, "symbolic link", "not a profile store")
    assert server.bodies == []
    assert foreign.read_text(encoding="utf-8") == '{"theme": "dark"}'
    with pytest.raises(StoreError, match="not a profile store"):
        ProfileStore(link).update({}, {"m": "low"})
    assert json.loads(foreign.read_text(encoding="utf-8")) == {"theme": "dark"}


def test_a_dangling_store_link_is_not_written_through(tmp_path: Path) -> None:
    link = tmp_path / "models_profile.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(StoreError, match="symbolic link to nothing"):
        ProfileStore(link).update({}, {"m": "low"})
    assert not (tmp_path / "elsewhere.json").exists()


def test_a_store_link_to_a_profile_store_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "shared.json"
    real.write_text('{"profiles": {}, "extra": 1}', encoding="utf-8")
    link = tmp_path / "models_profile.json"
    link.symlink_to(real)
    ProfileStore(link).update({}, {"m": "low"})
    assert json.loads(real.read_text(encoding="utf-8")) == {"profiles": {}, "extra": 1, "recommendations": {"m": "low"}}
