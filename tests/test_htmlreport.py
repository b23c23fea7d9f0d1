"""tsuka report: one static page, every model answer escaped, checked in a real headless Chromium."""

from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
import threading
import tracemalloc
import zlib
from collections import Counter
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from answerers import by_effort, by_model, perfect, tool_shy
from history_helpers import invoke
from loopback import LoopbackServer, Reply

from tsuka_core.backends.base import ChatResponse
from tsuka_core.record.level import LevelRecord
from tsuka_core.report.html import render_report, write_report
from tsuka_core.storage.history_query import StoredCheck, StoredLevel, StoredRun, StoredStep, StoredTest, group_tests

CHROMIUM = Path("/usr/bin/chromium")
NEEDS_CHROMIUM = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium: apt-get install -y chromium"
)
BROWSER = pytest.mark.browser
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)
INJECTED = (
    '<script>document.title="PWNED";document.body.setAttribute("data-pwned","script")</script>'
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">"
    "</pre></details><svg onload=\"document.body.setAttribute('data-pwned','svg')\"></svg>"
)
INSTRUCTION_RGB = (0x63, 0x66, 0xF1)
"""The instruction colour of the score chart (tsuka_core.report.figures.CATEGORY_COLORS)."""
TOOLS_INTERVAL_RGB: tuple[int, int, int] = tuple(round(0.55 * c + 0.45 * 255) for c in (0xF5, 0x9E, 0x0B))
"""The toolCalling colour drawn at the interval lines' opacity (0.55, report.css) over the white figure."""


def evil(body: dict[str, Any], n: int) -> Reply:
    """Right answers with markup that would run if it were not escaped, in the text and in the reasoning."""
    reply = perfect(body, n)
    if reply.content is None:
        return reply
    return Reply.text(f"{reply.content} {INJECTED}", reasoning=f"thinking {INJECTED}")


def right_then_wrong() -> Callable[[dict[str, Any], int], Reply]:
    """Answer each conversation right the first time it is asked and with script-laden text the second time.

    The two runs of a test send the same first request, so with ``--repeats 2`` one run of every test is
    answered right and the other wrong, whichever of them reaches the server first.
    """
    asked: Counter[str] = Counter()
    lock = threading.Lock()

    def answer(body: dict[str, Any], n: int) -> Reply:
        key = repr((body["model"], body.get("reasoning_effort"), body["messages"]))
        with lock:
            asked[key] += 1
            first = asked[key] == 1
        return perfect(body, n) if first else Reply.text(f"wrong {INJECTED}")

    return answer


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a run of two models, one of which answers with script at effort low."""
    folder = tmp_path_factory.mktemp("report")
    store, page = folder / "models_profile.json", folder / "report.html"
    answers = by_model({"alpha": by_effort({"none": tool_shy, "low": evil, "medium": perfect}), "beta": tool_shy})
    with LoopbackServer(answers, models=["alpha", "beta"]) as server:
        ran = invoke("run", "all", "--base-url", server.base_url, "--profiles", store, "-e", "none", "-e", "low",
                     "-e", "medium")  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    made = invoke("report", "--profiles", store, "-o", page)
    assert made.exit_code == 0, made.stderr
    assert f"Wrote {page} (run 1, 6 level(s))" in made.stdout
    return page


@pytest.fixture(scope="module")
def repeated_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a run with --repeats 2 in which one run of every test is answered right, the other wrong."""
    folder = tmp_path_factory.mktemp("repeated")
    store, page = folder / "models_profile.json", folder / "report.html"
    with LoopbackServer(right_then_wrong(), models=["gamma"]) as server:
        ran = invoke("run", "gamma", "--base-url", server.base_url, "--profiles", store, "-e", "none",
                     "--repeats", "2")  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    made = invoke("report", "--profiles", store, "-o", page)
    assert made.exit_code == 0, made.stderr
    return page


class Elements(HTMLParser):
    """Every start tag with its attributes, and all text, of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: Path) -> Elements:
    return parse_text(page.read_text(encoding="utf-8"))


def words(page: Elements) -> str:
    """The page's text, one space between pieces (table cells, say) and wherever there was white space."""
    return " ".join(" ".join(page.text).split())


def parse_text(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    return parser


# --- the page as written --------------------------------------------------------------------------------------------


def test_model_output_is_text_never_markup(report: Path) -> None:
    page = parse(report)
    tags = Counter(tag for tag, _ in page.tags)

    assert tags["script"] == tags["img"] == tags["iframe"] == tags["object"] == tags["embed"] == 0
    handlers = [(tag, name) for tag, attrs in page.tags for name in attrs if name.startswith("on")]
    assert handlers == []
    text = "".join(page.text)
    assert text.count(INJECTED) == 2 * 5  # in each of the 5 text answers at effort low, and in its reasoning
    assert "thinking <script>" in text


def test_the_page_fetches_nothing(report: Path) -> None:
    html = report.read_text(encoding="utf-8")
    page = parse(report)

    links = [v for _, attrs in page.tags for k, v in attrs.items() if k in ("src", "href", "action", "srcset") and v]
    assert [v for v in links if re.match(r"\s*(https?:)?//", v)] == []
    assert not re.search(r"(src|href)\s*=\s*[\"']?\s*(https?:)?//", html, re.IGNORECASE)
    assert not re.search(r"url\(\s*[\"']?\s*(https?:)?//", html, re.IGNORECASE)
    assert "@import" not in html
    (csp,) = [a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp is not None
    assert "default-src 'none'" in csp
    assert "script-src" not in csp


def test_the_page_shows_tiers_charts_recommendation_and_checks(report: Path) -> None:
    page = parse(report)
    text = " ".join("".join(page.text).split())

    assert "Use alpha at effort medium: tier large" in text
    assert "Use beta at effort none: tier small" in text
    charts = [a for t, a in page.tags if t == "svg" and a.get("class") == "chart"]
    assert len(charts) == 2 * 3
    bars = [a for t, a in page.tags if t == "rect" and a.get("class") == "bar"]
    assert len(bars) == 2 * (3 * 3 + 3 + 3)  # per model: 3 categories x 3 efforts, tokens, speed
    assert any(t == "polyline" for t, _ in page.tags)
    assert "✗ checks[0] word_count (weight 2) — expected 8 words, got" in text
    assert "✓ checks[1] first_word (weight 1) — first word 'Every', expected 'Every'" in text
    summaries = [t for t, _ in page.tags].count("details")
    assert summaries >= 2 * 7 * 2  # every test of each model, and a transcript per level
    assert "Write one English sentence of exactly 8 words" in text
    assert "±" not in text  # a single run shows a score, not a mean and spread
    assert "run 1 of" not in text


def test_each_level_shows_its_score_intervals_and_tier_confidence(report: Path) -> None:
    page = parse(report)
    text = words(page)

    charts = [a for t, a in page.tags if t == "svg" and a.get("class") == "chart intervals"]
    assert len(charts) == 2  # one per model
    intervals = [a for t, a in page.tags if t == "line" and a.get("class") == "interval"]
    points = [a for t, a in page.tags if t == "circle" and a.get("class") == "point"]
    assert len(intervals) == len(points) == 2 * 3 * 3  # per model: 3 efforts x 3 categories
    assert all(float(a["x1"] or 0) <= float(a["x2"] or 0) for a in intervals)
    assert any(float(a["x1"] or 0) < float(a["x2"] or 0) for a in intervals)  # a tool-shy level is unsure of tools
    assert "medium · tier large · confidence 1.00" in text
    assert "none · tier small · confidence" in text
    confidences = [a for t, a in page.tags if t == "span" and (a.get("class") or "").startswith("conf")]
    assert len(confidences) == 2 * 3 * 2 + 2  # every level in the overview and its model's table, and each callout


def test_a_repeated_run_shows_each_tests_mean_and_spread(repeated_report: Path) -> None:
    page = parse(repeated_report)
    text = words(page)

    assert "each test run 2 times: mean ± spread" in text
    assert "frase_8_parole instruction 50% ± 50%" in text
    titles = [a.get("title") for t, a in page.tags if t == "span" and a.get("class") == "score mid"]
    assert "runs: 100%, 0%" in titles or "runs: 0%, 100%" in titles
    run_folds = [a for t, a in page.tags if t == "details" and a.get("class") == "run"]
    assert len(run_folds) == 7 * 2
    assert text.count("run 1 of 2") == text.count("run 2 of 2") == 7 * 2  # in each run's summary and transcript
    assert text.count(f"wrong {INJECTED}") == 7  # the wrong run of each test, shown as text
    assert Counter(tag for tag, _ in page.tags)["script"] == 0


# --- a repeated test, built by hand ---------------------------------------------------------------------------------


def stored_test(name: str, repeat: int, *, passed: bool, answer: str = "", error: str | None = None) -> StoredTest:
    """A one-step test whose one check passed or failed; ``error`` makes it a run that could not be measured."""
    status = "passed" if passed else "failed"
    check = StoredCheck("checks[0]", "contains", 1.0, status, f"detail of run {repeat}")
    response = None if error else ChatResponse(answer, completion_tokens=5, duration=0.25)
    step = StoredStep(0, error is None, [{"role": "user", "content": f"ask {name}"}], response, False,
                      () if error else (check,))  # fmt: skip
    return StoredTest(name, f"{name}.json", "instruction", 1.0, [], "error" if error else "ok",
                      1.0 if passed and not error else 0.0, error, (step,), repeat)  # fmt: skip


def stored_run(tests: tuple[StoredTest, ...], repeats: int) -> StoredRun:
    record = LevelRecord.parse({"model": "m1", "tier": "small", "scores": {"instruction": 0.5}, "tokensPerSecond": 20.0,
                                "avgCompletionTokens": 5, "effortApplied": True, "repeats": repeats})  # fmt: skip
    level = StoredLevel("m1", "none", record, stored=True, recommended=True, tests=tests)
    return StoredRun(7, "run", "ok", "2026-01-01T00:00:00Z", None, "suite", "abc", 5, "openai", "http://x", ["m1"],
                     ["none"], {}, None, (level,))  # fmt: skip


def test_group_tests_keeps_suite_order_and_puts_runs_in_repeat_order() -> None:
    tests = (stored_test("b", 2, passed=True), stored_test("b", 1, passed=False), stored_test("a", 1, passed=True))

    groups = group_tests(tests)

    assert [(g.first.name, [t.repeat for t in g.runs]) for g in groups] == [("b", [1, 2]), ("a", [1])]
    assert (groups[0].score, groups[0].spread, groups[0].repeated) == (0.5, 0.5, True)
    assert (groups[1].score, groups[1].spread, groups[1].repeated) == (1.0, 0.0, False)
    assert groups[0].label(1) == "run 2 of 2"


def test_each_run_of_a_repeated_test_shows_its_checks_and_transcript() -> None:
    tests = (
        stored_test("flaky", 1, passed=True, answer="right"),
        stored_test("flaky", 2, passed=False, answer=f"bad {INJECTED}"),
        stored_test("flaky", 3, passed=True, answer="right again"),
        stored_test("broken", 1, passed=True, answer="fine"),
        stored_test("broken", 2, passed=False, error="HTTP 500 <b>down</b>"),
        stored_test("broken", 3, passed=True, answer="fine"),
    )
    html = render_report(stored_run(tests, 3))
    page = parse_text(html)
    text = words(page)

    assert "flaky instruction 67% ± 47%" in text
    assert "broken instruction 67% ± 47%" in text
    spans = [
        (a.get("class"), a.get("title")) for t, a in page.tags if t == "span" and "runs:" in (a.get("title") or "")
    ]
    assert ("score mid", "runs: 100%, 0%, 100%") in spans
    assert ("score err", "runs: 100%, error, 100%") in spans  # a run in error marks the test
    cells = [a.get("class") for t, a in page.tags if t == "td" and "run" in (a.get("class") or "").split()]
    checks, scores = ["run passed", "run failed", "run passed"], ["run"] * 3
    assert cells == [*checks, *scores, "run passed", "run", "run passed", *scores]  # the run in error has no check
    marks = [a.get("title") for t, a in page.tags if t == "span" and a.get("class") == "mark" and a.get("title")]
    assert marks[:3] == ["detail of run 1", "detail of run 2", "detail of run 3"]
    for k in (1, 2, 3):
        assert text.count(f"run {k} of 3") == 2 * 2  # each test: the run's summary and its transcript's heading
    assert "ask flaky" in text
    assert f"bad {INJECTED}" in text
    assert "HTTP 500 <b>down</b>" in text
    assert Counter(tag for tag, _ in page.tags)["script"] == 0
    assert "HTTP 500 &lt;b&gt;down&lt;/b&gt;" in html
    assert "each test run 3 times" in text


def test_a_level_of_single_runs_renders_as_without_repeats() -> None:
    tests = (stored_test("once", 1, passed=True, answer="right"), stored_test("other", 1, passed=False, answer="no"))

    html = render_report(stored_run(tests, 1))
    text = words(parse_text(html))

    assert "once instruction 100% other instruction 0%" in text
    assert "±" not in text
    assert "run 1 of" not in text
    assert "each test run" not in text
    assert '<details class="run">' not in html
    assert '<table class="runs">' not in html


def test_the_page_is_written_as_it_is_rendered(tmp_path: Path) -> None:
    """Ten answers of a megabyte each: the page is written piece by piece, never held whole in memory."""
    answer = "<b>tag</b> & text " * 55_000
    tests = tuple(stored_test(f"long{i}", 1, passed=True, answer=answer) for i in range(10))
    page = tmp_path / "report.html"

    tracemalloc.start()
    try:
        write_report(page, stored_run(tests, 1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    size = page.stat().st_size
    assert size > 10 * len(answer)
    assert peak < size / 2, f"{peak} bytes allocated at most while writing a page of {size} bytes"


def test_a_report_without_history_is_one_line(tmp_path: Path) -> None:
    result = invoke("report", "--profiles", tmp_path / "models_profile.json", "-o", tmp_path / "r.html")

    assert result.exit_code == 2
    assert "no run history at" in result.stderr
    assert not (tmp_path / "r.html").exists()


# --- in a real browser ----------------------------------------------------------------------------------------------


def chromium(page: Path, profile: Path, *args: str) -> tuple[str, str]:
    """Run headless Chromium on ``page`` with a fresh profile; its stdout and stderr. Killed, with its children,
    when it takes longer than 90 s."""
    command = [str(CHROMIUM), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=profile
    )
    try:
        out, err = process.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=10)
        raise
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    return out, err


def console_messages(stderr: str) -> list[str]:
    """What the page wrote to the console, as Chromium logs it with --enable-logging=stderr."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def dom_of(page: Path, profile: Path) -> tuple[str, list[str]]:
    out, err = chromium(page, profile, "--enable-logging=stderr", "--v=0", "--dump-dom")
    return out, console_messages(err)


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    folder = tmp_path / "chromium-profile"
    folder.mkdir()
    return folder


@BROWSER
@NEEDS_CHROMIUM
def test_the_detector_sees_a_script_run_and_a_console_error(tmp_path: Path, profile: Path) -> None:
    """The checks below can fail: on a page whose script runs, they see the changed DOM and the error."""
    page = tmp_path / "bad.html"
    page.write_text(f"<!DOCTYPE html><html><body><pre>x</pre>{INJECTED}<script>nope()</script></body></html>")

    dom, console = dom_of(page, profile)

    assert "data-pwned" in dom
    assert any("nope is not defined" in line for line in console)


@BROWSER
@NEEDS_CHROMIUM
def test_in_chromium_the_page_loads_clean_and_the_injection_stays_text(report: Path, profile: Path) -> None:
    dom, console = dom_of(report, profile)

    assert console == []
    assert "<body" in dom
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    assert "PWNED" not in re.search(r"<title>(.*?)</title>", dom, re.DOTALL).group(1)  # type: ignore[union-attr]
    assert "&lt;script&gt;document.title=" in dom
    assert len(re.findall(r'<rect class="bar"', dom)) == 30
    assert len(re.findall(r'<line class="interval"', dom)) == len(re.findall(r'<circle class="point"', dom)) == 18


@BROWSER
@NEEDS_CHROMIUM
def test_in_chromium_a_repeated_run_shows_mean_and_spread(repeated_report: Path, profile: Path) -> None:
    dom, console = dom_of(repeated_report, profile)

    assert console == []
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    assert re.search(r'<span class="score mid" title="runs: (100%, 0%|0%, 100%)">50% ± 50%</span>', dom)
    assert dom.count('<details class="run">') == 7 * 2
    assert "&lt;script&gt;document.title=" in dom


@BROWSER
@NEEDS_CHROMIUM
def test_a_screenshot_shows_the_charts(report: Path, profile: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    _, err = chromium(report, profile, "--enable-logging=stderr", "--v=0", f"--screenshot={shot}",
                      "--window-size=1280,2000")  # fmt: skip

    assert console_messages(err) == []
    width, height, pixels = read_png(shot, rows=1100)
    assert (width, height) == (1280, 2000)
    counts = Counter(pixels)
    assert counts[INSTRUCTION_RGB] > 2000, "the score chart's instruction bars are not on screen"
    assert len(counts) > 50, "the page looks blank"
    interval = sum(
        n for rgb, n in counts.items() if max(abs(a - b) for a, b in zip(rgb, TOOLS_INTERVAL_RGB, strict=True)) <= 3
    )
    assert interval > 300, "the interval chart's toolCalling lines are not on screen"


# --- a small PNG reader (no imaging library needed) -----------------------------------------------------------------


def read_png(path: Path, rows: int) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Width, height and the RGB pixels of the first ``rows`` rows of an 8-bit, non-interlaced PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, bytearray(), b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, interlace) == (8, 0), "unexpected PNG format"
    assert color in (2, 6), "unexpected PNG colour type"
    channels = 4 if color == 6 else 3
    stride = width * channels
    raw = zlib.decompressobj().decompress(bytes(idat), (stride + 1) * rows)
    pixels: list[tuple[int, int, int]] = []
    previous = bytearray(stride)
    for y in range(min(rows, height)):
        line = _unfilter(raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
                         previous, channels)  # fmt: skip
        pixels.extend(zip(line[0::channels], line[1::channels], line[2::channels], strict=True))
        previous = line
    return width, height, pixels


def _unfilter(kind: int, line: bytearray, prior: bytearray, bpp: int) -> bytearray:
    if kind == 1:
        for i in range(bpp, len(line)):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif kind == 2:
        line = bytearray((a + b) & 0xFF for a, b in zip(line, prior, strict=True))
    elif kind == 3:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prior[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(len(line)):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prior[i], prior[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    return line
