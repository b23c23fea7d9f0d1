"""The plugin contract: one test per hook, duplicate and misspelled hooks, entry-point discovery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import tsuka_core
from tsuka_checks_builtin.plugin import CHECK_TYPES
from tsuka_core import (
    Answer,
    CheckType,
    Outcome,
    PluginError,
    RegisterBackend,
    RegisterCheckType,
    RegisterSuite,
    Registry,
)
from tsuka_core.backends.base import Backend, BackendConfig, ChatRequest, ChatResponse
from tsuka_core.judge.checks import NoParams, run_check
from tsuka_core.plugins import hookspecs
from tsuka_core.plugins.manager import LOAD_ENV, FailedPlugin, LoadedPlugin, discover


class SentenceCount(CheckType[NoParams]):
    """Pass when the answer has at least one sentence."""

    name = "sentence_count"

    def evaluate(self, answer: Answer) -> Outcome:
        return Outcome.check(answer.text.count(".") > 0, f"{answer.text.count('.')} sentences")


class EchoBackend(Backend):
    """Answer every request with its last message."""

    name = "echo"

    async def list_models(self) -> list[str]:
        return ["echo-1"]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text=str(request.messages[-1]["content"]))


class CheckPlugin:
    @tsuka_core.hookimpl
    def register_check_types(self, register: RegisterCheckType) -> None:
        register(SentenceCount)


class BackendPlugin:
    @tsuka_core.hookimpl
    def register_backends(self, register: RegisterBackend) -> None:
        register(EchoBackend)


class SuitePlugin:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @tsuka_core.hookimpl
    def register_suites(self, register: RegisterSuite) -> None:
        register("mine", self.folder)


class CountScorecard(tsuka_core.Scorecard):
    """The share of tests passed, per suite, and their mean."""

    name = "count"
    title = "Count"

    def knows(self, suite: str) -> bool:
        return suite == "mine"

    def figures(self, suite: str, tests: Any) -> dict[str, tsuka_core.Figure]:
        passed = sum(1 for t in tests if t.score >= 1)
        return {"passed": tsuka_core.Figure(value=passed / len(tests), count=len(tests))}

    def rows(self, measured: Any) -> list[tsuka_core.ScoreRow]:
        return [tsuka_core.ScoreRow(suite, figures.get("passed")) for suite, figures in measured.items()]


class ScorecardPlugin:
    @tsuka_core.hookimpl
    def register_scorecards(self, register: Any) -> None:
        register(CountScorecard)


class EnvironmentPlugin:
    @tsuka_core.hookimpl
    def register_tool_environments(self, register: Any) -> None:
        import counter_env

        register(counter_env.Counter)


def loaded(plugin: object, distribution: str, entry_point: str = "main") -> LoadedPlugin:
    return LoadedPlugin(entry_point, distribution, "1.0", plugin)


# --- one test per hook ------------------------------------------------------------------------


def test_hook_register_check_types() -> None:
    plugin = loaded(CheckPlugin(), "tsuka-sentences")
    registry = Registry.from_plugins([plugin])
    assert registry.check_type("sentence_count") is SentenceCount
    assert registry.check_types["sentence_count"].distribution == "tsuka-sentences"
    assert registry.registered_by(plugin) == ["check type sentence_count"]
    assert registry.backends == {}
    check = SentenceCount(NoParams())
    assert run_check(check, Answer("One. Two.")) == Outcome("passed", "2 sentences")


def test_hook_register_backends() -> None:
    plugin = loaded(BackendPlugin(), "tsuka-echo")
    registry = Registry.from_plugins([plugin])
    assert registry.backend("echo") is EchoBackend
    assert registry.backends["echo"].distribution == "tsuka-echo"
    assert registry.registered_by(plugin) == ["backend echo"]
    assert registry.check_types == {}


def test_hook_register_suites(tmp_path: Path) -> None:
    (tmp_path / "10_t.json").write_text('{"name": "t", "category": "json", "prompt": "p", "checks": []}')
    plugin = loaded(SuitePlugin(tmp_path), "tsuka-mine")
    registry = Registry.from_plugins([plugin])
    assert registry.suites["mine"].path == tmp_path
    assert registry.suites["mine"].distribution == "tsuka-mine"
    assert registry.registered_by(plugin) == ["suite mine"]
    assert registry.check_types == {}
    assert registry.backends == {}


def test_hook_register_scorecards(tmp_path: Path) -> None:
    test = '{"name": "t", "category": "json", "prompt": "p", "checks": [{"type": "sentence_count"}]}'
    (tmp_path / "10_t.json").write_text(test)
    plugin = loaded(ScorecardPlugin(), "tsuka-count")
    plugins = [plugin, loaded(SuitePlugin(tmp_path), "tsuka-mine"), loaded(CheckPlugin(), "tsuka-sentences")]
    registry = Registry.from_plugins(plugins)
    assert registry.scorecards["count"].cls is CountScorecard
    assert registry.registered_by(plugin) == ["scorecard count"]
    found = registry.scorecard_of("mine")
    assert isinstance(found, CountScorecard)
    assert registry.scorecard_of("default") is None
    assert tsuka_core.load_suite("mine", registry).scorecard is not None


def test_hook_register_tool_environments(tmp_path: Path) -> None:
    import counter_env

    plugin = loaded(EnvironmentPlugin(), "tsuka-counter")
    from tsuka_checks_builtin import plugin as builtin

    registry = Registry.from_plugins([plugin, loaded(builtin, "tsuka", "builtin")])
    assert registry.environment("counter") is counter_env.Counter
    assert registry.registered_by(plugin) == ["tool environment counter"]
    test = {"name": "t", "category": "toolCalling", "environment": {"type": "counter", "config": {"start": 2}},
            "turns": [{"prompt": "p", "checks": [{"type": "state_matches"}]}]}  # fmt: skip
    (tmp_path / "10_t.json").write_text(json.dumps(test))
    loaded_test = tsuka_core.load_suite(tmp_path, registry).tests[0]
    assert loaded_test.environment is not None
    assert loaded_test.environment.config == {"start": 2, "broken": False}
    twice = Registry.from_plugins
    with pytest.raises(PluginError, match="tool environment 'counter' is registered twice"):
        twice([plugin, loaded(EnvironmentPlugin(), "tsuka-other")])


def test_every_hookspec_has_a_test() -> None:
    specs = sorted(name for name, obj in vars(hookspecs).items() if hasattr(obj, f"{hookspecs.PROJECT}_spec"))
    assert specs == ["register_backends", "register_check_types", "register_scorecards", "register_suites",
                     "register_tool_environments"]  # fmt: skip
    missing = [name for name in specs if not callable(globals().get(f"test_hook_{name}"))]
    assert missing == [], f"write a test_hook_<name> test for: {missing}"


def test_a_registered_backend_can_answer() -> None:
    import asyncio

    registry = Registry.from_plugins([loaded(BackendPlugin(), "tsuka-echo")])
    backend_type = registry.backend("echo")
    assert backend_type is not None

    async def ask() -> str:
        async with httpx.AsyncClient() as client:
            backend = backend_type(BackendConfig(), client)
            answer = await backend.complete(ChatRequest("echo-1", [{"role": "user", "content": "ping"}]))
            return answer.text

    assert asyncio.run(ask()) == "ping"


# --- what goes wrong --------------------------------------------------------------------------


def test_a_name_registered_twice_names_both_distributions() -> None:
    with pytest.raises(PluginError) as caught:
        Registry.from_plugins([loaded(CheckPlugin(), "tsuka-first"), loaded(CheckPlugin(), "tsuka-second")])
    message = str(caught.value)
    assert "'sentence_count'" in message
    assert "tsuka-first" in message
    assert "tsuka-second" in message


def test_a_backend_registered_twice_names_both_distributions() -> None:
    with pytest.raises(PluginError, match=r"backend 'echo'.*tsuka-one.*tsuka-two"):
        Registry.from_plugins([loaded(BackendPlugin(), "tsuka-one"), loaded(BackendPlugin(), "tsuka-two")])


def test_a_plugin_claiming_a_builtin_name_is_refused() -> None:
    class Shadow:
        @tsuka_core.hookimpl
        def register_check_types(self, register: RegisterCheckType) -> None:
            register(type("Shadow", (SentenceCount,), {"name": "word_count"}))

    builtins = [p for p in discover(env="") if p.distribution == "tsuka"]
    with pytest.raises(PluginError, match=r"'word_count'.*tsuka .*tsuka-shadow"):
        Registry.from_plugins([*builtins, loaded(Shadow(), "tsuka-shadow")])


def test_a_misspelled_hook_fails_loudly() -> None:
    class Misspelled:
        @tsuka_core.hookimpl
        def register_check_type(self, register: RegisterCheckType) -> None:
            register(SentenceCount)

    with pytest.raises(PluginError, match="register_check_type"):
        Registry.from_plugins([loaded(Misspelled(), "tsuka-typo")])


def test_a_misspelled_hook_error_names_the_distribution() -> None:
    class Misspelled:
        @tsuka_core.hookimpl
        def register_backend(self, register: RegisterBackend) -> None:
            register(EchoBackend)

    with pytest.raises(PluginError) as caught:
        Registry.from_plugins([loaded(Misspelled(), "tsuka-typo")])
    assert "tsuka-typo" in str(caught.value)


def test_a_hook_with_a_wrong_signature_is_refused() -> None:
    class WrongArgs:
        @tsuka_core.hookimpl
        def register_check_types(self, register: RegisterCheckType, extra: Any) -> None:
            register(SentenceCount)

    with pytest.raises(PluginError, match="tsuka-wrong:main"):
        Registry.from_plugins([loaded(WrongArgs(), "tsuka-wrong")])


def test_a_class_without_a_name_is_refused() -> None:
    class Nameless:
        @tsuka_core.hookimpl
        def register_check_types(self, register: RegisterCheckType) -> None:
            register(type("Nameless", (CheckType,), {}))

    with pytest.raises(PluginError, match=r"tsuka-nameless:main registered .* without a name"):
        Registry.from_plugins([loaded(Nameless(), "tsuka-nameless")])


# --- discovery through the entry-point group --------------------------------------------------


def test_builtins_come_through_the_entry_point_group() -> None:
    plugins = discover(env="")
    assert [(p.distribution, p.entry_point) for p in plugins] == [("tsuka", "builtin")]
    registry = Registry.from_plugins(plugins)
    assert len(registry.check_types) == len(CHECK_TYPES)
    assert {entry.distribution for entry in registry.check_types.values()} == {"tsuka"}


FAKE_MODULE = """
    import tsuka_core
    from tsuka_core import Answer, CheckType, Outcome
    from tsuka_core.judge.checks import NoParams


    class Shout(CheckType[NoParams]):
        '''Pass when the answer is in capitals.'''

        name = "shout"

        def evaluate(self, answer: Answer) -> Outcome:
            return Outcome.check(answer.text.isupper(), answer.text)


    @tsuka_core.hookimpl
    def register_check_types(register):
        register(Shout)
"""


@pytest.fixture
def fake_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A distribution ``tsuka-fake`` on ``sys.path``, with one plugin in the ``tsuka`` group."""
    (tmp_path / "tsuka_fake_plugin.py").write_text(textwrap.dedent(FAKE_MODULE))
    (tmp_path / "tsuka_broken_plugin.py").write_text("raise RuntimeError('cannot start')\n")
    info = tmp_path / "tsuka_fake-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tsuka-fake\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[tsuka]\nfake = tsuka_fake_plugin\n")
    broken = tmp_path / "tsuka_broken-0.2.dist-info"
    broken.mkdir()
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: tsuka-broken\nVersion: 0.2\n")
    (broken / "entry_points.txt").write_text("[tsuka]\nbroken = tsuka_broken_plugin\n")
    monkeypatch.syspath_prepend(tmp_path)
    monkeypatch.delenv(LOAD_ENV, raising=False)
    yield "tsuka-fake"
    for module in ("tsuka_fake_plugin", "tsuka_broken_plugin"):
        sys.modules.pop(module, None)


def test_named_plugins_load_besides_the_builtins(fake_distribution: str) -> None:
    plugins = discover(env=fake_distribution)
    assert sorted(p.distribution for p in plugins) == ["tsuka", "tsuka-fake"]
    registry = Registry.from_plugins(plugins)
    assert registry.check_types["shout"].distribution == "tsuka-fake"
    assert registry.check_types["shout"].plugin.version == "0.1"


def test_empty_load_variable_loads_only_the_builtins(fake_distribution: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOAD_ENV, "")
    plugins = discover()
    assert [p.distribution for p in plugins] == ["tsuka"]
    assert "shout" not in Registry.from_plugins(plugins).check_types


def test_a_plugin_that_fails_to_import_is_an_error_naming_it(fake_distribution: str) -> None:
    with pytest.raises(PluginError, match=r"'broken' of distribution 'tsuka-broken'.*RuntimeError: cannot start"):
        discover()
    with pytest.raises(PluginError, match="tsuka-broken"):
        discover(env="tsuka-broken")


def test_naming_a_distribution_without_a_plugin_is_an_error(fake_distribution: str) -> None:
    with pytest.raises(PluginError, match="tsuka-missing"):
        discover(env="tsuka-fake, tsuka-missing")


def test_a_distribution_on_the_path_twice_loads_once_the_first(
    fake_distribution: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As importlib.metadata: of two copies of one distribution, the one first on sys.path counts."""
    later = tmp_path_factory.mktemp("later")
    info = later / "tsuka_fake-0.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tsuka-fake\nVersion: 0.9\n")
    (info / "entry_points.txt").write_text("[console_scripts]\nx = y:z\n\n[tsuka]\nfake = tsuka_fake_plugin\n")
    monkeypatch.syspath_prepend(later)  # now before the fixture's copy, version 0.1
    plugins = [p for p in discover(env=fake_distribution) if p.distribution == "tsuka-fake"]
    assert [(p.entry_point, p.version) for p in plugins] == [("fake", "0.9")]


def test_groups_that_only_look_like_tsuka_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = tmp_path / "lookalike-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lookalike\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[tsuka.extra]\na = nowhere_at_all\n\n[tsuka_x]\nb = nowhere\n")
    monkeypatch.syspath_prepend(tmp_path)
    with pytest.raises(PluginError, match="names lookalike, which provide no tsuka plugin"):
        discover(env="lookalike")


def test_a_plugin_that_hangs_at_import_is_named_while_it_is_waited_for(tmp_path: Path) -> None:
    """A plugin whose import takes 8 s: after about 3 s one line on stderr names it; the command then goes on."""
    (tmp_path / "tsuka_sleepy_plugin.py").write_text("import time\ntime.sleep(8)\n")
    info = tmp_path / "tsuka_sleepy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tsuka-sleepy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[tsuka]\nsleepy = tsuka_sleepy_plugin\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), str(tmp_path)])
    started = time.monotonic()
    command = [sys.executable, "-m", "tsuka_core", "checks"]
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        said_after = time.monotonic() - started
        still_running = proc.poll() is None
        out, rest = proc.communicate(timeout=60)
    assert "plugin 'sleepy' (module tsuka_sleepy_plugin, distribution 'tsuka-sleepy') is still importing" in line
    assert LOAD_ENV in line
    assert 2.5 < said_after < 7.5, said_after
    assert still_running
    assert proc.returncode == 0, rest
    assert "regex" in out


def test_with_a_failed_list_a_broken_plugin_is_collected_and_the_others_load(
    fake_distribution: str, tmp_path: Path
) -> None:
    failed: list[FailedPlugin] = []
    plugins = discover(failed=failed)
    assert sorted(p.distribution for p in plugins) == ["tsuka", "tsuka-fake"]
    assert [(f.distribution, f.entry_point, f.error) for f in failed] == [
        ("tsuka-broken", "broken", "RuntimeError: cannot start")
    ]
    registry = Registry.from_plugins(plugins, failed)
    assert "shout" in registry.check_types
    assert registry.missing_hint() == (
        "; a plugin that failed to import may provide it "
        "(plugin 'broken' of distribution 'tsuka-broken' failed to import: RuntimeError: cannot start)"
    )
    test = '{"name": "t", "category": "instruction", "prompt": "Hi.", "checks": [{"type": "whisper"}]}'
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "01_t.json").write_text(test, encoding="utf-8")
    with pytest.raises(tsuka_core.SuiteError, match=r"unknown check type 'whisper'.*may provide it \(plugin 'broken'"):
        tsuka_core.load_suite(tmp_path / "suite", registry)


def test_a_backend_that_declares_no_options_takes_none() -> None:
    from tsuka_core.backends.base import check_options

    class Undeclared(tsuka_core.Backend):
        name = "undeclared"

    check_options(Undeclared, {})
    with pytest.raises(tsuka_core.BackendError, match=r"declares no options .* no --option \(given: 'strem'\)"):
        check_options(Undeclared, {"strem": "off"})


def test_a_misspelt_role_is_a_note_naming_the_roles_and_roles_of_another_kind_are_refused() -> None:
    """Roles are a checked vocabulary: an unknown name registers with a warning kept as a note, a str is refused."""

    class Misspelt:
        @tsuka_core.hookimpl
        def register_check_types(self, register: RegisterCheckType) -> None:
            register(type("Calls", (SentenceCount,), {"name": "calls_x", "roles": frozenset({"expect_call"})}))

    registry = Registry.from_plugins([loaded(Misspelt(), "tsuka-roles")])
    assert "calls_x" in registry.check_types  # it still registers
    (note,) = [n for n in registry.notes if "unknown role" in n]
    assert "'expect_call' (did you mean 'expects_call'?)" in note
    assert "the roles are: expects_call, forbids_call, counts_calls, judges_arguments, names_tool" in note

    class AString:
        @tsuka_core.hookimpl
        def register_check_types(self, register: RegisterCheckType) -> None:
            register(type("Calls", (SentenceCount,), {"name": "calls_y", "roles": "expects_call"}))

    with pytest.raises(PluginError, match=r"roles 'expects_call': roles are a frozenset of names"):
        Registry.from_plugins([loaded(AString(), "tsuka-roles")])
