"""tsuka report: one static page, every model answer escaped, checked in a real headless Chromium."""

from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
import zlib
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from answerers import by_effort, by_model, perfect, tool_shy
from history_helpers import invoke
from loopback import LoopbackServer, Reply

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
"""The instruction colour of the score chart (htmlreport_css.CATEGORY_COLORS)."""


def evil(body: dict[str, Any], n: int) -> Reply:
    """Right answers with markup that would run if it were not escaped, in the text and in the reasoning."""
    reply = perfect(body, n)
    if reply.content is None:
        return reply
    return Reply.text(f"{reply.content} {INJECTED}", reasoning=f"thinking {INJECTED}")


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
    parser = Elements()
    parser.feed(page.read_text(encoding="utf-8"))
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
