"""Optional integrations, imported only by the code that needs them.

Nothing in the confcal core imports this package at import time (``import confcal`` stays
free of HTTP clients and heavy dependencies):

- :mod:`confcal.extras.models`: a small client for OpenAI-compatible chat-completions
  endpoints, on the standard library (used by :class:`confcal.qa.docqa.LLMJudge`).
"""

from __future__ import annotations

__all__: list[str] = []
