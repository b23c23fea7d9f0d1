"""tsuka: measure what a language model can really do, and store it as a hash-guarded profile.

The public API is listed once, in ``__init__.pyi``; each name is imported from
its module on first use, so that ``import tsuka_core`` (and ``tsuka --help``)
loads none of the heavy libraries.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
