"""What a run tells CI: its JUnit XML, a test case per model@effort and test run.

In the XML, a wrong answer (a failed check, a step never sent because the
chain broke) is a ``<failure>``; a request that failed for good (the server,
the network, a backend's own bug) or a check that could not be evaluated is an
``<error>``, so CI shows the model's mistakes apart from the tooling's. A test
run several times (``--repeats``) is one test case per run, named
``test (run K of N)``, so a flaky test shows which of its runs failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tsuka_core.engine.record import record_of
from tsuka_core.engine.results import CheckResult, LevelResult, TestResult

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

__all__ = ["junit_xml", "write_junit"]

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold shown as ``\\xNN`` (model output may hold any)."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _checks(result: TestResult) -> list[tuple[int, CheckResult]]:
    return [(step.index, check) for step in result.steps for check in step.checks]


def _lines(checks: Iterable[tuple[int, CheckResult]]) -> str:
    return "\n".join(f"{c.location} {c.type} ({c.outcome.status}): {c.outcome.detail}" for _, c in checks)


def _answers(result: TestResult) -> str:
    parts: list[str] = []
    for step in result.steps:
        if step.response is None:
            continue
        calls = "".join(f"\n  tool call {c.name}({c.arguments})" for c in step.response.tool_calls)
        parts.append(f"step {step.index} answer: {step.response.text}{calls}")
    return "\n".join(parts)


def _case(parent: ET.Element, level: LevelResult, result: TestResult) -> str:
    """Add one test case (one run of a test); return ``passed``, ``failure`` or ``error``."""
    import xml.etree.ElementTree as ET

    key = f"{level.model}@{level.effort}"
    seconds = sum(result.durations)
    case = ET.SubElement(
        parent, "testcase", {"classname": key, "name": _xml_text(level.run_label(result)), "time": f"{seconds:.3f}"}
    )
    checks = _checks(result)
    errored = [(i, c) for i, c in checks if c.outcome.status == "errored"]
    failed = [(i, c) for i, c in checks if c.outcome.status == "failed"]
    if result.status == "error":
        node = ET.SubElement(case, "error", {"type": "RequestError", "message": _xml_text(result.error or "")})
        kind = "error"
    elif errored:
        message = f"{len(errored)} check(s) could not be evaluated"
        node = ET.SubElement(case, "error", {"type": "CheckErrored", "message": message})
        node.text = _xml_text(_lines([*errored, *failed]))
        kind = "error"
    elif failed:
        message = f"score {result.score:g}: {len(failed)} of {len(checks)} check(s) failed"
        node = ET.SubElement(case, "failure", {"type": "WrongAnswer", "message": message})
        node.text = _xml_text(_lines(failed))
        kind = "failure"
    else:
        return "passed"
    answers = _answers(result)
    if answers:
        ET.SubElement(case, "system-out").text = _xml_text(answers)
    return kind


def _suite(parent: ET.Element, level: LevelResult) -> tuple[int, int, int, float]:
    import xml.etree.ElementTree as ET

    key = f"{level.model}@{level.effort}"
    suite = ET.SubElement(parent, "testsuite", {"name": _xml_text(key)})
    properties = ET.SubElement(suite, "properties")
    record = record_of(level)
    facts = {
        "tier": str(record.tier),
        "effortApplied": str(record.effort_applied).lower(),
        "testsHash": str(record.tests_hash),
        "tokensPerSecond": f"{record.tokens_per_second or 0:g}",
        "avgCompletionTokens": str(record.avg_completion_tokens or 0),
        **{f"score.{c}": f"{s:g}" for c, s in (record.scores or {}).items()},
    }
    if record.repeats is not None and record.repeats > 1:
        facts["repeats"] = str(record.repeats)
    for name, value in facts.items():
        ET.SubElement(properties, "property", {"name": name, "value": _xml_text(value)})
    kinds = [_case(suite, level, result) for result in level.tests]
    seconds = sum(sum(t.durations) for t in level.tests)
    counts = (len(kinds), kinds.count("failure"), kinds.count("error"))
    suite.attrib.update(
        {
            "tests": str(counts[0]),
            "failures": str(counts[1]),
            "errors": str(counts[2]),
            "skipped": "0",
            "time": f"{seconds:.3f}",
        }
    )
    return (*counts, seconds)


def junit_xml(levels: Sequence[LevelResult], error: str | None = None) -> bytes:
    """The JUnit XML of ``levels``: one ``<testsuite>`` per model@effort, one ``<testcase>`` per test run.

    ``error`` says why the run ended before its end (interrupted, the server
    unreachable, a damaged store): a ``tsuka`` suite with a ``run`` test case
    holding that ``<error>`` comes first, so CI shows it.
    """
    import xml.etree.ElementTree as ET  # loaded only when a JUnit file is written

    root = ET.Element("testsuites", {"name": "tsuka"})
    totals = [_run_error(root, error)] if error is not None else []
    totals += [_suite(root, level) for level in levels]
    root.attrib.update(
        {
            "tests": str(sum(t[0] for t in totals)),
            "failures": str(sum(t[1] for t in totals)),
            "errors": str(sum(t[2] for t in totals)),
            "time": f"{sum(t[3] for t in totals):.3f}",
        }
    )
    ET.indent(root)
    text: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return text + b"\n"


def write_junit(path: Path, levels: Sequence[LevelResult], error: str | None = None) -> None:
    """Write :func:`junit_xml` of ``levels`` (and the run's ``error``) to ``path``."""
    Path(path).write_bytes(junit_xml(levels, error))


def _run_error(parent: ET.Element, error: str) -> tuple[int, int, int, float]:
    import xml.etree.ElementTree as ET

    suite = ET.SubElement(parent, "testsuite", {"name": "tsuka", "tests": "1", "failures": "0", "errors": "1"})
    suite.attrib.update({"skipped": "0", "time": "0.000"})
    case = ET.SubElement(suite, "testcase", {"classname": "tsuka", "name": "run", "time": "0.000"})
    ET.SubElement(case, "error", {"type": "RunError", "message": _xml_text(error)})
    return (1, 0, 1, 0.0)
