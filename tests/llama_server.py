"""Serve a GGUF model over llama.cpp's OpenAI-compatible HTTP API (xllamacpp's server) on 127.0.0.1, for tests.

usage: python tests/llama_server.py MODEL.gguf [--alias NAME] [--tool-template]

Prints ``READY http://127.0.0.1:PORT`` (a free port picked by the server) once
the model is loaded, serves until SIGTERM or SIGINT, then stops cleanly.
``--tool-template`` replaces the model's chat template with a ChatML one that
renders ``tools`` and lets llama.cpp parse ``<tool_call>`` output into
``tool_calls`` (SmolLM2's own template has no tool support, so the server
ignores ``tools``).
"""

from __future__ import annotations

import argparse
import signal
import threading

import xllamacpp  # type: ignore[import-untyped]

TOOL_TEMPLATE = r"""{%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] + '\n\n' }}{%- endif %}
{{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" }}
{{- "You are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
{%- for tool in tools %}{{- "\n" }}{{- tool | tojson }}{%- endfor %}
{{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments " }}
{{- "within <tool_call></tool_call> XML tags:\n<tool_call>\n" }}
{{- '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}
{%- elif messages[0]['role'] == 'system' %}
{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == "user" or (message.role == "system" and not loop.first) %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- elif message.role == "assistant" %}
{{- '<|im_start|>assistant' }}
{%- if message.content %}{{- '\n' + message.content }}{%- endif %}
{%- for tool_call in message.tool_calls or [] %}
{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
{{- '\n<tool_call>\n{"name": "' + tool_call.name + '", "arguments": ' }}
{{- tool_call.arguments | tojson }}{{- '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == "tool" %}
{{- '<|im_start|>tool\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--alias", default="smollm2")
    parser.add_argument("--tool-template", action="store_true")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.n_ctx = 4096
    params.n_parallel = 1
    if args.threads:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.verbosity = 0
    if args.tool_template:
        params.chat_template = TOOL_TEMPLATE
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    server = xllamacpp.Server(params)
    print(f"READY {server.listening_address}", flush=True)
    stop.wait()
    del server


if __name__ == "__main__":
    main()
