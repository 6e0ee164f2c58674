"""The one error base of every model call, shared by models.py and clients.py."""

from __future__ import annotations

from ..exceptions import ConfcalError

__all__ = ["ModelError"]


class ModelError(ConfcalError):
    """A chat model could not be asked or did not answer."""
