"""What every ``confcal`` subcommand's options share: the argparse types.

The ``confcal`` command, ``confcal qa`` and ``confcal qa run`` parse their options with
these, so an integer, a share or a budget list is refused with the same words everywhere.
Foundation: the standard library and the boundary checks only.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ._markdown import terminal_text
from ._validation import check_budgets
from .exceptions import ConfcalError, ValidationError

__all__ = ["TerminalStream", "add_sampling", "budgets", "columns", "error_message",
           "int_at_least", "number_between", "number_in", "option_spelling", "positive",
           "sampling", "terminal_output"]


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum``.

    Examples
    --------
    >>> int_at_least(1)("3")
    3
    >>> int_at_least(1)("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be an integer >= 1; found '0'
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}; found {text!r}")
        return value
    return parse


def positive(kind: type[int] | type[float], what: str = "a number") -> Callable[[str], Any]:
    """An argparse type: a finite number > 0 of ``kind`` (``what`` names it in the message).

    Examples
    --------
    >>> positive(float, "a number of seconds")("2.5")
    2.5
    >>> positive(float, "a number of seconds")("inf")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be a number of seconds > 0; found 'inf'
    """
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"must be {what} > 0; found {text!r}")
        return value
    return parse


def number_in(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a number in ``[low, high)``.

    Examples
    --------
    >>> number_in(0.0, 1.0)("0.1")
    0.1
    >>> number_in(0.0, 1.0)("1.5")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be a number in [0, 1); found '1.5'
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not low <= value < high:
            raise argparse.ArgumentTypeError(
                f"must be a number in [{low:g}, {high:g}); found {text!r}")
        return value
    return parse


def number_between(low: float, high: float, *, low_open: bool = False
                   ) -> Callable[[str], float]:
    """An argparse type: a finite number in ``[low, high]`` (``(low, high]`` with
    ``low_open``); ``high`` may be infinite.

    Examples
    --------
    >>> number_between(0.0, 1.0, low_open=True)("1")
    1.0
    >>> number_between(0.0, 1.0, low_open=True)("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be a number in (0, 1]; found '0'
    >>> number_between(0.0, math.inf)("nan")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be a finite number >= 0; found 'nan'
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (value > low if low_open else value >= low)
                and value <= high):
            shown = (f"a finite number {'>' if low_open else '>='} {low:g}" if high == math.inf
                     else f"a number in {'(' if low_open else '['}{low:g}, {high:g}]")
            raise argparse.ArgumentTypeError(f"must be {shown}; found {text!r}")
        return value
    return parse


def add_sampling(parser: Any, scope: str = "") -> None:
    """Add ``--temperature``, ``--top-p`` and ``--top-k`` (none sent unless given).

    ``scope`` starts each help text (``"--judge llm: "``). :func:`sampling` reads them.
    """
    parser.add_argument("--temperature", type=number_between(0.0, math.inf), metavar="T",
                        help=f"{scope}send this temperature (default: none sent, the server "
                             "decides; 0 asks for greedy decoding where the server takes it)")
    parser.add_argument("--top-p", type=number_between(0.0, 1.0, low_open=True), metavar="P",
                        help=f"{scope}send this top_p (default: none sent)")
    parser.add_argument("--top-k", type=int_at_least(1), metavar="K",
                        help=f"{scope}send this top_k (default: none sent)")


def sampling(args: argparse.Namespace) -> dict[str, float | int]:
    """The sampling parameters given to :func:`add_sampling`'s options, by name.

    Examples
    --------
    >>> sampling(argparse.Namespace(temperature=0.0, top_p=None, top_k=None))
    {'temperature': 0.0}
    """
    values = {"temperature": args.temperature, "top_p": args.top_p, "top_k": args.top_k}
    return {name: value for name, value in values.items() if value is not None}


def columns(example: str) -> Callable[[str], tuple[str, ...]]:
    """An argparse type: comma-separated column names (``example`` shows the form).

    Examples
    --------
    >>> columns("model,tier")("model, tier")
    ('model', 'tier')
    """
    def parse(text: str) -> tuple[str, ...]:
        names = tuple(part.strip() for part in text.split(","))
        if not all(names):
            raise argparse.ArgumentTypeError(
                f"must be comma-separated column names such as {example}; found {text!r}")
        return names
    return parse


def budgets(text: str) -> tuple[float, ...]:
    """An argparse type: comma-separated review budgets, each in (0, 1].

    Examples
    --------
    >>> budgets("0.1,0.3")
    (0.1, 0.3)
    """
    try:
        return check_budgets(tuple(float(part) for part in text.split(",")), "--budgets")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"must be comma-separated numbers in (0, 1] such as 0.1,0.3; found {text!r}"
            + (f" ({exc})" if isinstance(exc, ConfcalError) else "")) from None


def option_spelling(name: str, value: Any) -> str:
    """A library keyword as the command line writes it: ``strict=True`` is ``--strict``."""
    flag = "--" + name.replace("_", "-")
    return flag if value is True else f"{flag} {value}"


def error_message(exc: BaseException) -> str:
    """A data error in one line, as every subcommand prints it: the library's message with
    the option it names in the command's spelling, or an OS error's reason and file."""
    if isinstance(exc, OSError) and not isinstance(exc, ConfcalError):
        return f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
    return exc.message(option_spelling) if isinstance(exc, ValidationError) else str(exc)


class TerminalStream:
    """A text stream that writes everything through :func:`~confcal._markdown.terminal_text`
    (control characters, escape sequences and bidirectional controls from the data shown as
    escapes); every other attribute is the wrapped stream's, and ``raw`` is the stream itself
    (for the progress bar, whose carriage returns are the command's own)."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal_text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


@contextmanager
def terminal_output() -> Iterator[TextIO]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`TerminalStream` while a command runs
    (argparse's messages, tables, notes, warnings and errors alike); yields the raw stderr.

    Examples
    --------
    >>> with terminal_output():
    ...     print("run \x1b[2J\u202eexe")
    run \\x1b[2J\\u202eexe
    """
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalStream(out), TerminalStream(err)  # type: ignore[assignment]
    try:
        yield err
    finally:
        sys.stdout, sys.stderr = out, err
