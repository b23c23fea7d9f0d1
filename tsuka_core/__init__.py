"""tsuka: measure what a language model can really do, and store it as a hash-guarded profile.

The public API is listed once, in ``__init__.pyi``; each name is imported from
its module on first use, so that ``import tsuka_core`` (and ``tsuka --help``)
loads none of the heavy libraries. Names public in an earlier release that
are not any more still resolve, with a DeprecationWarning (``deprecated.py``).
"""

from typing import Any

import lazy_loader

_public, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)


def __getattr__(name: str) -> Any:
    """A public name, imported on first use; an earlier release's name, with a DeprecationWarning."""
    try:
        return _public(name)
    except AttributeError:
        from tsuka_core.deprecated import resolve

        return resolve(name)
