"""The backend contract: how tsuka asks a model for one answer, whatever serves it."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from tsuka_core.errors import BackendError, RequestError
from tsuka_core.judge.answer import ToolCall
from tsuka_core.masking import secret_option
from tsuka_core.record.facts import ServerSaid
from tsuka_core.terms import Effort
from tsuka_core.urls import url_secrets

if TYPE_CHECKING:
    import httpx

__all__ = [
    "Backend",
    "BackendConfig",
    "ChatRequest",
    "ChatResponse",
    "EffortRejected",
    "ServerFacts",
    "SpeedSource",
    "check_options",
    "estimate_tokens",
    "run_seed",
]


SpeedSource = Literal["server", "stream", "wall"]
"""Where an answer's generation time came from: the server's own timings, the first and last streamed
token, or the wall time of the whole request (queueing at the server included)."""


class EffortRejected(RequestError):  # noqa: N818  (a condition, not a failure of tsuka)
    """The server refused the effort parameter: the model is measured once without it."""


def run_seed(seed: int | None, request: ChatRequest) -> int | None:
    """The seed for ``request``: ``seed`` for a test's first run, ``seed + K - 1`` for run K; None stays None."""
    return None if seed is None else seed + request.repeat - 1


def estimate_tokens(text: str) -> int:
    """A token count estimated from text length (characters / 3.5), for servers that send no usage."""
    return round(len(text) / 3.5)


@dataclass(frozen=True)
class BackendConfig:
    """What the user configured for a backend; each backend reads the fields it needs."""

    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_from: str | None = None
    """Where ``api_key`` was read from (a variable's name), said when a server refuses the key."""
    model_path: str | None = None
    """A model file, for backends that run a model in-process."""
    timeout: float = 300.0
    """Seconds one request may take."""
    retries: int = 3
    """How many times a retryable failure is tried again."""
    max_tokens: int | None = None
    """Completion token limit per request; ``None`` means the backend's own default."""
    temperature: float | None = None
    seed: int | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    """Backend-specific ``--option KEY=VALUE`` pairs."""


@dataclass(frozen=True)
class ChatRequest:
    """One request: a conversation in OpenAI message format, the tools offered, and the effort."""

    model: str
    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]] = ()
    effort: Effort | None = None
    """The level to apply, or ``None`` to send no effort parameter at all."""
    repeat: int = 1
    """Which run of its test this request belongs to (``--repeats``); a backend that seeds its sampling
    uses seed + repeat - 1, so that repeated runs can differ while each stays reproducible."""


@dataclass(frozen=True)
class ChatResponse:
    """One answer, normalised: text without reasoning, tool calls, usage and duration."""

    text: str
    """Message content with reasoning removed and white space stripped."""
    tool_calls: tuple[ToolCall, ...] = ()
    content: str | None = None
    """The message content exactly as received."""
    reasoning: str | None = None
    """Separate reasoning the server sent (never checked, never sent back)."""
    prompt_tokens: int | None = None
    """Tokens of the prompt, as the server counted them (``usage.prompt_tokens``); None when it sent none."""
    completion_tokens: int = 0
    """Tokens of the answer, reasoning included (``usage.completion_tokens``), or estimated from the text
    (then ``usage_estimated``)."""
    usage_estimated: bool = False
    """True when the server sent no usage and ``completion_tokens`` was estimated from text."""
    duration: float = 0.0
    """Seconds the request took, retries excluded."""
    generation_ms: float | None = None
    """Milliseconds spent generating ``generated_tokens``, as the server reported it (llama.cpp
    ``timings.predicted_ms``, Ollama ``eval_duration``) or from the first to the last streamed token;
    None when unknown (``duration`` is then all there is)."""
    generated_tokens: int | None = None
    """Tokens generated in ``generation_ms`` (llama.cpp ``timings.predicted_n``, Ollama ``eval_count``)."""
    prompt_ms: float | None = None
    """Milliseconds the server spent processing the prompt (llama.cpp ``timings.prompt_ms``,
    Ollama ``prompt_eval_duration``); None when not reported."""
    prompt_processed: int | None = None
    """Prompt tokens processed in ``prompt_ms``, those served from the server's prompt cache excluded
    (llama.cpp ``timings.prompt_n``, Ollama ``prompt_eval_count``)."""
    first_token_ms: float | None = None
    """Milliseconds from the request to its first token where known: measured on a stream, or the
    server's prompt time (which leaves out time queued for a free slot)."""
    speed_source: SpeedSource = "wall"
    """Where ``generation_ms`` came from; ``wall`` when it is None."""
    reasoning_tokens: int | None = None
    """Completion tokens spent reasoning, where the server counts them apart
    (``usage.completion_tokens_details.reasoning_tokens``)."""
    finish_reason: str | None = None
    """Why generation stopped as the server said it (``stop``, ``length``, ``tool_calls``); None when not sent."""
    token_limit: int | None = None
    """The completion token limit the request sent (``max_tokens``); None when unknown. An answer cut
    with fewer tokens than that was cut by the server's context size (or its own cap), not by it."""
    rendered_prompt: str | None = None
    """The prompt text the model read: the request as its chat template rendered it, where the backend knows it
    (the embedded model); None when the server renders it out of sight."""

    @property
    def cut_at_limit(self) -> bool:
        """True when the answer stopped at the token limit (``finish_reason`` ``length``)."""
        return self.finish_reason == "length"


@dataclass(frozen=True)
class ServerFacts:
    """What a server said about itself and a model; ``None`` where it said nothing."""

    kind: str | None = None
    """The server software: ``llama.cpp``, ``ollama``..."""
    version: str | None = None
    """Its version or build."""
    model_file: str | None = None
    """The model file it loaded, or the model's digest."""
    slots: int | None = None
    """How many requests it serves at once (llama.cpp ``total_slots``)."""
    supports_tools: bool | None = None
    """Whether the model's chat template handles tools."""
    supports_parallel_tool_calls: bool | None = None
    supports_reasoning_effort: bool | None = None
    """Whether the model's chat template reads ``reasoning_effort``."""

    def as_profile(self) -> dict[str, Any]:
        """The facts given, under camelCase names, as profiles store them (``server``, ``record.facts.ServerSaid``);
        a fact of the wrong kind (a negative slot count) is left out."""
        given = {f.name: value for f in fields(self) if (value := getattr(self, f.name)) is not None}
        return ServerSaid.model_validate(given).stored()

    @classmethod
    def from_profile(cls, stored: Mapping[str, Any] | ServerSaid | None) -> ServerFacts:
        """The facts a record's ``server`` holds (:meth:`as_profile`'s form); a value of the wrong kind is left out."""
        said = stored if isinstance(stored, ServerSaid) else ServerSaid.parse(dict(stored or {}))
        return cls(**{f.name: getattr(said, f.name) for f in fields(cls)})

    @property
    def identity(self) -> dict[str, str]:
        """What says which model answered: the server's kind, build and model file (those it gave)."""
        return {k: v for k, v in self.as_profile().items() if k in ("kind", "version", "modelFile")}


class Backend:
    """Base of every backend: a name, how to reach models, and one call that returns an answer.

    Subclasses set ``name`` (what ``--backend`` takes), ``env_vars`` (the
    environment variables they read, for ``tsuka backends``) and
    ``applies_effort`` (False when efforts can never be applied), and implement
    :meth:`list_models` and :meth:`complete`. The engine creates one backend per
    run with the user's :class:`BackendConfig` and the run's shared
    ``httpx.AsyncClient``; backends that speak HTTP use that client, so tests can
    give it an ``httpx.MockTransport``.
    """

    name: ClassVar[str]
    env_vars: ClassVar[tuple[str, ...]] = ()
    api_key_env: ClassVar[str | None] = None
    """The environment variable holding this backend's API key (list it in ``env_vars`` too). When the user
    gives no key (``--api-key-env``, a project file's ``api_key_env``), the engine fills ``config.api_key``
    from it before creating the backend; None: the backend takes no key."""
    option_help: ClassVar[Mapping[str, str] | None] = None
    """The ``--option KEY=VALUE`` keys this backend reads, each with a one-line description (``tsuka backends``
    lists them). Any other key is refused before the backend is created, with a did-you-mean. None means not
    declared: since 0.3 such a backend takes no ``--option`` at all (0.2 took any key, with a warning)."""
    applies_effort: ClassVar[bool] = True
    lists_every_model: ClassVar[bool] = False
    """True when :meth:`list_models` names every model the backend answers for, so that a name it does not
    list is refused before any request (a server that answers any name with its one model is caught)."""
    server_timing_names: ClassVar[Mapping[str, str] | None] = None
    """What the server calls the timings a server-timed answer gives (``speed_source="server"``), by the
    :class:`ChatResponse` field they fill: ``generated_tokens``, ``generation_ms``, ``prompt_processed``,
    ``prompt_ms`` (llama.cpp: ``timings.predicted_n``, ...). The profile's speed-figure formulas name them;
    a field left out is named by its ``ChatResponse`` name."""
    streams: ClassVar[bool] = False
    """Deprecated in 0.3.0, removed in 0.4.0: read by nothing. Each answer's ``speed_source`` (``stream``,
    ``server`` or wall time) says how it was timed (docs/measurement.md)."""

    def __init__(self, config: BackendConfig, client: httpx.AsyncClient) -> None:
        self.config = config
        self.client = client

    def take_notes(self, model: str | None = None) -> list[str]:
        """What arose while answering that the user must be told (a server that refused streaming, say), once.

        The sweep asks after each level of ``model``, and gets the notes added for no model in particular and
        those added for ``model``; the notes of another model measured at the same time stay for it. Without
        ``model``: every note. A backend adds to them with :meth:`add_note`.
        """
        pending: list[tuple[str | None, str]] = self.__dict__.get("_pending_notes", [])
        mine = [(who, message) for who, message in pending if model is None or who in (None, model)]
        self.__dict__["_pending_notes"] = [item for item in pending if item not in mine]
        return [message for _, message in mine]

    def add_note(self, message: str, model: str | None = None) -> None:
        """Keep ``message`` for :meth:`take_notes`, about ``model`` when given (a subclass need not call
        ``__init__`` for this)."""
        self.__dict__.setdefault("_pending_notes", []).append((model, message))

    @classmethod
    def description(cls) -> str:
        """The first line of the class docstring."""
        doc = inspect.getdoc(cls) or ""
        return doc.splitlines()[0] if doc else ""

    @property
    def provider(self) -> str:
        """What profiles record as ``provider``; here the backend's name.

        A backend that talks to a server overrides it to return the server's
        URL without credentials (:func:`~tsuka_core.redact_url`), as ``openai``
        and ``ollama`` do, so profiles of two servers stay apart.
        """
        return self.name

    def effort_params(self, effort: Effort) -> dict[str, Any]:
        """The request fields that apply ``effort`` (the OpenAI backend: ``reasoning_effort``)."""
        del effort
        return {}

    def repeats_note(self) -> str | None:
        """Why repeated runs would all give the same answer (greedy sampling), or None; said once when N > 1.

        The default looks at ``--temperature``: 0 samples greedily, whatever the seed.
        """
        if self.config.temperature == 0:
            return "--temperature 0 samples greedily, so every run gives the same answer"
        return None

    async def effort_ignored(self, model: str) -> str | None:
        """Why the server would accept the effort parameter for ``model`` but ignore it; None when it applies it.

        Asked once per model before its sweep. A reason makes the sweep measure
        the model once without efforts, stored as ``none`` with
        ``effortApplied: false``, and the run prints the reason. The default
        knows of no such server and returns None.
        """
        del model
        return None

    def profile_extra(self, model: str, effort: Effort | None) -> dict[str, Any]:
        """Facts to store with the profile of ``model`` at ``effort`` (``None``: not applied); default none.

        Keys must not be the standard profile fields TSUKA writes. The embedded backend
        records its pinned sampling here.
        """
        del model, effort
        return {}

    def secrets(self) -> tuple[str, ...]:
        """Every secret this backend sends or was given, for masking wherever a server echoes it (docs/reliability.md).

        The default: the configured API key, the credentials of the base URL (password, the Basic token made
        of them, secret query values) and every option value that is a secret by its name or its looks. A
        backend that reads a key or a credential from elsewhere adds it here.
        """
        options = [str(v) for k, v in self.config.options.items() if secret_option(str(k), v)]
        from_url = url_secrets(self.config.base_url) if self.config.base_url else []
        return tuple(s for s in (self.config.api_key, *from_url, *options) if s)

    async def server_facts(self, model: str) -> ServerFacts:
        """What the server says about itself and ``model``, asked once per model before its sweep; default nothing.

        Profiles store it as ``server``; ``slots`` sets the default concurrency and
        ``supports_tools`` False is said before the tool tests.
        """
        del model
        return ServerFacts()

    async def list_models(self) -> list[str]:
        """Every model this backend can reach, for ``tsuka run all`` and ``tsuka models``."""
        raise NotImplementedError

    def takes_unlisted(self, model: str) -> bool:
        """True when ``model`` reaches a model that :meth:`list_models` need not name (a file path, say); default False.

        Such a name is not checked against the list before a run.
        """
        del model
        return False

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one request and return the normalised answer.

        Raises :class:`~tsuka_core.RequestError` when the request fails for good
        (after the backend's retries) and :class:`EffortRejected` when the server
        refuses the effort parameter.
        """
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release what the backend holds (a loaded model, for instance); the engine closes the client."""


def check_options(cls: type[Backend], options: Mapping[str, str]) -> None:
    """Refuse an option ``cls`` does not declare (:attr:`Backend.option_help`): one line with a did-you-mean.

    A backend that declares none (``option_help`` None) takes no option: since 0.3 every key is refused, naming
    what the backend's author must declare.
    """
    declared = cls.option_help
    if declared is None:
        if options:
            given = ", ".join(repr(key[:60]) for key in options)
            raise BackendError(
                f"backend {cls.name!r} ({cls.__module__}) declares no options (Backend.option_help), so it takes "
                f"no --option (given: {given}); its author declares the keys it reads, as tsuka 0.3 requires"
            )
        return
    for key in options:
        if key not in declared:
            close = difflib.get_close_matches(key, list(declared), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            reads = ", ".join(declared) or "no option"
            raise BackendError(f"backend {cls.name!r} has no option {key[:60]!r}{hint} (it reads: {reads})")
