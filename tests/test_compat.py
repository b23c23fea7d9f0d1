"""Names public in 0.1 still resolve, each with a DeprecationWarning naming what to use instead."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import tsuka_core
from tsuka_core.deprecated import DEPRECATED_IN, OLD_NAMES, REMOVED_IN

# What ``tsuka_core`` exported in 0.1.0 (its __init__ at commit e7fe248), besides the names still public.
EXPORTED_IN_0_1 = {
    *("BENCHMARK_VERSION", "Category", "Check", "CheckResult", "GateResult", "HiddenTool"),
    *("LevelResult", "LoadedPlugin", "ModelSweep"),
    *("Registered", "Status", "Step", "StepResult", "StoreData", "Test", "TestResult", "Tier", "UsageError"),
    *("avg_completion_tokens", "category_score", "default_store_path", "default_suite_path", "describe"),
    *("discover", "dumps_store", "hookspec", "profile_from_level", "profile_key", "profile_status", "recommend"),
    *("required_tier", "round_half_up", "run_check", "run_test", "score_checks", "sweep_models", "test_score"),
    *("tier_for", "tier_rank", "tokens_per_second"),
}
PUBLIC_AGAIN = {"ExtractedJson", "JsonPath", "MISSING", "SweepObserver", "first_call_argument", "json_at_path"}
PUBLIC_AGAIN |= {"json_equal", "json_type_name", "ArgParams", "PathParams", "RegexParams", "Pattern", "PatternTimeout"}


def test_every_0_1_name_is_public_or_a_deprecated_alias() -> None:
    assert set(tsuka_core.__all__) >= PUBLIC_AGAIN
    assert set(OLD_NAMES) == EXPORTED_IN_0_1
    assert not set(OLD_NAMES) & set(tsuka_core.__all__)


@pytest.mark.parametrize("name", sorted(EXPORTED_IN_0_1))
def test_an_old_name_resolves_with_a_warning_naming_the_replacement(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"^tsuka_core\.{name} is deprecated") as caught:
        value = getattr(tsuka_core, name)
    assert value is not None
    message = str(caught[0].message)
    assert message.startswith(
        f"tsuka_core.{name} is deprecated since tsuka {DEPRECATED_IN} and removed in {REMOVED_IN}; "
    )
    assert "use " in message or "internal now (tsuka_core." in message
    assert caught[0].filename == __file__


def test_old_names_are_not_in_dir_or_all() -> None:
    assert "JsonPath" in dir(tsuka_core)
    assert "test_score" not in dir(tsuka_core)
    assert "test_score" not in tsuka_core.__all__


def test_a_name_that_was_never_public_is_still_an_attribute_error() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
            _ = tsuka_core.no_such_name


def test_a_0_1_check_plugin_imports_and_judges_as_before() -> None:
    """The shape of a 0.1 plugin: names imported from tsuka_core, including ones that are not public any more."""
    source = """
import warnings
warnings.simplefilter("error")
warnings.filterwarnings("default", category=DeprecationWarning)
from tsuka_core import Answer, CheckType, JsonPath, Outcome, PathParams, json_at_path, run_check

class HasPath(CheckType[PathParams]):
    name = "has_path"
    params_model = PathParams

    def evaluate(self, answer):
        value, problem = json_at_path(answer, self.params.json_path)
        return problem or Outcome.ok(repr(value))

check = HasPath(PathParams.model_validate({"path": "a.b"}))
print(run_check(check, Answer('{"a": {"b": 3}}')).detail, JsonPath("a").text)
"""
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "3 a"
    assert "tsuka_core.PathParams" not in done.stderr  # public again in 0.2: the regex and path helpers
    assert "tsuka_core.run_check is deprecated" in done.stderr
