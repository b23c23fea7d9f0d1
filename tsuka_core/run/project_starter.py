"""A starter project file: commented defaults, and an endpoint for a server asked what it serves."""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx

from tsuka_core.errors import UsageError

__all__ = ["STARTER", "Probed", "probe", "starter"]

STARTER = """\
# tsuka project file: what 'tsuka run' measures and how. Command-line flags win over it.
# Every key is optional; 'tsuka schema --config' prints its JSON Schema, 'tsuka run --show-config'
# the settings a run would use. API keys never live here: name the variable holding one (api_key_env).

# suite = "benchmarks"            # suite folder (default: the installed suite)
# profiles = "models_profile.json"
# efforts = ["none", "low", "medium", "xhigh"]
# concurrency = 4                 # requests in flight (default: the server's slots, else 4)
# timeout = 300.0                 # seconds per request
# retries = 3
# repeats = 1
# temperature = 0.0
# max_tokens = 2048
# history = true
# junit = "tsuka-junit.xml"
# json_file = "tsuka.json"
# min_tier = "medium"
{endpoints}"""

EXAMPLE_ENDPOINT = """
# One [[endpoints]] table per server; 'tsuka run' measures them all at once.
# [[endpoints]]
# name = "local"
# backend = "openai"
# base_url = "http://127.0.0.1:8080/v1"
# models = "all"                  # or a list: ["qwen3:8b"]
# api_key_env = "OPENAI_API_KEY"  # the NAME of the variable, never the key
"""


@dataclass(frozen=True)
class Probed:
    """What a server said it is: its kind, its OpenAI-compatible base URL and the models it lists."""

    kind: str
    base_url: str
    models: list[str]


def probe(url: str, timeout: float = 10.0) -> Probed:
    """Ask the server at ``url`` what it is (GET /props: llama.cpp, GET /api/version: Ollama) and its models."""

    root = url.rstrip("/").removesuffix("/v1")
    try:
        with httpx.Client(timeout=timeout, trust_env=True) as client:
            kind = "OpenAI-compatible"
            if _ok(client, f"{root}/props"):
                kind = "llama.cpp"
            elif _ok(client, f"{root}/api/version"):
                kind = "Ollama"
            response = client.get(f"{root}/v1/models")
            listed = response.json().get("data", []) if response.status_code == 200 else []
    except (httpx.HTTPError, json.JSONDecodeError, AttributeError) as exc:
        raise UsageError(f"--probe {url}: the server could not be asked: {exc}") from None
    models = [str(item["id"]) for item in listed if isinstance(item, dict) and "id" in item]
    return Probed(kind, f"{root}/v1", models)


def _ok(client: httpx.Client, url: str) -> bool:
    return client.get(url).status_code == 200


def starter(probed: Probed | None, name: str) -> str:
    """The text of a starter file, with an endpoint for the probed server when there is one."""
    if probed is None:
        return STARTER.format(endpoints=EXAMPLE_ENDPOINT)
    models = json.dumps(probed.models) if probed.models else '"all"'
    endpoint = (
        f"\n# {probed.kind} server, as 'tsuka init --probe' found it.\n"
        f'[[endpoints]]\nname = "{name}"\nbackend = "openai"\nbase_url = "{probed.base_url}"\nmodels = {models}\n'
        '# api_key_env = "OPENAI_API_KEY"  # the NAME of the variable holding a key, never the key\n'
    )
    return STARTER.format(endpoints=endpoint)
