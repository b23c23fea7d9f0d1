"""Serve a GGUF model over llama.cpp's OpenAI-compatible HTTP API (xllamacpp's server) on 127.0.0.1, for tests.

usage: python tests/llama_server.py [-m] MODEL.gguf [--alias NAME] [--tool-template | --chat-template-file FILE]
       [--port PORT] [--jinja]
       [-t THREADS] [-np SLOTS] [-c CTX] [-n TOKENS] [--no-cache-prompt] [-fa on|off|auto]
       [--temp T] [--top-k K] [--seed S] [--repeat-penalty P]

The flags are ``llama-server``'s, with the same meaning (``-c`` is shared by the
``-np`` slots), so a test run here is reproduced by ``llama-server`` with the
same flags. Prints ``READY http://127.0.0.1:PORT`` (a free port picked by the
server) once the model is loaded, serves until SIGTERM or SIGINT, then stops
cleanly. ``--tool-template`` is ``--chat-template-file`` with tsuka's ChatML
tool template (``tsuka_core/backends/templates/chatml-tools.jinja``, the one the
embedded backend serves SmolLM2 with), which renders ``tools`` and lets
llama.cpp parse ``<tool_call>`` output into ``tool_calls`` (SmolLM2's own
template has no tool support, so the server ignores ``tools``).
"""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path

import xllamacpp  # type: ignore[import-untyped]

TOOL_TEMPLATE = Path(__file__).resolve().parents[1] / "tsuka_core" / "backends" / "templates" / "chatml-tools.jinja"


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?")
    parser.add_argument("-m", "--model", dest="model_file", help="the model, as llama-server takes it")
    parser.add_argument("--alias", default="smollm2")
    parser.add_argument("--host", default="127.0.0.1", choices=("127.0.0.1",), help="loopback only, for tests")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--jinja", action="store_true", help="always on: accepted as llama-server takes it")
    template = parser.add_mutually_exclusive_group()
    template.add_argument("--tool-template", action="store_true")
    template.add_argument("--chat-template-file", type=Path)
    parser.add_argument("-t", "--threads", type=int, default=0)
    parser.add_argument("-np", "--parallel", type=int, default=1)
    parser.add_argument("-c", "--ctx-size", type=int, default=4096)
    parser.add_argument("-n", "--n-predict", type=int, default=-1)
    parser.add_argument("--no-cache-prompt", action="store_true")
    parser.add_argument("-fa", "--flash-attn", choices=("on", "off", "auto"), default="auto")
    parser.add_argument("--temp", type=float)
    parser.add_argument("--top-k", type=int)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--repeat-penalty", type=float)
    args = parser.parse_args()
    args.model = args.model_file or args.model
    if args.model is None:
        parser.error("give the model (MODEL or -m MODEL)")
    return args


def server_params(args: argparse.Namespace) -> xllamacpp.CommonParams:
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.n_ctx = args.ctx_size
    params.n_predict = args.n_predict
    params.n_parallel = args.parallel
    if args.threads:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    params.cache_prompt = not args.no_cache_prompt
    kinds = xllamacpp.llama_flash_attn_type
    params.flash_attn_type = {
        "on": kinds.LLAMA_FLASH_ATTN_TYPE_ENABLED,
        "off": kinds.LLAMA_FLASH_ATTN_TYPE_DISABLED,
        "auto": kinds.LLAMA_FLASH_ATTN_TYPE_AUTO,
    }[args.flash_attn]
    params.use_jinja = True
    template = TOOL_TEMPLATE if args.tool_template else args.chat_template_file
    if template is not None:
        params.chat_template = template.read_text(encoding="utf-8")
    for flag, field in (("temp", "temp"), ("top_k", "top_k"), ("seed", "seed"), ("repeat_penalty", "penalty_repeat")):
        if getattr(args, flag) is not None:
            setattr(params.sampling, field, getattr(args, flag))
    params.hostnames = [args.host]
    params.port = args.port
    params.verbosity = 0
    return params


def main() -> None:
    params = server_params(arguments())
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    server = xllamacpp.Server(params)
    print(f"READY {server.listening_address}", flush=True)
    stop.wait()
    del server


if __name__ == "__main__":
    main()
