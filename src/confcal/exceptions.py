"""Error and warning types raised by confcal.

Invalid input raises a :class:`ValidationError` (a :class:`ValueError`), whose message names
the argument, the rule it breaks, and what was found, and whose attributes say where (file,
line, document, field path, position) for programs such as the ``confcal`` command. A valid
input that leaves a metric undefined (one class for AUROC, no errors for ECARB) emits
:class:`UndefinedMetricWarning` and the metric is NaN.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

__all__ = ["ConfcalError", "ModelCallError", "ModelConnectionError", "ModelError",
           "ModelHTTPError", "ModelResponseError", "UndefinedMetricWarning", "ValidationError"]


class ConfcalError(Exception):
    """Base class of every exception confcal raises on purpose."""


class ValidationError(ConfcalError, ValueError):
    """An argument breaks a documented rule (wrong shape, range, type or option).

    Subclasses :class:`ValueError`, so ``except ValueError`` keeps working. Besides its
    message, the error carries where it was found as attributes, each None when unknown (as
    pydantic's ``loc``): a program shows them without reading the message, which may be
    reworded from one release to the next.

    Parameters
    ----------
    *args
        The message, as for any exception; ``str(exc)`` is the message.
    source : str or path-like, optional
        The file (or folder, or entity table) the offending input was read from.
    line : int, optional
        The 1-based line in ``source`` (a JSONL record, a CSV line counting the header as
        line 1, a line of a JSON file).
    doc_id : hashable, optional
        The document the error is about.
    field : str, optional
        The path of the offending field: ``LineItems[3].Rate`` in a document,
        ``fields.Agency.kind`` in a schema JSON object, ``candidates[1].probability`` in a
        predicted leaf (:func:`confcal.scoring.predictions.parse_prediction`).
    index : int, optional
        The 0-based position in an array or a stream (the triple of
        :func:`confcal.scoring.score_documents_iter`, a Parquet row).
    option : (str, object), optional
        The keyword argument and value that the message names (the setting that refused the
        input, ``("strict", True)``, or the one that would accept it), written in the
        message as ``{option}``: ``str(exc)`` shows it as Python spells it
        (``strict=True``), :meth:`message` as a caller spells it (``--strict`` on the
        command line).

    Attributes
    ----------
    source, line, doc_id, field, index, option
        As given (``source`` as a str).
    location : dict
        The location attributes that are set, in the order above (``option`` is no
        location).

    Notes
    -----
    The message states the location its raiser knew (``doc 'inv-17', field
    LineItems[3].Rate: ...``; ``truth.jsonl, line 17: ...``) and the attributes hold the same
    values. A layer that learns more later (the file and line a document was read from)
    adds it with :meth:`with_location`, which leaves the message as it is: showing what
    was added is the formatter's job.

    Examples
    --------
    >>> exc = ValidationError("doc 'inv-17', field LineItems[3].Rate: confidence must be a "
    ...                       "number within [0, 1]; found 1.5",
    ...                       doc_id="inv-17", field="LineItems[3].Rate")
    >>> exc.location
    {'doc_id': 'inv-17', 'field': 'LineItems[3].Rate'}
    >>> exc.with_location(source="truth.jsonl", line=17, doc_id="ignored").location
    {'source': 'truth.jsonl', 'line': 17, 'doc_id': 'inv-17', 'field': 'LineItems[3].Rate'}
    >>> str(ValidationError("n_bins must be an integer >= 1; found 0"))
    'n_bins must be an integer >= 1; found 0'
    >>> exc = ValidationError("every document must have a prediction ({option}); found none",
    ...                       option=("strict", True))
    >>> str(exc)
    'every document must have a prediction (strict=True); found none'
    >>> exc.message(lambda name, value: "--" + name.replace("_", "-"))
    'every document must have a prediction (--strict); found none'
    """

    _LOCATION = ("source", "line", "doc_id", "field", "index")

    # Class-level defaults too: a subclass whose __init__ does not pass them on still has them.
    source: str | None = None
    line: int | None = None
    doc_id: Any = None
    field: str | None = None
    index: int | None = None
    option: tuple[str, Any] | None = None

    def __init__(self, *args: Any, source: str | os.PathLike[str] | None = None,
                 line: int | None = None, doc_id: Any = None, field: str | None = None,
                 index: int | None = None, option: tuple[str, Any] | None = None) -> None:
        super().__init__(*args)
        self.source = None if source is None else os.fspath(source)
        self.line, self.doc_id, self.field, self.index = line, doc_id, field, index
        self.option = option

    def message(self, spell: Callable[[str, Any], str] | None = None) -> str:
        """The message, with its ``option`` written by ``spell(name, value)`` (default:
        ``name=value`` as a Python call writes it)."""
        text = super().__str__()
        if self.option is None or len(self.args) != 1:
            return text
        name, value = self.option
        return text.replace("{option}", f"{name}={value!r}" if spell is None
                            else spell(name, value))

    def __str__(self) -> str:
        return self.message()

    @property
    def location(self) -> dict[str, Any]:
        """The location attributes that are set: source, line, doc_id, field, index."""
        return {name: getattr(self, name) for name in self._LOCATION
                if getattr(self, name) is not None}

    def with_location(self, **location: Any) -> ValidationError:
        """A copy with the location attributes that are still None filled in.

        Attributes already set are kept (the raiser knew best) and None values are
        ignored; the message, the traceback and the cause are the original's. For a layer
        that learns where an error happened after it was raised::

            except ValidationError as exc:
                raise exc.with_location(source=path, line=number) from None

        Raises
        ------
        TypeError
            For a keyword that is not one of source, line, doc_id, field, index.
        """
        unknown = sorted(set(location) - set(self._LOCATION))
        if unknown:
            raise TypeError(f"with_location() keywords must be among {list(self._LOCATION)}; "
                            f"found {unknown}")
        cls = type(self)
        # Not cls(*self.args): a subclass may take other arguments (EnvelopeError).
        copy = cls.__new__(cls, *self.args)
        copy.__dict__.update(self.__dict__)
        for name, value in location.items():
            if value is not None and getattr(self, name) is None:
                setattr(copy, name, os.fspath(value) if name == "source" else value)
        copy.__cause__, copy.__context__ = self.__cause__, self.__context__
        copy.__suppress_context__ = self.__suppress_context__
        return copy.with_traceback(self.__traceback__)


class ModelError(ConfcalError):
    """A chat model could not be asked or did not answer (:mod:`confcal.extras.clients`)."""


class ModelCallError(ModelError):
    """A model call failed: every model client raises this family, and only this family.

    Defined here, below every layer, so that core callers (the QA judge) tell the kinds
    apart without importing an extra. Messages never hold an API key or a credential: the
    clients redact whatever a server echoes before it reaches a message.

    Parameters
    ----------
    message : str
    status : int, optional
        The HTTP status of the last attempt (None: no HTTP answer, or none asked).
    attempts : int, default 1
        Requests made, retries included (0: refused before any request, e.g. no key).
    retryable : bool, default False
        Whether the last failure was of a kind that is retried (408, 409, 429, 5xx,
        timeouts, dropped connections).

    Examples
    --------
    >>> exc = ModelHTTPError("POST https://api.example/v1/chat/completions answered HTTP "
    ...                      "429", status=429, attempts=5, retryable=True)
    >>> isinstance(exc, ModelCallError), exc.status, exc.attempts
    (True, 429, 5)
    """

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1,
                 retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts
        self.retryable = retryable


class ModelHTTPError(ModelCallError):
    """The server answered with an error status (4xx, 5xx) or a redirect (never followed)."""


class ModelConnectionError(ModelCallError):
    """No HTTP answer: refused connection, DNS failure, TLS failure, timeout, dropped link."""


class ModelResponseError(ModelCallError):
    """A 2xx response without a usable reply: not JSON, too large, too deeply nested, no
    reply text, a non-finite number, or a body that echoes the credential.

    The QA judge reads it as "the model answered nothing usable" (a verdict, not a crash).
    """


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for a valid input and is returned as NaN."""
