"""Backends: what talks to a model server (or runs a model in-process) and returns one normalised answer.

Its face: :class:`~tsuka_core.backends.base.Backend` with its config, request and response types
(``base``), and :func:`~tsuka_core.backends.http.request_json` for backends that speak HTTP; the OpenAI-compatible
and embedded backends, body limits, TLS and server-report parsing are behind it.
"""
