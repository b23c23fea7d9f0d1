"""Problems a user can cause or meet end in one line and an exit status, never a traceback."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing, suppress
from pathlib import Path

import httpx
import pytest
from answerers import perfect
from click.testing import Result
from history_helpers import invoke
from loopback import LoopbackServer

from tsuka_core.backends.http import request_json
from tsuka_core.errors import RequestError
from tsuka_core.storage import history

pytestmark = pytest.mark.usefixtures("fast_retries")
TSUKA = Path(sys.executable).with_name("tsuka")


def one_line(result: Result, status: int, *needles: str) -> None:
    """``result`` exited ``status`` with one error line holding every needle, and no traceback."""
    assert result.exit_code == status, result.stderr
    stderr = result.stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.startswith(("tsuka: error:", "Error:"))]
    assert len(lines) == 1, stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def suite_with(folder: Path, check: dict[str, object], category: str = "instruction") -> Path:
    folder.mkdir()
    test = {"name": "t", "category": category, "prompt": "p", "checks": [check]}
    (folder / "10_t.json").write_text(json.dumps(test), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("check", "needle"),
    [
        ({"type": "regex", "value": "(" * 5000 + "a" + ")" * 5000}, "regex does not compile: it is nested too deeply"),
        ({"type": "json_path_equals", "path": "(" * 3000 + "a" + ")" * 3000, "value": 1}, "nested too deeply"),
    ],
)
def test_a_deeply_nested_pattern_or_path_in_a_suite_is_one_line(tmp_path: Path, check: dict, needle: str) -> None:
    result = invoke("validate", suite_with(tmp_path / "suite", check))
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert "10_t.json: checks[0]." in result.stderr
    assert needle in result.stderr


def test_a_deeply_nested_tools_file_is_one_line(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    one_line(invoke("gate", "m", "--tools", tools, "--profiles", tmp_path / "p.json"), 2, str(tools))


@pytest.mark.parametrize("option", ["--timeout", "--temperature"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_timeout_or_temperature_that_is_not_a_number_is_refused(tmp_path: Path, option: str, value: str) -> None:
    with LoopbackServer() as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", tmp_path / "p.json", option, value)
    one_line(result, 2, f"Invalid value for '{option}'", value)
    assert server.requests == []


@pytest.fixture
def locked_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A history file another connection holds a write transaction on; writers wait 0.2 s for it."""
    path = tmp_path / "history.sqlite"
    history.connect(path).close()
    monkeypatch.setattr(history, "LOCK_TIMEOUT", 0.2)
    with closing(sqlite3.connect(path, isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")
        yield path
        holder.execute("ROLLBACK")


def test_a_history_locked_longer_than_the_wait_is_one_line(tmp_path: Path, locked_history: Path) -> None:
    with LoopbackServer() as server:
        result = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", tmp_path / "p.json",
            "--history-db", locked_history, "-e", "none",
        )  # fmt: skip
    one_line(result, 2, str(locked_history), "locked by another process for more than 0.2 s", "--no-history")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history holding one run of m1 at effort none."""
    folder = tmp_path_factory.mktemp("recorded")
    with LoopbackServer(perfect) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", folder / "p.json", "-e", "none",
                        "--history-db", folder / "history.sqlite")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return folder / "history.sqlite"


TAMPERINGS = [
    "UPDATE steps SET response = '{\"nope\": 1}'",
    "UPDATE steps SET response = 'not json'",
    "UPDATE steps SET response = '{\"text\": 5}'",
    "UPDATE steps SET messages = '{}'",
    "UPDATE levels SET record = json_set(record, '$.scores', json('[1, 2]'))",
    "UPDATE levels SET notes = '5'",
    "UPDATE runs SET models = '\"m1\"'",
    "UPDATE tests SET score = 'high'",
    'UPDATE steps SET response = \'{"text": "a", "completionTokens": 1e400}\'',
]


@pytest.mark.parametrize("tampering", TAMPERINGS)
def test_a_tampered_history_is_one_line_in_show_report_and_rescore(
    tmp_path: Path, recorded: Path, tampering: str
) -> None:
    copy = tmp_path / "history.sqlite"
    shutil.copyfile(recorded, copy)
    with closing(sqlite3.connect(copy)) as db:
        db.execute(tampering)
        db.commit()
    for args in (
        ("show", "1", "m1@none", "frase_8_parole"),
        ("report", "-o", tmp_path / "report.html"),
        ("rescore", "1", "--profiles", tmp_path / "p.json"),
    ):
        result = invoke(*args, "--history-db", copy)
        one_line(result, 2, str(copy), "is damaged")


def test_a_certificate_that_fails_verification_is_not_retried(certificate: tuple[Path, Path]) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    accepted: list[int] = []
    with closing(socket.create_server(("127.0.0.1", 0))) as listener:
        listener.settimeout(0.2)
        stop = threading.Event()

        def serve() -> None:
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                accepted.append(1)
                with closing(conn), suppress(ssl.SSLError, OSError):
                    context.wrap_socket(conn, server_side=True).close()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        url = f"https://127.0.0.1:{listener.getsockname()[1]}/v1/models"

        async def ask() -> None:
            async with httpx.AsyncClient() as client:
                await request_json(client, "GET", url, retries=3)

        with pytest.raises(RequestError) as caught:
            asyncio.run(ask())
        stop.set()
        thread.join(timeout=5)
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)
    assert not caught.value.retryable
    assert len(accepted) == 1


def test_a_full_disk_mid_run_closes_the_history_and_keeps_the_store(tmp_path: Path) -> None:
    """Files may not grow past 60 kB (RLIMIT_FSIZE): the history fills up after the first model."""
    limit = 60_000

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    store, history_path = tmp_path / "models_profile.json", tmp_path / "history.sqlite"
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    with LoopbackServer(perfect, models=["a", "b"]) as server:
        done = subprocess.run(
            [str(TSUKA), "run", "all", "--base-url", server.base_url, "--profiles", str(store),
             "--history-db", str(history_path), "-e", "none", "-e", "low", "-j", "1", "--json-file", str(report)],
            check=False, capture_output=True, text=True, env=env, timeout=120, preexec_fn=small_disk,
        )  # fmt: skip
    # The run failed (exit 1, not bad input), and says exactly what the store holds from it.
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("tsuka: error:")]
    assert f"cannot write the run history {history_path}" in line
    assert "nothing was written" not in line
    with closing(sqlite3.connect(history_path)) as db:
        assert db.execute("SELECT status FROM runs").fetchall() in ([("failed",)], [("running",)])
    profiles = json.loads(store.read_text(encoding="utf-8"))["profiles"]
    assert "a@none" in profiles
    assert all(p["testsHash"] == profiles["a@none"]["testsHash"] for p in profiles.values())
    assert f"stored before it: {', '.join(profiles)}" in line
    # The CI file agrees with the store: the profiles it lists are the ones stored.
    written = json.loads(report.read_text(encoding="utf-8"))
    assert written["profiles"] == profiles
    assert written["error"] in line
