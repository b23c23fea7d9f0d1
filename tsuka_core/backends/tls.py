"""Telling a TLS certificate that failed verification from a network fault: the first is never worth another try."""

from __future__ import annotations

__all__ = ["certificate_refused"]


def certificate_refused(exc: BaseException) -> bool:
    """True when ``exc``, or an exception that caused it, is a failed TLS certificate verification."""
    import ssl  # loaded by httpx for any request already; not at import, for commands that send none

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLCertVerificationError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
