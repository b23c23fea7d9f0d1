"""A server that echoes the credentials it was sent inside its answers: no artefact of the run holds them."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from loopback import LoopbackServer, Received, Reply

from tsuka_core.backends.base import Backend, BackendConfig, ChatResponse
from tsuka_core.backends.masked_answers import masked_response
from tsuka_core.cli.main import cli
from tsuka_core.judge.answer import ToolCall
from tsuka_core.masking import looks_like_key, mask_json, masked_options

pytestmark = pytest.mark.usefixtures("fast_retries")

KEY = "sk-echo-test-5d1c2b3a4f5e6d7c8b9a"
USER = "echouser"
PASSWORD = "pw-Echo-41z"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
FORMS = (KEY, PASSWORD, BASIC)


class Echo:
    """Answers every chat request with the Authorization header it came with, in every part of an answer."""

    def __init__(self) -> None:
        self.server: LoopbackServer | None = None

    def __call__(self, body: dict[str, Any], n: int) -> Reply:
        del n
        assert self.server is not None
        chats: list[Received] = [r for r in self.server.requests if r.is_chat]
        said = chats[-1].headers.get("authorization", "")  # -j 1: the request being answered
        if body.get("tools"):
            name = body["tools"][0]["function"]["name"]
            return Reply(
                content=f"calling with {said}",
                tool_calls=((name, {"path": said, "content": f"{said}\nline"}),),
                reasoning_content=f"the header was {said}",
            )
        return Reply(content=f"Your header: {said}. Also {said.split()[-1]}", reasoning_content=said)


def tsuka(*args: str | os.PathLike[str], key: str | None) -> tuple[int, bytes]:
    env: dict[str, str | None] = {name: None for name in os.environ if name.startswith(("OPENAI_", "TSUKA_"))}
    env["OPENAI_API_KEY"] = key
    result = CliRunner(env=env).invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout_bytes + result.stderr_bytes


def leaks(data: bytes) -> list[str]:
    return [form for form in FORMS if form.encode() in data]


@pytest.mark.parametrize("how", ["bearer", "basic"])
def test_no_artefact_of_a_run_holds_a_credential_the_server_echoed(tmp_path: Path, how: str) -> None:
    store, history = tmp_path / "models_profile.json", tmp_path / "h.sqlite"
    echo = Echo()
    outputs: dict[str, bytes] = {}
    with LoopbackServer(echo, models=("m1",)) as server:
        echo.server = server
        url = server.base_url
        if how == "basic":
            url = url.replace("http://", f"http://{USER}:{quote(PASSWORD, safe='')}@")
        key = KEY if how == "bearer" else None
        common = ("--profiles", store, "--history-db", history, "-e", "none", "-j", "1", "--retries", "0")
        for i in (1, 2):
            code, outputs[f"run {i}"] = tsuka(
                "run", "m1", "--base-url", url, *common, "--cache", "--junit", tmp_path / f"junit{i}.xml",
                "--json-file", tmp_path / f"result{i}.json", key=key,
            )  # fmt: skip
            assert code in (0, 1), outputs[f"run {i}"].decode()
        code, outputs["run --json"] = tsuka("run", "m1", "--base-url", url, *common, "--json", key=key)
        sent = {r.headers.get("authorization") for r in server.requests if r.is_chat}
    assert sent == {f"Bearer {KEY}" if how == "bearer" else f"Basic {BASIC}"}  # it was sent, and echoed back
    for args in (
        ("profiles",),
        ("runs", "--json"),
        ("show", "last"),
        ("show", "last", "m1@none"),
        ("compare", "1", "2", "--json"),
        ("compare", "1", "2", "--details"),
        ("report", "-o", tmp_path / "report.html"),
    ):
        _, outputs[" ".join(map(str, args))] = tsuka(*args, "--profiles", store, "--history-db", history, key=key)
    files = {str(p.relative_to(tmp_path)): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    assert {"models_profile.json", "h.sqlite", "report.html", "junit1.xml", "result1.json"} <= set(files)
    found = {name: leaks(data) for name, data in {**outputs, **files}.items() if leaks(data)}
    assert found == {}
    assert (b"Bearer ***" if how == "bearer" else b"Basic ***") in outputs["show last m1@none"]  # masked, not lost


def test_every_part_of_an_answer_is_masked_and_an_untouched_one_is_the_same_object() -> None:
    raw = {"function": {"arguments": f'{{"a": "{KEY}"}}'}}
    call = ToolCall("c-" + KEY, "t_" + KEY, {"a": [KEY, {KEY: 1}]}, raw=raw)
    response = ChatResponse(text=KEY, tool_calls=(call,), content=f"x {KEY}", reasoning=f"{KEY}!")
    masked = masked_response(response, [KEY])
    assert KEY not in repr(masked) + json.dumps(masked.tool_calls[0].raw) + masked.tool_calls[0].id
    assert masked.tool_calls[0].arguments == {"a": ["***", {"***": 1}]}
    clean = ChatResponse(text="fine", tool_calls=(ToolCall("c1", "t", {"a": 1}),))
    assert masked_response(clean, [KEY]) is clean
    deep: Any = KEY
    for _ in range(5000):
        deep = [deep]
    assert mask_json(deep, [KEY]) == "***"  # too deep to rebuild: replaced whole, never a crash


def test_option_values_that_are_secrets_by_name_or_by_looks_are_masked() -> None:
    options = {"bearer": "abc123456", "region": "sk-proj-abcdef", "api-key": "x", "stream": "off", "model_tag": "q4"}
    assert masked_options(options) == {
        "bearer": "***",
        "region": "***",
        "api-key": "***",
        "stream": "off",
        "model_tag": "q4",
    }
    assert looks_like_key("Bearer abc")
    assert looks_like_key("ghp_abc")
    assert not looks_like_key("auto")


def test_a_backend_names_its_secrets_from_every_source() -> None:
    config = BackendConfig(
        base_url=f"http://{USER}:{PASSWORD}@127.0.0.1:9/v1?api_key=q-secret-1",
        api_key=KEY,
        options={"token": "tok-12345", "stream": "off"},
    )
    found = set(Backend(config, None).secrets())  # type: ignore[arg-type]
    assert {KEY, PASSWORD, BASIC, "q-secret-1", "tok-12345"} <= found
    assert "off" not in found


def test_show_config_masks_a_key_like_option_value_whatever_its_name(tmp_path: Path) -> None:
    code, shown = tsuka(
        "run", "m1", "--base-url", "http://127.0.0.1:9/v1", "--option", "region=sk-live-998877",
        "--option", "bearer=abc-998877", "--show-config", key=None,
    )  # fmt: skip
    assert code == 0, shown.decode()
    assert b"998877" not in shown
    assert b'"region=***"' in shown
    assert b'"bearer=***"' in shown


def test_an_unknown_option_is_one_line_with_a_did_you_mean(tmp_path: Path) -> None:
    code, said = tsuka(
        "run", "m1", "--base-url", "http://127.0.0.1:9/v1", "--profiles", tmp_path / "p.json", "--option", "strem=off",
        key=None,
    )  # fmt: skip
    assert code == 2
    lines = said.decode().strip().splitlines()
    assert lines == ["tsuka: error: backend 'openai' has no option 'strem'; did you mean 'stream'? (it reads: stream)"]


TOKEN = "tk-user-token-7a8b9c0d1e2f3a4b"
ENCODINGS = {
    "percent": lambda s: quote(s, safe=""),
    "percent, every character": lambda s: "".join(f"%{b:02X}" for b in s.encode()),
    "base64": lambda s: base64.b64encode(s.encode()).decode(),
    "base64 inside a longer value": lambda s: base64.b64encode(b"xy:" + s.encode()).decode(),
    "swapped case": str.swapcase,
    "reversed": lambda s: s[::-1],
    "two thirds": lambda s: s[: -(-2 * len(s) // 3)],
    "json escapes": lambda s: "".join(f"\\u{ord(c):04x}" for c in s),
}


class EncodedEcho:
    """Answers with the secret part of the Authorization header it got, encoded, in text, reasoning and arguments."""

    def __init__(self, encode: Any) -> None:
        self.encode = encode
        self.server: LoopbackServer | None = None

    def __call__(self, body: dict[str, Any], n: int) -> Reply:
        del n
        assert self.server is not None
        said = [r for r in self.server.requests if r.is_chat][-1].headers.get("authorization", "").split()[-1]
        if said.startswith("tk-") or said.startswith("sk-"):
            secret = said
        else:
            secret = base64.b64decode(said).decode().rstrip(":")  # a Basic token: the user name it carries
        shown = self.encode(secret)
        if body.get("tools"):
            name = body["tools"][0]["function"]["name"]
            return Reply(content=f"calling {shown}", tool_calls=((name, f'{{"path": "{shown}"}}'),))
        return Reply(content=f"Your key: {shown}.", reasoning_content=f"header {shown}")


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("how", ["bearer", "user name"])
def test_a_credential_echoed_in_any_encoding_reaches_no_artefact(tmp_path: Path, encoding: str, how: str) -> None:
    encode = ENCODINGS[encoding]
    store, history = tmp_path / "models_profile.json", tmp_path / "h.sqlite"
    echo = EncodedEcho(encode)
    outputs: dict[str, bytes] = {}
    with LoopbackServer(echo, models=("m1",)) as server:
        echo.server = server
        url = server.base_url if how == "bearer" else server.base_url.replace("http://", f"http://{TOKEN}@")
        secret, key = (KEY, KEY) if how == "bearer" else (TOKEN, None)
        common = ("--profiles", store, "--history-db", history, "-e", "none", "-j", "1", "--retries", "0")
        code, outputs["run"] = tsuka(
            "run", "m1", "--base-url", url, *common, "--junit", tmp_path / "junit.xml",
            "--json-file", tmp_path / "result.json", key=key,
        )  # fmt: skip
        assert code in (0, 1), outputs["run"].decode()
        code, outputs["run --json"] = tsuka("run", "m1", "--base-url", url, *common, "--json", key=key)
    for args in (("show", "last", "m1@none"), ("report", "-o", tmp_path / "report.html"), ("runs", "--json")):
        _, outputs[" ".join(map(str, args))] = tsuka(*args, "--profiles", store, "--history-db", history, key=key)
    files = {str(p.relative_to(tmp_path)): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    shown = encode(secret).encode()
    found = [name for name, data in {**outputs, **files}.items() if shown in data or secret.encode() in data]
    assert found == []
    assert b"***" in outputs["show last m1@none"]  # masked, not lost


def test_show_config_and_models_keep_every_credential_out(tmp_path: Path) -> None:
    proxy = "http://proxyuser:proxy-pass-77aa66@127.0.0.1:9"
    code, shown = tsuka("run", "m1", "--base-url", "http://127.0.0.1:9/v1", "--proxy", proxy, "--show-config", key=None)
    assert code == 0, shown.decode()
    assert b"proxy-pass-77aa66" not in shown
    with LoopbackServer(models=("m1", f"leak-{KEY}", quote(KEY, safe=""))) as server:
        code, listed = tsuka("models", "--base-url", server.base_url, key=KEY)
    assert code == 0, listed.decode()
    assert b"m1" in listed
    assert KEY.encode() not in listed
    assert quote(KEY, safe="").encode() not in listed
    assert b"2 model name(s) the server lists hold a secret the run sends; left out" in listed
