"""The ``confcal`` command (:func:`main`); ``confcal qa`` lives with the QA layer.

The top layer: it parses arguments, calls the library and formats what the library
reports; it computes nothing of its own (docs/architecture.md).
"""

from ._main import main

__all__ = ["main"]
