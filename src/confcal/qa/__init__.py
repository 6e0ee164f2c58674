"""Document question answering in the style of DocBench: records, judges, tables, command.

:mod:`~confcal.qa.docqa` is the public module (loading DocBench outputs, rule and model
judges, accuracy tables, calibration on answers); ``confcal qa`` is its command. Reads the
metrics and scoring layers (docs/architecture.md).
"""

from . import docqa
from .docqa import *  # noqa: F403

__all__ = [*docqa.__all__]
