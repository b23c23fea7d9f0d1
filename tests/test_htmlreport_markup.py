"""tsuka report escapes every recorded value: markup in any field of a run adds nothing to the page but text."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from html_values import Values
from test_htmlreport import BROWSER, INJECTED, NEEDS_CHROMIUM, dom_of

from tsuka_core.backends.base import ChatResponse
from tsuka_core.judge.answer import ToolCall
from tsuka_core.record.level import LevelRecord
from tsuka_core.report.html import render_report, write_report
from tsuka_core.storage.history_query import StoredCheck, StoredLevel, StoredRun, StoredStep, StoredTest
from tsuka_core.terms import CATEGORIES

MARKUP = f"{INJECTED}</textarea></title></style><!-- '\"&amp; ]]>"
"""Script, a handler, tags that end the elements model text sits in, quotes, an entity and a comment opening."""
PLAIN = "zq"
"""A value the page's own words never contain, to count where values land."""
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def hostile_test(s: str, repeat: int, *, error: bool = False) -> StoredTest:
    """A two-step run of a test with ``s`` in every text the report shows: names, checks, messages, answer, the
    prompt as read, error."""
    checks = (StoredCheck(f"checks[0]{s}", f"type{s}", 1.0, "passed", f"detail{s}"),
              StoredCheck("checks[1]", "contains", 2.0, s, f"other{s}"))  # fmt: skip
    messages = [
        {"role": "system", "content": f"system{s}"},
        {"role": "user", "content": f"user{s}"},
        {"role": f"role{s}", "tool_call_id": f"call{s}", "content": f"tool{s}"},
    ]
    call = ToolCall("c1", f"name{s}", {"html": "</pre><script>alert(3)</script>"})
    response = ChatResponse(
        f"answer{s}", (call,), reasoning=f"reasoning{s}", completion_tokens=3, duration=0.5, rendered_prompt=f"read{s}"
    )
    steps = (StoredStep(0, True, messages, None if error else response, repeat == 2, checks),
             StoredStep(1, False, [], None, False, checks[1:]))  # fmt: skip
    return StoredTest(f"test{s}", "t.json", f"category{s}", 1.0, [], "error" if error else "ok",
                      0.0 if error else 1.0, f"error{s}" if error else None, steps, repeat)  # fmt: skip


def hostile_run(s: str) -> StoredRun:
    """A rescore of two levels of a model, tests run twice, with ``s`` in every text field of the run and levels."""
    tests = (hostile_test(s, 1), hostile_test(s, 2, error=True), hostile_test(f"once{s}", 1))

    def level(effort: str, recommended: bool) -> StoredLevel:
        record = LevelRecord.parse({"model": f"model{s}", "provider": f"provider{s}", "scores": {"json": 0.5},
                                    "tokensPerSecond": 10.0, "avgCompletionTokens": 3, "effortApplied": recommended,
                                    "repeats": 2, "speedFigures": {f"figure{s}": {"p50": 1}},
                                    "answerFaults": {"cutAtLimit": 1}})  # fmt: skip
        return StoredLevel(f"model{s}", effort, record, "partial", True, recommended, [f"note{s}"], tests)

    levels = (level("low", True), level(f"effort{s}", False))
    return StoredRun(3, "rescore", f"status{s}", f"started{s}", None, f"suite{s}", f"hash{s}", 5, f"backend{s}",
                     f"provider{s}", [f"model{s}"], ["low"], {}, 2, levels)  # fmt: skip


def intact(text: str) -> int:
    """How often ``MARKUP`` is in ``text`` whole: as itself, or as a JSON string holds it (the request as sent,
    shown as JSON, escapes its quote), each form counted once."""
    as_json = json.dumps(MARKUP, ensure_ascii=False)[1:-1]
    return text.count(MARKUP) + text.count(as_json)


def test_markup_in_every_field_adds_no_element_or_attribute() -> None:
    hostile, plain = Values(render_report(hostile_run(MARKUP))), Values(render_report(hostile_run(PLAIN)))

    assert hostile.elements == plain.elements
    assert "script" not in {tag for tag, _ in hostile.elements}
    shown = sum(value.count(PLAIN) for value in plain.values)
    assert shown > 100
    assert sum(intact(value) for value in hostile.values) == shown  # each value intact, as text
    assert "→ name" + MARKUP + '({"html": "</pre><script>alert(3)</script>"})' in hostile.values


def with_a_tier(run: StoredRun) -> StoredRun:
    """``run`` with a known tier at every level, complete, its record holding a confidence and intervals, so that
    each level gets an interval chart."""
    sure = {"tier": "medium", "tierConfidence": 0.6, "intervals": {c: [0.2, 0.7] for c in CATEGORIES}}
    return replace(run, levels=tuple(replace(level, status="complete",
                                             record=LevelRecord.parse({**level.record.stored(), **sure}))
                                     for level in run.levels))  # fmt: skip


def test_markup_in_a_level_with_intervals_adds_no_element_or_attribute() -> None:
    hostile = Values(render_report(with_a_tier(hostile_run(MARKUP))))
    plain = Values(render_report(with_a_tier(hostile_run(PLAIN))))

    assert hostile.elements == plain.elements
    assert ("svg", ("class", "viewbox", "width", "height", "role", "aria-label", "xmlns")) in plain.elements
    points = [attrs for tag, attrs in plain.elements if tag == "circle" and "fill" not in attrs]
    assert len(points) == 2 * 3  # the interval chart's: two levels, three categories
    assert sum(intact(value) for value in hostile.values) == sum(value.count(PLAIN) for value in plain.values)
    assert any(f"effort{MARKUP} (not applied) · tier medium · confidence" in value for value in hostile.values)


def test_written_page_is_the_rendered_page(tmp_path: Path) -> None:
    run = hostile_run(MARKUP)
    page = tmp_path / "report.html"

    write_report(page, run, generated_at=WHEN)

    assert page.read_text(encoding="utf-8") == render_report(run, generated_at=WHEN)


@BROWSER
@NEEDS_CHROMIUM
def test_in_chromium_markup_in_every_field_stays_text(tmp_path: Path) -> None:
    page, profile = tmp_path / "report.html", tmp_path / "chromium-profile"
    profile.mkdir()
    write_report(page, hostile_run(MARKUP))

    dom, console = dom_of(page, profile)

    assert console == []
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    assert "PWNED" not in dom.split("<title>", 1)[1].split("</title>", 1)[0]
    assert dom.count("&lt;script&gt;document.title=") > 100
