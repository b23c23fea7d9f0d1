"""tsuka report --compare: the page of two recorded runs compared, its numbers the comparison's, all escaped."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from answerers import perfect, which_test
from history_helpers import DEFAULT_SUITE, history_of, invoke
from html_values import Values
from loopback import LoopbackServer, Reply
from test_htmlreport import BROWSER, INJECTED, NEEDS_CHROMIUM, chromium, console_messages, dom_of, read_png

from tsuka_core.compare import model
from tsuka_core.compare.compute import compare
from tsuka_core.compare.model import Comparison
from tsuka_core.compare.sides import load_side
from tsuka_core.report.compare_html import render_comparison, write_comparison
from tsuka_core.report.compare_page import page_of
from tsuka_core.report.compare_svg import diff_bar, nice_scale, signed_pct
from tsuka_core.report.figures import pct
from tsuka_core.report.html import CSP

HOSTILE_NAME = f"frase {INJECTED}"
"""The name the first test of the suite is given: markup that would run if the page did not escape it."""
BAD_RGB = (0xF0, 0x44, 0x38)
"""The report's ``--bad`` colour: a category's point beyond noise on the worse side, a dropped tier."""


def before(body: dict[str, Any], n: int) -> Reply:
    """Side A: right everywhere but the list of metals, which names gold."""
    name, _ = which_test(body)
    if name == "lista_vincoli_negativi":
        return Reply.text("iron\ngold\nsilver")
    return perfect(body, n)


def after(body: dict[str, Any], n: int) -> Reply:
    """Side B: the list right now; script for the sentence; every tool test wrong (the trap's tool called)."""
    name, _ = which_test(body)
    if name == "frase_8_parole":
        return Reply.text(f"{INJECTED} river")
    if name in ("catena_tool_distrattori", "tool_write_append"):
        return Reply.text("I would rather not use tools.")
    if name == "trappola_astensione":
        return Reply.tool_call("send_email", {"to": "a@example.com", "subject": "hi", "body": INJECTED})
    return perfect(body, n)


@dataclass(frozen=True)
class Runs:
    """Recorded runs and their history: 1 (answered by :func:`before`) and 2 (by :func:`after`) of one suite,
    3 (by :func:`after`) of that suite without its last test; the profile stored is run 3's."""

    folder: Path
    store: Path
    suite: Path

    @property
    def history(self) -> Path:
        return history_of(self.store)

    def comparison(self, a: str = "1", b: str = "2", *, common_tests: bool = False) -> Comparison:
        """The comparison of ``a`` against ``b``, as ``tsuka compare`` builds it."""
        sides = (load_side(ref, self.history, self.store) for ref in (a, b))
        return compare(*sides, common_tests=common_tests)

    def page(self, *args: str, name: str = "cmp.html") -> Path:
        """Write the comparison page with ``tsuka report --compare ... -o``; its path."""
        out = self.folder / name
        made = invoke("report", "--compare", *args, "--profiles", self.store, "-o", out)
        assert made.exit_code == 0, made.stderr
        return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    folder = tmp_path_factory.mktemp("compare")
    suite, store = folder / "suite", folder / "models_profile.json"
    shutil.copytree(DEFAULT_SUITE, suite)
    first = suite / "10_instruction_frase.json"
    test = json.loads(first.read_text(encoding="utf-8"))
    first.write_text(json.dumps({**test, "name": HOSTILE_NAME}), encoding="utf-8")
    shorter = folder / "shorter"
    shutil.copytree(suite, shorter)
    (shorter / "32_tool_write_append.json").unlink()
    for answers, tests in ((before, suite), (after, suite), (after, shorter)):
        with LoopbackServer(answers, models=["alpha"]) as server:
            ran = invoke("run", "alpha", "--base-url", server.base_url, "--profiles", store, "--suite", tests,
                         "-e", "none")  # fmt: skip
        assert ran.exit_code == 0, ran.stderr
    return Runs(folder, store, suite)


BLOCKS = frozenset({"div", "p", "li", "td", "th", "tr", "summary", "section", "h2", "h3"})
"""Elements whose text is apart from what comes before and after it."""


class Elements(HTMLParser):
    """Every start tag with its attributes; all text; and the text under each element with an ``id`` or class."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.open: list[tuple[str, dict[str, str | None], list[str]]] = []
        self.closed: list[tuple[str, dict[str, str | None], str]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in ("meta", "br"):
            self.open.append((tag, dict(attrs), []))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag not in (name for name, _, _ in self.open):
            return
        while self.open:
            name, attrs, parts = self.open.pop()
            self.closed.append((name, attrs, " ".join("".join(parts).split())))
            if self.open:
                gap = " " if name in BLOCKS else ""
                self.open[-1][2].append(gap + "".join(parts) + gap)
            if name == tag:
                return

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self.open and "svg" not in (name for name, _, _ in self.open):  # a chart's tooltip is not its cell's text
            self.open[-1][2].append(data)

    def texts(self, tag: str, cls: str | None = None) -> list[str]:
        """The text of every ``tag`` (whose class list holds ``cls``, if given), in the order they end."""
        return [
            text
            for name, attrs, text in self.closed
            if name == tag and (cls is None or cls in (attrs.get("class") or "").split())
        ]


def parsed(path: Path) -> Elements:
    return Elements(path.read_text(encoding="utf-8"))


# --- the page's numbers are the comparison's -----------------------------------------------------------------------


def test_the_changed_tests_are_listed_pass_to_fail_first(runs: Runs) -> None:
    page = parsed(runs.page("1", "2"))
    (level,) = runs.comparison().levels

    shown = page.texts("summary")  # only the changed tests have a summary
    regressed = [t for t in level.changed_tests if t.direction == "pass->fail"]
    fixed = [t for t in level.changed_tests if t.direction == "fail->pass"]
    assert [t.name for t in regressed] == [HOSTILE_NAME, "catena_tool_distrattori", "trappola_astensione",
                                           "tool_write_append"]  # fmt: skip
    assert [t.name for t in fixed] == ["lista_vincoli_negativi"]
    assert len(level.changed_tests) == 5  # in the model, the fixed test comes between the regressed ones
    expected = [
        f"{arrow} {' '.join(t.name.split())} {t.category} · {t.status_a} {pct(t.score_a)} → {t.status_b} "
        f"{pct(t.score_b)}"
        for arrow, tests in (("pass → fail", regressed), ("fail → pass", fixed))
        for t in tests
    ]
    assert shown == expected
    assert shown[-1] == "fail → pass lista_vincoli_negativi instruction · fail 60% → pass 100%"


def test_each_changed_test_lists_its_flipped_checks(runs: Runs) -> None:
    page = parsed(runs.page("1", "2"))
    (level,) = runs.comparison().levels

    items = page.texts("li", "failed") + page.texts("li", "passed")
    flips = [(t, f) for t in level.changed_tests for f in t.checks]
    assert len(items) == len(flips) > 5
    for _, flip in flips:
        line = f"{flip.location} {flip.type}: {flip.status_a} → {flip.status_b} — {flip.detail_b}"
        assert any(" ".join(line.split()) in " ".join(item.split()) for item in items), line
    assert any("""first word 'script>document.title="PWNED";""" in item for item in items)  # the answer, as text


def test_each_category_row_shows_the_comparisons_numbers(runs: Runs) -> None:
    page = parsed(runs.page("last~2", "last~1"))
    (level,) = runs.comparison().levels

    rows = page.texts("tr", "worse") + page.texts("tr", "better") + page.texts("tr", "noise")
    for delta in level.categories:
        low, high = delta.interval
        noise = "beyond noise" if delta.beyond_noise else "within noise"
        row = (
            f"{delta.category} {pct(delta.score_a)} {pct(delta.score_b)} {signed_pct(delta.difference)} "
            f"{signed_pct(low)} to {signed_pct(high)} {noise} {delta.tests}"
        )
        assert row in rows
    tools = next(d for d in level.categories if d.category == "toolCalling")
    assert (tools.score_a, tools.score_b, tools.beyond_noise, tools.regressed) == (1.0, 0.0, True, True)
    svgs = [a for t, a in page.tags if t == "svg" and "diff" in (a.get("class") or "")]
    assert [a.get("class") for a in svgs] == [f"diff {'worse' if d.regressed else 'better' if d.improved else 'noise'}"
                                             for d in level.categories]  # fmt: skip


def test_the_header_and_tiers_are_the_comparisons(runs: Runs) -> None:
    page = parsed(runs.page("1", "2"))
    comparison = runs.comparison()
    (level,) = comparison.levels
    text = " ".join("".join(page.text).split())

    (side_a,) = page.texts("div", "side")[:1]
    assert side_a.startswith(f"A {comparison.side_a.label} · {comparison.side_a.measured_at}")
    assert f"({comparison.side_a.suite_hash})" in side_a
    assert (level.tier_a, level.tier_b, level.tier_dropped) == ("medium", "small", True)
    assert "Tier medium → small dropped" in page.texts("div", "callout")
    assert "alpha@none medium small dropped 4 1 7" in page.texts("tr")
    assert "--common-tests" not in text
    assert page.texts("p", "only") == []


def test_with_common_tests_the_tests_on_one_side_are_named(runs: Runs) -> None:
    page = parsed(runs.page("2", "3", "--common-tests", name="common.html"))
    comparison = runs.comparison("2", "3", common_tests=True)
    (level,) = comparison.levels

    assert (level.only_a, level.only_b, level.tests_compared) == (("tool_write_append",), (), 6)
    (notice,) = [text for name, attrs, text in page.closed if attrs.get("id") == "common-tests"]
    assert notice.startswith("--common-tests: only the tests both sides have are compared")
    assert page.texts("p", "only") == ["Tests only on side A, not compared: tool_write_append"]
    assert comparison.notes
    assert all(note in page.texts("div", "warn") for note in comparison.notes)


def test_sides_of_different_suites_need_common_tests(runs: Runs) -> None:
    out = runs.folder / "refused.html"
    result = invoke("report", "--compare", "2", "3", "--profiles", runs.store, "-o", out)

    assert result.exit_code == 2
    assert "compare only the tests both have with --common-tests" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_a_stored_profile_is_a_side(runs: Runs) -> None:
    page = parsed(runs.page("1", "alpha@none", "--common-tests", name="profile.html"))
    (level,) = runs.comparison("1", "alpha@none", common_tests=True).levels

    assert [side.split(" · ")[0] for side in page.texts("div", "side")] == ["A run 1", "B profile alpha@none"]
    regressed = [t.name for t in level.changed_tests if t.direction == "pass->fail"]
    assert regressed == [HOSTILE_NAME, "catena_tool_distrattori", "trappola_astensione"]
    assert [s.split(" · ")[0] for s in page.texts("summary")] == [
        f"pass → fail {' '.join(HOSTILE_NAME.split())} instruction",
        "pass → fail catena_tool_distrattori toolCalling",
        "pass → fail trappola_astensione toolCalling",
        "fail → pass lista_vincoli_negativi instruction",
    ]
    assert [f for t in level.changed_tests for f in t.checks] == []  # a profile keeps no checks: none flipped
    assert page.texts("li", "absent") == []


# --- hostile values ---------------------------------------------------------------------------------------------------


def test_a_script_in_a_test_name_or_answer_stays_text(runs: Runs) -> None:
    html = runs.page("1", "2").read_text(encoding="utf-8")
    page = Elements(html)

    tags = Counter(tag for tag, _ in page.tags)
    assert tags["script"] == tags["img"] == tags["iframe"] == 0
    assert [(t, k) for t, a in page.tags for k in a if k.startswith("on")] == []
    text = "".join(page.text)
    assert HOSTILE_NAME in text  # the test's name, whole
    assert "&lt;script&gt;document.title=" in html
    (csp,) = [a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp == CSP


MARKUP = f"{INJECTED}</textarea></title></style><!-- '\"&amp; ]]>"
PLAIN = "zq"


def hostile_comparison(s: str) -> Comparison:
    """A comparison with ``s`` in every text field the page shows."""
    flip = model.CheckFlip(f"loc{s}", f"type{s}", "passed", f"failed{s}", f"was{s}", f"now{s}")
    changes = (
        model.TestChange(f"test{s}", f"cat{s}", 1.0, 0.0, "pass", "fail", "pass->fail", (flip,)),
        model.TestChange(f"fixed{s}", f"cat{s}", 0.0, 1.0, "fail", "pass", "fail->pass"),
    )
    deltas = (
        model.CategoryDelta(f"json{s}", 1.0, 0.5, -0.5, (-0.75, -0.25), True, 4),
        model.CategoryDelta("instruction", 0.5, 0.6, 0.1, (-0.2, 0.3), False, 3),
    )
    level = model.LevelComparison(f"m{s}@low", f"n{s}@low", f"tier{s}", "small", deltas, changes, 7, (f"onlya{s}",),
                            (f"onlyb{s}",))  # fmt: skip
    side_a = model.SideInfo("run", f"1{s}", f"run 1{s}", f"hash{s}", f"suite{s}", f"when{s}")
    side_b = model.SideInfo("profile", f"m{s}@low", f"profile m{s}@low", f"hash{s}", "", f"when{s}")
    return Comparison(side_a, side_b, True, (level,), f"noise{s}", (f"note{s}",), (f"ua{s}",), (f"ub{s}",))


def test_markup_in_every_field_of_the_comparison_adds_no_element() -> None:
    hostile = Values(render_comparison(page_of(hostile_comparison(MARKUP))))
    plain = Values(render_comparison(page_of(hostile_comparison(PLAIN))))

    assert hostile.elements == plain.elements
    assert "script" not in {tag for tag, _ in hostile.elements}
    shown = sum(value.count(PLAIN) for value in plain.values)
    assert shown > 20
    assert sum(value.count(MARKUP) for value in hostile.values) == shown


# --- built by hand --------------------------------------------------------------------------------------------------


def test_changes_are_shown_pass_to_fail_then_fail_to_pass_then_score() -> None:
    changes = (
        model.TestChange("moved", "json", 0.5, 0.25, "fail", "fail", "score"),
        model.TestChange("fixed", "json", 0.0, 1.0, "fail", "pass", "fail->pass"),
        model.TestChange("broke", "json", 1.0, 0.5, "pass", "fail", "pass->fail"),
    )
    base = hostile_comparison(PLAIN)
    level = replace(base.levels[0], changed_tests=changes)
    page = Elements(render_comparison(page_of(replace(base, levels=(level,)))))

    assert [s.split(" · ")[0] for s in page.texts("summary")] == [
        "pass → fail broke json",
        "fail → pass fixed json",
        "score changed moved json",
    ]
    assert page.texts("li", "sub") == ["No check flipped: only the score moved."] * 3
    assert [a.get("class") for t, a in page.tags if t == "span" and "dir" in (a.get("class") or "").split()] == [
        "dir worse",
        "dir better",
        "dir worse",
    ]


def test_without_a_paired_level_the_page_says_so() -> None:
    base = hostile_comparison(PLAIN)
    page = Elements(render_comparison(page_of(replace(base, levels=(), notes=()))))

    assert "No level was measured on both sides." in page.texts("p", "sub")
    assert page.texts("p", "unpaired") == ["Only on side A, not compared: uazq", "Only on side B, not compared: ubzq"]
    assert page.texts("section", "level") == []


def test_the_bar_puts_the_difference_and_its_interval_around_zero() -> None:
    bar = Elements(diff_bar(-0.3, -0.5, -0.1, scale=0.5, tone="worse"))
    shapes = dict(bar.tags)  # the last of each kind
    lines = [attrs for tag, attrs in bar.tags if tag == "line"]
    (zero_line,) = [a for a in lines if a.get("class") == "zero"]
    zero = float(zero_line["x1"] or "nan")
    left, width = float(shapes["rect"]["x"] or "nan"), float(shapes["rect"]["width"] or "nan")
    point = float(shapes["circle"]["cx"] or "nan")

    assert zero == 80.0  # the middle of the drawing
    assert left == pytest.approx(6.0)  # the interval from -100% of the scale...
    assert left + width == pytest.approx(80 - 74 * 0.2)  # ...to -20%
    assert point == pytest.approx(80 - 74 * 0.6)
    assert shapes["svg"]["class"] == "diff worse"
    assert bar.text == ["difference −30%, 95% interval −50% to −10%"]


def test_a_difference_past_the_scale_stays_in_the_drawing() -> None:
    bar = Elements(diff_bar(0.9, 0.8, 1.0, scale=0.25, tone="better"))
    shapes = dict(bar.tags)  # the last of each kind

    assert float(shapes["circle"]["cx"] or "nan") == pytest.approx(154.0)
    assert nice_scale(-0.05, 0.1) == 0.1
    assert nice_scale(0.11) == 0.2
    assert nice_scale(-0.6, 0.3) == 1.0
    assert nice_scale() == 0.1


# --- the command ------------------------------------------------------------------------------------------------------


def test_the_command_says_what_it_wrote(runs: Runs) -> None:
    out = runs.folder / "said.html"
    made = invoke("report", "--compare", "1", "2", "--profiles", runs.store, "-o", out)

    assert made.exit_code == 0, made.stderr
    assert made.stdout == f"Wrote {out} (run 1 against run 2, 1 level(s) compared)\n"


def test_without_output_the_pages_have_their_own_names(
    runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    assert invoke("report", "--compare", "1", "2", "--profiles", runs.store).exit_code == 0
    assert invoke("report", "--profiles", runs.store).exit_code == 0

    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare.html", "report.html"]
    assert "What changed from A to B?" in (tmp_path / "compare.html").read_text(encoding="utf-8")
    assert "tsuka report: run 3" in (tmp_path / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--compare", "1", "9"), "no run '9'"),
        (("--compare", "1", "nobody@none"), "no profile 'nobody@none'"),
        (("2", "--compare", "1", "2"), "give RUN or --compare A B, not both"),
        (("--common-tests",), "--common-tests goes with --compare A B"),
    ],
)
def test_a_missing_side_or_a_bad_option_is_one_line(runs: Runs, args: tuple[str, ...], message: str) -> None:
    out = runs.folder / "never.html"
    result = invoke("report", *args, "--profiles", runs.store, "-o", out)

    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_a_comparison_without_history_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "cmp.html"
    result = invoke("report", "--compare", "last~1", "last", "--profiles", tmp_path / "models_profile.json", "-o", out)

    assert result.exit_code == 2
    assert result.stderr.startswith("tsuka: error: no run history at ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_compare_needs_two_sides(runs: Runs) -> None:
    result = invoke("report", "--profiles", runs.store, "--compare", "1")

    assert result.exit_code == 2
    assert "'--compare' requires 2 arguments" in result.stderr


def test_a_page_that_cannot_be_written_is_one_line(runs: Runs) -> None:
    (runs.folder / "a-file").write_text("", encoding="utf-8")
    out = runs.folder / "a-file" / "cmp.html"  # a missing folder is made; a file in the way cannot be
    for args in (("--compare", "1", "2"), ("1",)):
        result = invoke("report", *args, "--profiles", runs.store, "-o", out)

        assert result.exit_code == 2
        assert result.stderr.startswith(f"tsuka: error: cannot write {out}: ")
        assert "a-file is a file, not a folder" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_written_page_is_the_rendered_page(runs: Runs, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    view = page_of(runs.comparison())
    out = tmp_path / "cmp.html"

    write_comparison(out, view, generated_at=when)

    assert out.read_text(encoding="utf-8") == render_comparison(view, generated_at=when)


# --- in a real browser ------------------------------------------------------------------------------------------------


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    folder = tmp_path / "chromium-profile"
    folder.mkdir()
    return folder


@BROWSER
@NEEDS_CHROMIUM
def test_in_chromium_the_page_loads_clean_and_shows_the_changes(runs: Runs, profile: Path) -> None:
    dom, console = dom_of(runs.page("1", "2", name="browser.html"), profile)

    assert console == []
    body = dom.split("<body", 1)[1]
    assert "data-pwned" not in body.split(">", 1)[0]
    assert "PWNED" not in dom.split("<title>", 1)[1].split("</title>", 1)[0]
    assert dom.count('<details class="test change" open="">') == 5
    assert '<span class="dir worse">pass → fail</span> frase &lt;script&gt;document.title=' in dom
    assert '<span class="dir better">fail → pass</span> lista_vincoli_negativi' in dom
    assert dom.count('<svg class="diff') == 3


@BROWSER
@NEEDS_CHROMIUM
def test_in_chromium_the_worse_category_is_drawn(runs: Runs, profile: Path, tmp_path: Path) -> None:
    shot = tmp_path / "cmp.png"
    page = runs.page("1", "2", name="shot.html")
    _, err = chromium(page, profile, "--enable-logging=stderr", "--v=0", f"--screenshot={shot}",
                      "--window-size=1280,1200")  # fmt: skip

    assert console_messages(err) == []
    width, height, pixels = read_png(shot, rows=1200)
    assert (width, height) == (1280, 1200)
    counts = Counter(pixels)
    assert counts[BAD_RGB] > 50, "the toolCalling point and the dropped tier are not on screen"
    assert len(counts) > 50, "the page looks blank"


@BROWSER
@NEEDS_CHROMIUM
def test_in_chromium_markup_in_every_field_stays_text(tmp_path: Path, profile: Path) -> None:
    page = tmp_path / "hostile.html"
    write_comparison(page, page_of(hostile_comparison(MARKUP)))

    dom, console = dom_of(page, profile)

    assert console == []
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    title = dom.split("<title>", 1)[1].split("</title>", 1)[0]
    assert title.startswith("tsuka comparison: run 1&lt;script&gt;document.title=")  # the label, not set by a script
    assert dom.count("&lt;script&gt;document.title=") > 20
