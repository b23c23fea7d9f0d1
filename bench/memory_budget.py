"""Peak memory of ``tsuka run`` when every answer is large: the memory budget against the concurrency.

A loopback server (in a thread of this script, standard library only) answers
every chat completion with the same answer of ``--mb`` megabytes of text, at
once. A suite of ``-n`` one-step tests (``contains`` and ``word_count``
checks, both really evaluated) is run as a user runs it, one ``tsuka``
process per run, at each ``-j``, and the peak RSS of the process is printed;
with ``--tree`` given several times, each source tree is measured in turn and
the peaks are printed side by side with the ratio to the first tree.

Usage::

    python bench/memory_budget.py                                # 30 MB answers, -j 4 and 16
    python bench/memory_budget.py --tree /tmp/old --tree .       # two source trees side by side
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import run_process

TARGET_MB = 500
"""The most a run at -j 16 with 30 MB answers may take (issue 23)."""


def answer_body(megabytes: float) -> bytes:
    """A chat completion whose content is ``megabytes`` MB of words (each answer passes ``contains: fisherman``)."""
    words = "the old fisherman walks beside the river every morning "
    content = words * max(1, int(megabytes * 1_000_000) // len(words))
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    data = {"id": "x", "object": "chat.completion", "model": "big", "choices": [choice]}
    data["usage"] = {"prompt_tokens": 10, "completion_tokens": len(content) // 4}
    return json.dumps(data).encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    body = b""

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.endswith("/models"):
            self._send(200, b'{"object":"list","data":[{"id":"big","object":"model"}]}')
        else:
            self._send(404, b'{"error":{"message":"no such path"}}')

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self._send(200, self.body)


def write_suite(folder: Path, count: int) -> Path:
    """``count`` one-step tests that each answer passes."""
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        test = {
            "name": f"big_{index:03d}",
            "category": "instruction",
            "prompt": f"Write at length ({index}).",
            "checks": [{"type": "contains", "value": "fisherman"}, {"type": "not_contains", "value": "whale"}],
        }
        (folder / f"big_{index:03d}.json").write_text(json.dumps(test))
    return folder


def trees(given: Sequence[Path] | None) -> dict[str, dict[str, str]]:
    """The child environment of each tree, by folder name ('' for the installed tsuka)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TSUKA_PROFILES")}
    if not given:
        return {"": env}
    return {t.resolve().name: dict(env, PYTHONPATH=str(t.resolve())) for t in given}


def main(argv: Sequence[str] | None = None) -> int:
    """Measure each concurrency for each tree; exit 1 when -j 16 passes the target in the last tree."""
    parser = argparse.ArgumentParser(prog="bench/memory_budget.py", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mb", type=float, default=30.0, help="megabytes per answer (default 30)")
    parser.add_argument("-n", type=int, default=32, help="tests in the suite (default 32)")
    parser.add_argument("-j", type=lambda t: [int(x) for x in t.split(",")], default=[4, 16], help="default 4,16")
    parser.add_argument("--tree", type=Path, action="append", help="a source tree to measure; repeat to compare")
    args = parser.parse_args(argv)
    _Handler.body = answer_body(args.mb)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    tmp = Path(tempfile.mkdtemp(prefix="tsuka-memory-"))
    envs = trees(args.tree)
    tsuka = str(Path(sys.executable).parent / "tsuka") if shutil.which("tsuka") is None else "tsuka"
    suite = write_suite(tmp / "suite", args.n)
    print(f"{len(_Handler.body) / 1e6:.1f} MB answers, {args.n} tests; peak RSS in MB")
    print(f"{'-j':>4}" + "".join(f"{name or 'tsuka':>16}" for name in envs) + "".join(f"{'x':>8}" for _ in envs)[8:])
    last: float = 0.0
    try:
        for j in args.j:
            peaks = []
            for env in envs.values():
                shutil.rmtree(tmp / ".tsuka", ignore_errors=True)
                argv_ = [tsuka, "run", "big", "-e", "none", "--base-url", url, "--suite", str(suite), "-j", str(j)]
                argv_ += ["--profiles", str(tmp / "p.json")]
                sample = run_process(argv_, env=env, cwd=tmp, stderr=tmp / "err.txt", timeout=900)
                if sample.returncode != 0:
                    tail = (tmp / "err.txt").read_text(errors="replace").strip().splitlines()[-1:]
                    print(f"run failed ({sample.returncode}): {' '.join(tail)}")
                    return 1
                peaks.append(sample.rss_mb)
            ratios = "".join(f"{p / peaks[0]:8.2f}" for p in peaks[1:])
            print(f"{j:>4}" + "".join(f"{p:16.0f}" for p in peaks) + ratios, flush=True)
            last = peaks[-1] if j == 16 else last
    finally:
        server.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    if 16 in args.j and args.mb >= 30:
        print(f"target: peak RSS <= {TARGET_MB} MB at -j 16: {'PASS' if last <= TARGET_MB else 'MISS'} ({last:.0f} MB)")
        return 0 if last <= TARGET_MB else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
