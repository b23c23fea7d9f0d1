"""The test kit for plugin authors: judge answers, run test files on scripted answers, check a backend's contract.

- :func:`run_check` judges one answer with one check type and its parameters;
  :func:`judge` evaluates an already built check; :func:`registry_of` builds a
  registry from plugin modules without installing them.
- :func:`run_test_file` and :func:`run_suite` run test files against scripted
  answers (:class:`ScriptedBackend`; :func:`tool_call` scripts a tool call) and
  return a :class:`TestVerdict` per test (its :class:`CheckVerdict` per check).
- :func:`check_backend` and :func:`assert_conforms` drive a backend class
  against a :class:`ScriptedServer` on 127.0.0.1 and check the rules of
  docs/contract.md; a :class:`BackendKit` says how the backend's server speaks.
"""

from tsuka_core.testing.checks import judge, registry_of, run_check
from tsuka_core.testing.conformance import (
    CASES,
    BackendKit,
    CaseResult,
    WireAnswer,
    assert_conforms,
    check_backend,
)
from tsuka_core.testing.loopback import Reply, ScriptedServer, Seen
from tsuka_core.testing.scripted import ScriptedAnswer, ScriptedBackend, run_suite, run_test_file, tool_call
from tsuka_core.testing.verdicts import CheckVerdict, TestVerdict

__all__ = [
    "CASES",
    "BackendKit",
    "CaseResult",
    "CheckVerdict",
    "Reply",
    "ScriptedAnswer",
    "ScriptedBackend",
    "ScriptedServer",
    "Seen",
    "TestVerdict",
    "WireAnswer",
    "assert_conforms",
    "check_backend",
    "judge",
    "registry_of",
    "run_check",
    "run_suite",
    "run_test_file",
    "tool_call",
]
