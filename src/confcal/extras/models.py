"""Calling models: the chat clients and the ConfBench extraction, in one import.

Everything here is defined in :mod:`confcal.extras.clients` (the clients and the chat
protocol) and :mod:`confcal.extras.extraction` (asking for extractions with confidence),
and re-exported, so that one import gives both.
"""

from __future__ import annotations

from ..exceptions import (
    ModelCallError,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
)
from ._http import RETRY_STATUSES
from .clients import (
    AnthropicClient,
    BedrockClient,
    ChatClient,
    ChatRequest,
    ChatResponse,
    OpenAICompatibleClient,
)
from .extraction import (
    MAX_IMAGE_SIZE,
    MODALITIES,
    STRATEGIES,
    ExtractionRun,
    ModelAnswerError,
    build_request,
    extract_logprob,
    extract_two_stage,
    extract_verbalized,
    run_extraction,
)

__all__ = [
    "MAX_IMAGE_SIZE",
    "MODALITIES",
    "RETRY_STATUSES",
    "STRATEGIES",
    "AnthropicClient",
    "BedrockClient",
    "ChatClient",
    "ChatRequest",
    "ChatResponse",
    "ExtractionRun",
    "ModelAnswerError",
    "ModelCallError",
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "ModelResponseError",
    "OpenAICompatibleClient",
    "build_request",
    "extract_logprob",
    "extract_two_stage",
    "extract_verbalized",
    "run_extraction",
]
