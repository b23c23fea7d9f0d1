"""The speed figures' formulas name a server's timings as the backend that read them calls them."""

from __future__ import annotations

from tsuka_core.backends.base import ChatResponse
from tsuka_core.backends.embedded import EmbeddedBackend
from tsuka_core.backends.llama_runtime import LLAMA_CPP_TIMINGS
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.engine.speed_figures import figures_of
from tsuka_core.suite.model import Suite

TIMED = [
    ChatResponse(
        text="ok",
        completion_tokens=n,
        duration=1.0,
        generation_ms=100.0 * n,
        generated_tokens=n,
        prompt_ms=20.0,
        prompt_processed=40,
        first_token_ms=20.0,
        speed_source="server",
    )
    for n in (5, 10, 20)
]
OLLAMA = {"generated_tokens": "eval_count", "generation_ms": "eval_duration / 10^6"}


def test_a_server_timed_figure_names_the_servers_own_fields_or_else_the_answers() -> None:
    llama = figures_of(TIMED, LLAMA_CPP_TIMINGS)
    assert llama["decodeTokensPerSecond"]["formula"] == "timings.predicted_n / timings.predicted_ms"
    assert llama["prefillTokensPerSecond"]["formula"] == "timings.prompt_n / timings.prompt_ms"
    assert llama["timeToFirstTokenMs"]["formula"].startswith("timings.prompt_ms (the server's prompt time")
    ollama = figures_of(TIMED, OLLAMA)
    assert ollama["decodeTokensPerSecond"]["formula"] == "eval_count / eval_duration / 10^6"
    assert ollama["prefillTokensPerSecond"]["formula"] == "prompt_processed / prompt_ms"  # not named: its own
    unnamed = figures_of(TIMED)
    assert unnamed["decodeTokensPerSecond"]["formula"] == "generated_tokens / generation_ms"
    assert unnamed["decodeTokensPerSecond"]["p50"] == llama["decodeTokensPerSecond"]["p50"] == 10.0


def test_the_backends_that_read_llama_cpps_timings_say_so() -> None:
    assert OpenAIBackend.server_timing_names == EmbeddedBackend.server_timing_names == LLAMA_CPP_TIMINGS


def test_a_level_measured_by_a_backend_gets_its_timing_names_in_the_record(suite: Suite) -> None:
    """Through the sweep: the backend's server_timing_names reach the level's speed figures."""
    import asyncio

    import httpx

    from tsuka_core.backends.base import Backend, BackendConfig, ChatRequest
    from tsuka_core.engine.sweep import ModelSweep, sweep_models

    class Timed(Backend):
        name = "timed"
        server_timing_names = OLLAMA

        async def list_models(self) -> list[str]:
            return ["m"]

        async def complete(self, request: ChatRequest) -> ChatResponse:
            return TIMED[0]

    class Quiet:
        def level_started(self, *args: object) -> None: ...
        def test_done(self, *args: object) -> None: ...
        def note(self, message: str) -> None: ...

    async def keep(swept: ModelSweep) -> None: ...

    async def main() -> list[ModelSweep]:
        return await sweep_models(
            Timed(BackendConfig(), httpx.AsyncClient()), suite, ["m"], ("none",), observer=Quiet(), on_model=keep
        )

    (swept,) = asyncio.run(main())
    figures = swept.levels[0].measured["speedFigures"]
    assert figures["decodeTokensPerSecond"]["formula"] == "eval_count / eval_duration / 10^6"
