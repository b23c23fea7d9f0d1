"""The run's backend and its one HTTP client: choosing the backend, creating it, listing its models."""

from __future__ import annotations

import difflib
import os
import urllib.request
from dataclasses import replace

import httpx

from tsuka_core.backends.apikey import key_or_none
from tsuka_core.backends.base import Backend, BackendConfig, check_options
from tsuka_core.backends.clientpool import spread_client
from tsuka_core.engine.serverprep import without_secrets
from tsuka_core.errors import UsageError
from tsuka_core.masking import mask_text
from tsuka_core.plugins.registry import Registry
from tsuka_core.urls import url_secrets

__all__ = ["choose_backend", "list_models", "make_backend", "make_client"]


def choose_backend(name: str | None, config: BackendConfig) -> str:
    """The backend to use: the named one, else ``openai`` when a base URL is set, else ``embedded``."""
    if name:
        return name
    if config.base_url or os.environ.get("OPENAI_BASE_URL"):
        return "openai"
    return "embedded"


def make_client(concurrency: int, timeout: float, proxy: str | None = None) -> httpx.AsyncClient:
    """The run's one HTTP client: stock httpx clients of a few kept connections each, one per few requests in flight.

    Every connection is kept and reused for the whole run, so a run at
    concurrency ``j`` opens about ``j`` connections (``backends.clientpool``).
    It takes the proxies of ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and
    ``NO_PROXY`` and the CA bundle of ``SSL_CERT_FILE`` from the environment;
    ``proxy``, when given, carries every request instead. A proxy URL httpx
    cannot use is a :class:`UsageError`. ``concurrency`` is a hint only: members
    are opened as requests need them.
    """
    del concurrency
    try:
        return spread_client(httpx.Timeout(timeout, connect=min(timeout, 30.0)), proxy)
    except (ValueError, ImportError, httpx.InvalidURL) as exc:  # a bad URL or scheme, SOCKS without socksio
        where = "--proxy" if proxy else "HTTP_PROXY, HTTPS_PROXY or ALL_PROXY"
        secrets = [s for url in [proxy, *urllib.request.getproxies().values()] if url for s in url_secrets(url)]
        raise UsageError(f"the proxy of {where} cannot be used: {mask_text(str(exc), secrets)}") from None


async def list_models(
    registry: Registry, name: str | None, config: BackendConfig, proxy: str | None = None
) -> tuple[str, list[str], list[str]]:
    """The backend's provider, the models it can reach (what ``tsuka run all`` would measure) and what was said.

    A listed name that holds a secret the run sends is left out, and that is said, as for ``tsuka run all``. A
    backend that runs model files (the embedded one) says each model's file, to serve it elsewhere.
    """
    async with make_client(1, config.timeout, proxy) as client:
        backend = make_backend(registry, choose_backend(name, config), config, client)
        try:
            listed = without_secrets(backend, await backend.list_models())
            files = getattr(backend, "model_file", None)
            where = [f"{name} is the file {files(name)}" for name in listed] if callable(files) else []
            return backend.provider, listed, [*backend.take_notes(), *where]
        finally:
            await backend.aclose()


def make_backend(registry: Registry, name: str, config: BackendConfig, client: httpx.AsyncClient) -> Backend:
    """Instantiate the backend called ``name``; an unknown name is a one-line error with a suggestion.

    Without an API key in ``config``, the key is read from the variable the
    backend declares in ``api_key_env``, if it declares one and it is set.
    """
    cls = registry.backend(name)
    if cls is None:
        close = difflib.get_close_matches(name, list(registry.backends), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"unknown backend {name!r}{hint} ('tsuka backends' lists them){registry.missing_hint()}")
    check_options(cls, config.options)
    if config.api_key is None and cls.api_key_env:
        key = key_or_none(cls.api_key_env)
        config = replace(config, api_key=key, api_key_from=cls.api_key_env if key else config.api_key_from)
    return cls(config, client)
