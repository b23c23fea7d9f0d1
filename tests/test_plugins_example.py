"""The example plugins, installed for real: their check types and backend arrive through the entry point.

A session fixture builds one virtual environment in a temporary folder that sees
this interpreter's packages (tsuka and its dependencies) through a ``.pth``
file, and ``pip install``s both ``plugins_example/`` packages into it as wheels
(non-editable, built by their own build backend). Every ``tsuka`` command then
runs in that environment as a subprocess. Throwaway distributions (a plugin that
fails to import, one that claims a taken name, one whose check raises) are
written as wheels here and installed and uninstalled the same way.

Set ``TSUKA_REQUIRE_PLUGINS=1`` to turn "the packages cannot be built here" (no
network for the build backend) from a skip into a failure.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import site
import subprocess
import sys
import textwrap
import time
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import tsuka_core
from tsuka_core import (
    Answer,
    Backend,
    ChatRequest,
    ChatResponse,
    CheckType,
    Outcome,
    RegisterBackend,
    RegisterCheckType,
    Registry,
    RunOptions,
)
from tsuka_core.judge.checks import NoParams
from tsuka_core.plugins.manager import LoadedPlugin

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "plugins_example"
CHECKS_EXTRA = EXAMPLES / "tsuka-checks-extra"
OLLAMA = EXAMPLES / "tsuka-backend-ollama"
PLUGINS_MD = ROOT / "docs" / "plugins.md"
REQUIRE_ENV = "TSUKA_REQUIRE_PLUGINS"
EXTRA_TYPES = ["json_schema", "tool_args_schema", "tool_call_count", "word_count_range"]
PIP_TIMEOUT = 600
RUN_TIMEOUT = 180
_OFFLINE = re.compile(
    r"No matching distribution found|Could not find a version that satisfies|Failed to establish a new connection"
    r"|Network is unreachable|Temporary failure in name resolution|ProxyError|ConnectTimeout|Read timed out",
    re.IGNORECASE,
)


def _load_ollama_loopback() -> ModuleType:
    """The Ollama-speaking test server that lives in the backend plugin's own tests folder."""
    path = OLLAMA / "tests" / "ollama_loopback.py"
    spec = importlib.util.spec_from_file_location("ollama_loopback", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ollama_loopback", module)
    spec.loader.exec_module(module)
    return module


ollama_loopback = _load_ollama_loopback()
OllamaReply = ollama_loopback.OllamaReply
OllamaServer = ollama_loopback.OllamaServer


# --- the environment ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Venv:
    """A virtual environment with both example plugins installed, and how long building it took."""

    root: Path
    python: Path
    site_packages: Path
    seconds: float

    def run(
        self, *args: str, timeout: float = RUN_TIMEOUT, env: Mapping[str, str | None] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``python ARGS`` in this environment, from a neutral folder, with a clean tsuka environment.

        ``env`` sets (or, with ``None``, removes) variables on top of it.
        """
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("TSUKA_", "OPENAI_", "OLLAMA_"))}
        clean.update({"NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"})
        for key, value in (env or {}).items():
            if value is None:
                clean.pop(key, None)
            else:
                clean[key] = value
        return subprocess.run(
            [str(self.python), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout,
            env=clean,
            cwd=self.root,
            check=False,
        )

    def tsuka(self, *args: str | os.PathLike[str], **env: str | None) -> subprocess.CompletedProcess[str]:
        """Run the ``tsuka`` command in this environment."""
        return self.run("-c", "from tsuka_core.cli import main; main()", *map(str, args), env=env)

    def pip(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run pip for this environment (pip itself comes from the test interpreter's packages)."""
        return self.run("-m", "pip", "--disable-pip-version-check", "--no-input", *args, timeout=PIP_TIMEOUT)


def _create_venv(root: Path) -> Venv:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    found = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    site_packages = Path(found.stdout.strip())
    parents = [p for p in site.getsitepackages() if Path(p).is_dir()]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in parents)
    (site_packages / "_tsuka_test_parent.pth").write_text(lines, encoding="utf-8")
    return Venv(root, python, site_packages, 0.0)


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """One environment for the session, with both example packages installed as wheels."""
    started = time.perf_counter()
    env = _create_venv(tmp_path_factory.mktemp("plugins-venv") / "venv")
    done = env.pip("install", "--no-deps", str(CHECKS_EXTRA), str(OLLAMA))
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-3000:]
        if os.environ.get(REQUIRE_ENV) != "1":
            if "No module named pip" in output:
                pytest.skip("pip is not installed in the environment running the tests; cannot install the plugins")
            if _OFFLINE.search(output):
                reason = "the example plugins cannot be built here (no network for their build backend)"
                pytest.skip(f"{reason}: {output[-800:]}")
        pytest.fail(f"pip could not install the example plugins:\n{output}")
    return Venv(env.root, env.python, env.site_packages, time.perf_counter() - started)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(folder: Path, distribution: str, module: str, source: str, entry_point: str = "main") -> Path:
    """A wheel of one module with an entry point in the ``tsuka`` group, written without any build tool."""
    stem = distribution.replace("-", "_")
    info = f"{stem}-0.0.1.dist-info"
    files = {
        f"{module}.py": textwrap.dedent(source).encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.0.1\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tsuka-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[tsuka]\n{entry_point} = {module}\n".encode(),
    }
    record = [_record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = folder / f"{stem}-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
    return path


@contextmanager
def installed(venv: Venv, wheel: Path, distribution: str) -> Iterator[None]:
    """``wheel`` installed in ``venv`` for the duration of the block, then uninstalled."""
    done = venv.pip("install", "--no-deps", str(wheel))
    assert done.returncode == 0, done.stdout + done.stderr
    try:
        yield
    finally:
        removed = venv.pip("uninstall", "--yes", distribution)
        assert removed.returncode == 0, removed.stdout + removed.stderr


def table_rows(output: str) -> list[list[str]]:
    """The body rows of a table ``tsuka`` printed, each cell's wrapped lines joined by a space."""
    rows: list[list[str]] = []
    for line in output.splitlines():
        if "│" not in line:
            continue
        cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
        if rows and not cells[0]:
            rows[-1] = [f"{old} {new}".strip() for old, new in zip(rows[-1], cells, strict=False)]
        else:
            rows.append(cells)
    return rows


# --- installed for real, found through the entry point ------------------------------------------------------------


def test_the_packages_are_installed_as_wheels_not_from_the_source_tree(venv: Venv) -> None:
    done = venv.run(
        "-c",
        "import tsuka_checks_extra, tsuka_backend_ollama as o; print(tsuka_checks_extra.__file__); print(o.__file__)",
    )
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        assert Path(line).is_relative_to(venv.site_packages), line
    for dist in ("tsuka_checks_extra-0.1.0", "tsuka_backend_ollama-0.1.0"):
        direct = json.loads((venv.site_packages / f"{dist}.dist-info" / "direct_url.json").read_text(encoding="utf-8"))
        assert not direct.get("dir_info", {}).get("editable", False)


def test_tsuka_checks_lists_the_extra_types_with_their_distribution(venv: Venv) -> None:
    done = venv.tsuka("checks")
    assert done.returncode == 0, done.stderr
    rows = {row[0]: row for row in table_rows(done.stdout)}
    for name in EXTRA_TYPES:
        assert rows[name][1] == "tsuka-checks-extra 0.1.0"
        assert rows[name][2].startswith("Pass when")
    assert rows["word_count"][1].startswith("tsuka ")


def test_tsuka_suites_lists_the_extra_suite_and_it_validates(venv: Venv) -> None:
    done = venv.tsuka("suites")
    assert done.returncode == 0, done.stderr
    rows = {row[0]: row for row in table_rows(done.stdout)}
    assert rows["extra"][1:5] == ["tsuka-checks-extra", "1", "1", "2"]
    assert rows["default"][1:6] == ["tsuka", "2", "2", "3", "7c90f8e0"]
    done = venv.tsuka("validate", "extra")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"4 tests, suite hash {rows['extra'][5]}"


def test_tsuka_checks_show_prints_an_extra_types_parameters(venv: Venv) -> None:
    done = venv.tsuka("checks", "show", "tool_args_schema")
    assert done.returncode == 0, done.stderr
    assert "provided by tsuka-checks-extra 0.1.0" in done.stdout
    assert "strict (boolean, optional, default true)" in done.stdout


def test_tsuka_backends_lists_ollama_with_its_distribution(venv: Venv) -> None:
    done = venv.tsuka("backends")
    assert done.returncode == 0, done.stderr
    rows = {row[0]: row for row in table_rows(done.stdout)}
    assert rows["ollama"][1:5] == ["tsuka-backend-ollama 0.1.0", "OLLAMA_HOST", "num_ctx keep_alive", "applied"]


def test_tsuka_plugins_shows_both_distributions_and_what_they_registered(venv: Venv) -> None:
    done = venv.tsuka("plugins")
    assert done.returncode == 0, done.stderr
    rows = {row[0]: row for row in table_rows(done.stdout)}
    assert rows["tsuka-checks-extra"][1:3] == ["0.1.0", "checks_extra"]
    registered = sorted(rows["tsuka-checks-extra"][3].split(", "))
    extras = ["scorecard pass-rate", "suite extra", "tool environment shopping_cart"]
    assert registered == [*(f"check type {name}" for name in EXTRA_TYPES), *extras]
    assert rows["tsuka-backend-ollama"][1:] == ["0.1.0", "backend_ollama", "backend ollama"]


def test_the_plugins_own_tests_pass_against_the_installed_packages(venv: Venv) -> None:
    folders = [str(CHECKS_EXTRA / "tests"), str(OLLAMA / "tests")]
    done = venv.run(
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(EXAMPLES),
        "-c",
        os.devnull,
        *folders,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", done.stdout), done.stdout[-2000:]
    assert "skipped" not in done.stdout.splitlines()[-1]


# --- a whole run against a loopback Ollama server ------------------------------------------------------------------

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather of one city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "units": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}
SUITE: dict[str, dict[str, Any]] = {
    "10_river.json": {
        "name": "river_two_sentences",
        "category": "instruction",
        "prompt": "Describe a river in exactly two sentences, 8 to 20 words in all, without commas.",
        "checks": [
            {"type": "sentence_count", "value": 2, "weight": 2},
            {"type": "word_count_range", "min": 8, "max": 20},
            {"type": "not_contains", "value": ","},
        ],
    },
    "20_product.json": {
        "name": "product_json",
        "category": "json",
        "prompt": "Give a product with a name and a price as JSON.",
        "checks": [
            {"type": "json_valid"},
            {
                "type": "json_schema",
                "weight": 3,
                "value": {
                    "type": "object",
                    "required": ["name", "price"],
                    "properties": {"name": {"type": "string"}, "price": {"type": "number", "minimum": 0}},
                    "additionalProperties": False,
                },
            },
        ],
    },
    "30_weather.json": {
        "name": "weather_in_parallel",
        "category": "toolCalling",
        "tools": [WEATHER_TOOL],
        "steps": [
            {
                "prompt": "What is the weather in Rome and in Oslo? Ask for both at once.",
                "checks": [
                    {"type": "tool_call_count", "value": 2, "weight": 2},
                    {"type": "tool_args_schema", "calls": "all", "weight": 2},
                    {"type": "tool_called", "value": "get_weather"},
                ],
            },
            {"toolResult": "Rome: sunny, 24 C.", "checks": [{"type": "contains", "value": "sunny"}]},
        ],
    },
}
ANSWERS = {
    "river": OllamaReply.text("The river runs cold and clear. It reaches the sea at dawn.", thinking="Two short ones."),
    "product": OllamaReply.text('{"name": "pen", "price": 1.5}'),
    "weather": OllamaReply(
        tool_calls=(("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Oslo", "units": "c"}))
    ),
    "tool": OllamaReply.text("It is sunny in Rome."),
}


def write_suite(folder: Path, tests: Mapping[str, Mapping[str, Any]] = SUITE) -> Path:
    folder.mkdir()
    for file, test in tests.items():
        (folder / file).write_text(json.dumps(test, ensure_ascii=False, indent=2), encoding="utf-8")
    return folder


def answer(body: dict[str, Any], n: int) -> Any:
    """A model that answers every test of SUITE right; ``plain`` cannot think, as many Ollama models cannot."""
    del n
    if body["model"] == "plain" and body.get("think") not in (None, False):
        return OllamaReply.failure(400, '"plain" does not support thinking')
    last = body["messages"][-1]
    if last["role"] == "tool":
        return ANSWERS["tool"]
    return next(reply for key, reply in ANSWERS.items() if key in last["content"].lower())


@dataclass(frozen=True)
class Ran:
    """``tsuka run all -b ollama`` against the loopback server: what it printed, stored and sent."""

    done: subprocess.CompletedProcess[str]
    store: dict[str, Any]
    chats: list[dict[str, Any]]
    base_url: str
    suite: str
    """The suite's key in the store: its folder (a suite no plugin registers)."""

    @property
    def profiles(self) -> dict[str, Any]:
        """The profiles measured with the run's suite, stored beside the default suite's."""
        return dict(self.store["suiteProfiles"][self.suite])

    @property
    def recommendations(self) -> dict[str, Any]:
        """The recommendations of the run's suite."""
        return dict(self.store["suiteRecommendations"][self.suite])


@pytest.fixture(scope="module")
def ran(venv: Venv, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    folder = tmp_path_factory.mktemp("ollama-run")
    suite = write_suite(folder / "suite")
    store = folder / "models_profile.json"
    with OllamaServer(answer, models=["good:latest", "plain"], max_requests=200) as server:
        base_url = server.base_url
        args = ["run", "all", "-b", "ollama", "--base-url", base_url, "--suite", suite, "--profiles", store]
        done = venv.tsuka(*args, "-j", "3", "--json")
    assert server.errors == []
    stored = json.loads(store.read_text(encoding="utf-8")) if store.exists() else {}
    return Ran(done, stored, server.chats, base_url, str(Path(suite).resolve()))


def test_tsuka_run_against_ollama_measures_and_stores_every_model(ran: Ran) -> None:
    assert ran.done.returncode == 0, ran.done.stderr[-3000:]
    assert sorted(ran.profiles) == [
        "good:latest@low",
        "good:latest@medium",
        "good:latest@none",
        "good:latest@xhigh",
        "plain@none",
    ]
    for profile in ran.profiles.values():
        assert profile["tier"] == "large"
        assert profile["scores"] == {"instruction": 1, "json": 1, "toolCalling": 1}
        assert profile["provider"] == ran.base_url
        assert profile["backend"] == "ollama"
        assert profile["avgCompletionTokens"] == 7
    assert ran.recommendations == {"good:latest": "none", "plain": "none"}


def test_efforts_went_out_as_think_and_a_model_that_cannot_think_is_measured_once(ran: Ran) -> None:
    good = sorted({json.dumps(body.get("think")) for body in ran.chats if body["model"] == "good:latest"})
    assert good == ['"high"', '"low"', '"medium"', "false"]
    assert ran.profiles["plain@none"]["effortApplied"] is False
    assert ran.profiles["good:latest@low"]["effortApplied"] is True
    assert "plain: the server refused the effort parameter" in ran.done.stderr
    assert "does not support thinking" in ran.done.stderr


def test_every_extra_check_was_judged_on_the_answers(ran: Ran) -> None:
    checks = _report_checks(json.loads(ran.done.stdout))
    assert {c["type"] for c in checks} >= set(EXTRA_TYPES)
    assert all(c["status"] == "passed" for c in checks), [c for c in checks if c["status"] != "passed"]


def _report_checks(report: Any) -> list[dict[str, Any]]:
    """Every check object anywhere in ``tsuka run --json`` output."""
    found: list[dict[str, Any]] = []
    if isinstance(report, dict):
        if {"type", "status", "detail"} <= report.keys():
            found.append(report)
        for value in report.values():
            found += _report_checks(value)
    elif isinstance(report, list):
        for value in report:
            found += _report_checks(value)
    return found


def test_the_tool_round_trip_went_out_in_ollamas_shape(ran: Ran) -> None:
    second = next(body for body in ran.chats if body["messages"][-1]["role"] == "tool")
    assistant, tool = second["messages"][-2:]
    assert assistant["tool_calls"] == [{"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}]
    assert tool == {"role": "tool", "content": "Rome: sunny, 24 C.", "tool_name": "get_weather"}
    assert second["tools"] == [WEATHER_TOOL]
    assert second["stream"] is False


# --- failure modes ----------------------------------------------------------------------------------------------------

BROKEN = """
    raise RuntimeError("this plugin is broken on purpose")
"""
CLASH = '''
    import tsuka_core


    class Clash(tsuka_core.CheckType[tsuka_core.NoParams]):
        """Pass always; claims a name tsuka-checks-extra already has."""

        name = "json_schema"

        def evaluate(self, answer):
            return tsuka_core.Outcome.ok("")


    @tsuka_core.hookimpl
    def register_check_types(register):
        register(Clash)
'''
EXPLODES = '''
    import tsuka_core


    class Explodes(tsuka_core.CheckType[tsuka_core.NoParams]):
        """Raise on every answer (a plugin bug)."""

        name = "explodes"

        def evaluate(self, answer):
            raise ZeroDivisionError("a bug in the plugin")


    @tsuka_core.hookimpl
    def register_check_types(register):
        register(Explodes)
'''


def test_a_plugin_that_fails_to_import_stops_only_what_needs_it(venv: Venv, tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "tsuka-broken-plugin", "tsuka_broken_plugin", BROKEN)
    test = {**SUITE["10_river.json"], "checks": [{"type": "broken_check"}]}
    suite = write_suite(tmp_path / "suite", {"01_t.json": test})
    with installed(venv, wheel, "tsuka-broken-plugin"):
        listed = venv.tsuka("checks")
        plugins = venv.tsuka("plugins")
        needs_it = venv.tsuka("validate", suite)
        run_it = venv.tsuka("run", "m", "-b", "broken_backend", "--base-url", "http://127.0.0.1:9/v1")
        builtins_only = venv.tsuka("checks", TSUKA_LOAD_PLUGINS="")
    why = "plugin 'main' of distribution 'tsuka-broken-plugin' failed to import: RuntimeError: this plugin is broken"
    assert listed.returncode == 0, listed.stderr
    names = [row[0] for row in table_rows(listed.stdout)]
    assert "word_count" in names
    assert set(EXTRA_TYPES) <= set(names)
    assert len(listed.stderr.strip().splitlines()) == 1, listed.stderr
    assert listed.stderr.startswith(f"tsuka: warning: {why}")
    assert "TSUKA_LOAD_PLUGINS" in listed.stderr
    assert plugins.returncode == 0, plugins.stderr
    rows = {row[0]: row for row in table_rows(plugins.stdout)}
    assert rows["tsuka-broken-plugin"][3].startswith("FAILED to import: RuntimeError: this plugin is broken")
    assert rows["tsuka-checks-extra"][3].startswith("check type json_schema")
    assert needs_it.returncode == 2
    assert "unknown check type 'broken_check'" in needs_it.stderr
    assert f"a plugin that failed to import may provide it ({why}" in needs_it.stderr
    assert run_it.returncode == 2
    assert run_it.stdout == ""
    errors = [line for line in run_it.stderr.splitlines() if not line.startswith("tsuka: warning:")]
    assert len(errors) == 1, run_it.stderr
    assert errors[0].startswith("tsuka: error: unknown backend 'broken_backend'")
    assert why in errors[0]
    assert builtins_only.returncode == 0, builtins_only.stderr
    assert builtins_only.stderr == ""


def test_two_distributions_registering_one_name_is_an_error_naming_both(venv: Venv, tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "tsuka-schema-clash", "tsuka_schema_clash", CLASH)
    with installed(venv, wheel, "tsuka-schema-clash"):
        failed = venv.tsuka("checks")
        without = venv.tsuka("checks", TSUKA_LOAD_PLUGINS="tsuka-checks-extra")
    assert failed.returncode == 2
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1, failed.stderr
    assert "check type 'json_schema' is registered twice" in lines[0]
    assert "tsuka-checks-extra" in lines[0]
    assert "tsuka-schema-clash" in lines[0]
    assert without.returncode == 0, without.stderr
    assert "contains" in [row[0] for row in table_rows(without.stdout)]


def test_a_check_that_raises_is_errored_and_the_run_goes_on(venv: Venv, tmp_path: Path) -> None:
    tests = {
        **SUITE,
        "20_product.json": {
            **SUITE["20_product.json"],
            "checks": [*SUITE["20_product.json"]["checks"], {"type": "explodes"}],
        },
    }
    suite = write_suite(tmp_path / "suite", tests)
    store = tmp_path / "models_profile.json"
    wheel = build_wheel(tmp_path, "tsuka-explodes", "tsuka_explodes", EXPLODES)
    with installed(venv, wheel, "tsuka-explodes"), OllamaServer(answer, models=["good:latest"]) as server:
        done = venv.tsuka(
            "run",
            "good:latest",
            "-b",
            "ollama",
            "-e",
            "none",
            "--base-url",
            server.base_url,
            "--suite",
            suite,
            "--profiles",
            store,
            "--json",
        )
    assert done.returncode == 0, done.stderr[-3000:]
    checks = _report_checks(json.loads(done.stdout))
    exploded = [c for c in checks if c["type"] == "explodes"]
    assert [c["status"] for c in exploded] == ["errored"]
    assert "ZeroDivisionError: a bug in the plugin" in exploded[0]["detail"]
    assert all(c["status"] == "passed" for c in checks if c["type"] != "explodes")
    stored = json.loads(store.read_text(encoding="utf-8"))["suiteProfiles"][str(Path(suite).resolve())]
    profile = stored["good:latest@none"]
    assert profile["scores"] == {"instruction": 1, "json": 0.8, "toolCalling": 1}
    assert "! checks[2] explodes:" in done.stderr


# --- in-process, on a fresh registry ----------------------------------------------------------------------------------


class Raises(CheckType[NoParams]):
    """Raise on every answer."""

    name = "raises"

    def evaluate(self, answer: Answer) -> Outcome:
        raise KeyError("not there")


class Says(CheckType[NoParams]):
    """Pass on any answer."""

    name = "says"

    def evaluate(self, answer: Answer) -> Outcome:
        return Outcome.ok(answer.text)


class Canned(Backend):
    """Answer every request with the same text."""

    name = "canned"

    async def list_models(self) -> list[str]:
        return ["canned-1"]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text="fine", completion_tokens=1, duration=0.01)


class Plugin:
    @tsuka_core.hookimpl
    def register_check_types(self, register: RegisterCheckType) -> None:
        register(Raises)
        register(Says)

    @tsuka_core.hookimpl
    def register_backends(self, register: RegisterBackend) -> None:
        register(Canned)


class Quiet:
    def level_started(self, model: str, effort: str, applied: bool, total: int) -> None:
        """Nothing to show."""

    def test_done(self, model: str, effort: str, result: Any) -> None:
        """Nothing to show."""

    def note(self, message: str) -> None:
        """Nothing to show."""


def test_in_process_a_raising_check_is_errored_and_every_test_still_runs(tmp_path: Path) -> None:
    import asyncio

    registry = Registry.from_plugins([LoadedPlugin("main", "tsuka-test-raises", "1.0", Plugin())])
    tests = {
        f"{i}_{category}.json": {
            "name": category,
            "category": category,
            "prompt": "Say fine.",
            "checks": [{"type": "raises"}, {"type": "says", "weight": 3}],
        }
        for i, category in enumerate(tsuka_core.CATEGORIES)
    }
    suite = tsuka_core.load_suite(write_suite(tmp_path / "suite", tests), registry)
    options = RunOptions(backend="canned", efforts=("none",), store_path=tmp_path / "store.json")
    report = asyncio.run(tsuka_core.run_benchmark(options, suite, registry, Quiet()))
    assert report.ok
    (level,) = report.sweeps[0].levels
    assert [t.status for t in level.tests] == ["ok", "ok", "ok"]
    outcomes = [c.outcome for t in level.tests for s in t.steps for c in s.checks]
    assert [o.status for o in outcomes] == ["errored", "passed"] * 3
    assert outcomes[0].detail == "raises raised KeyError: 'not there'"
    assert report.profiles["canned-1@none"]["scores"] == {"instruction": 0.75, "json": 0.75, "toolCalling": 0.75}


# --- docs/plugins.md shows the code that is tested --------------------------------------------------------------------

_FENCE = re.compile(r"^```([\w+-]*)[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_REGION = re.compile(r"^[ \t]*# docs:start ([\w-]+)\n(.*?)^[ \t]*# docs:end \1[ \t]*$", re.DOTALL | re.MULTILINE)


def _regions() -> dict[str, str]:
    """Every ``# docs:start NAME`` … ``# docs:end NAME`` region of the example packages, dedented."""
    found: dict[str, str] = {}
    for path in sorted([*EXAMPLES.rglob("*.py"), *EXAMPLES.rglob("pyproject.toml")]):
        for name, body in _REGION.findall(path.read_text(encoding="utf-8")):
            key = f"{path.relative_to(EXAMPLES).as_posix()}#{name}"
            found[key] = textwrap.dedent(body).strip("\n")
    return found


def _doc_blocks(*languages: str) -> list[tuple[str, str]]:
    text = PLUGINS_MD.read_text(encoding="utf-8")
    return [(lang, body.strip("\n")) for lang, body in _FENCE.findall(text) if lang in languages]


def test_every_code_block_of_the_plugin_guide_is_a_region_of_the_examples() -> None:
    regions = _regions()
    blocks = _doc_blocks("python", "toml")
    assert len(blocks) >= 6
    strays = [body for _lang, body in blocks if body not in regions.values()]
    assert strays == [], "these blocks of docs/plugins.md are not marked regions of plugins_example/ (copy them in)"


def test_every_marked_region_is_shown_in_the_guide() -> None:
    shown = {body for _lang, body in _doc_blocks("python", "toml")}
    unused = [key for key, body in _regions().items() if body not in shown]
    assert unused == [], "marked regions that docs/plugins.md does not show"


def test_the_guides_test_files_validate_with_the_plugins_installed(venv: Venv, tmp_path: Path) -> None:
    tests = [json.loads(body) for _lang, body in _doc_blocks("json")]
    tests = [t for t in tests if isinstance(t, dict) and "category" in t]
    assert tests, "docs/plugins.md shows at least one test file"
    folder = write_suite(tmp_path / "suite", {f"{i:02d}_doc.json": t for i, t in enumerate(tests)})
    done = venv.tsuka("validate", folder)
    assert done.returncode == 0, done.stderr
