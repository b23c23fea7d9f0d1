"""The serve command: llama.cpp's HTTP server from the xllamacpp wheel, serving a model as the embedded backend does."""

from __future__ import annotations

import os
import shlex
import signal
import threading
from typing import Any

import click

from tsuka_core.cli.run_cmd import finite
from tsuka_core.errors import UsageError
from tsuka_core.run.config import ServerSettings

__all__: list[str] = []

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@click.command("serve")
@click.argument("model", required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8080, show_default=True, type=click.IntRange(0, 65535), help="Port; 0 picks a free one."
)
@click.option("--alias", help="The name /v1/models lists and profiles are stored under (default: the file's stem).")
@click.option("--model-path", type=click.Path(dir_okay=False), help="A GGUF file to serve (or give its path as MODEL).")
@click.option(
    "--option",
    "backend_option",
    multiple=True,
    metavar="KEY=VALUE",
    help="The embedded backend's options (threads, parallel, n_ctx, repeat_penalty, chat_template).",
)
@click.option("--temperature", type=float, callback=finite, help="Sampling temperature (default 0, as embedded).")
@click.option("--seed", type=int, help="Sampling seed (default 42, as embedded).")
def serve(**values: Any) -> None:
    """Serve MODEL over llama.cpp's OpenAI-compatible HTTP API, exactly as the embedded backend runs it.

    \b
    MODEL is a name 'tsuka models' lists with no server configured (default: the
    first, the bundled SmolLM2) or a .gguf path. The server is the one the
    xllamacpp wheel holds ('pip install tsuka[embedded]'); it gets the embedded
    backend's settings: the same chat template (a tool template where the
    model's own renders no tools), pinned sampling, threads, slots and context,
    no prompt cache. It prints the llama-server command line with the same
    flags, so a llama.cpp build measures the same thing, and the 'tsuka run'
    line to measure it. Ctrl-C stops it.

    \b
      tsuka serve                                    # the bundled SmolLM2 on 127.0.0.1:8080
      tsuka serve gemma-3-270m-q4_k_m --port 8081    # a model of TSUKA_MODELS_DIR
      tsuka serve ./model.gguf --option threads=1
    """
    import asyncio

    import httpx

    from tsuka_core.backends.embedded import EmbeddedBackend
    from tsuka_core.backends.embedded_serve import PublicServer, start_public

    host = str(values["host"])
    _check_port(host, int(values["port"]))
    if host not in LOOPBACK:
        click.echo(f"note: listening on {host}: anyone who can reach it may use the model (there is no key)", err=True)
    config = ServerSettings.of(values).config()
    backend = EmbeddedBackend(config, httpx.AsyncClient())
    names = asyncio.run(backend.list_models()) if values.get("model") is None else [str(values["model"])]
    if not names:
        raise UsageError("no model to serve: give MODEL")
    path = backend.model_file(names[0])
    served: PublicServer = start_public(backend, path, host, int(values["port"]), values.get("alias"))
    stop = _stop_on_a_signal()  # from now on Ctrl-C is the way to stop serving, not an interruption
    for note in served.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"serving {served.alias} at {served.url}/v1 (llama.cpp's server, from xllamacpp)")
    click.echo(f"  the same as: {shlex.join(served.llama_server)}")
    click.echo(f"  measure it:  {shlex.join(served.measure)}")
    click.echo("Ctrl-C stops it.")
    while not stop.wait(0.5):
        pass
    served.close()
    click.echo("stopped", err=True)


def _check_port(host: str, port: int) -> None:
    """A one-line error when ``host:port`` cannot be listened on (llama.cpp's server would wait forever)."""
    import socket

    if port == 0:
        return
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as error:
        raise UsageError(
            f"--port {port}: cannot listen on {host}:{port} ({os.strerror(error.errno) if error.errno else error}); "
            "pick another port, or 0 for a free one"
        ) from None


def _stop_on_a_signal() -> threading.Event:
    """An event SIGINT and SIGTERM set (instead of interrupting)."""
    stop = threading.Event()
    for kind in (signal.SIGINT, signal.SIGTERM):
        signal.signal(kind, lambda *_: stop.set())
    return stop
