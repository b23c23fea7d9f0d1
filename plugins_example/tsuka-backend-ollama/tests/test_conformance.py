"""The ollama backend passes tsuka's backend conformance suite (docs/contract.md) against a scripted Ollama."""

from __future__ import annotations

from typing import Any

import pytest
from tsuka_backend_ollama.backend import OllamaBackend

from tsuka_core.testing import CASES, BackendKit, Reply, WireAnswer, check_backend


# docs:start conformance-kit
class OllamaKit(BackendKit):
    """How Ollama's native API speaks: ``/api/chat``, counts in ``eval_count``, errors as ``{"error": "..."}``."""

    backend = OllamaBackend
    chat_path = "/api/chat"

    def answer(self, answer: WireAnswer) -> Any:
        calls = [{"id": i, "function": {"name": n, "arguments": dict(a)}} for i, n, a in answer.tool_calls]
        body: dict[str, Any] = {
            "model": self.model,
            "message": {"role": "assistant", "content": answer.text, "tool_calls": calls},
            "done": True,
            "done_reason": answer.finish_reason,
        }
        if answer.completion_tokens is not None:
            body.update(prompt_eval_count=answer.prompt_tokens, eval_count=answer.completion_tokens)
        return body

    def error(self, status: int, message: str) -> Any:
        return {"error": message}

    def effort_refusal(self, effort: str) -> Reply:
        return Reply(self.error(400, f'"{self.model}" does not support thinking'), 400)


@pytest.mark.parametrize("case", list(CASES))
def test_the_ollama_backend_keeps_the_backend_contract(case: str) -> None:
    [result] = check_backend(OllamaKit(), [case])
    assert result.passed, result.detail


# docs:end conformance-kit
