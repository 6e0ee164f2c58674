"""What every ``confcal`` subcommand's options share: the argparse types.

The ``confcal`` command, ``confcal qa`` and ``confcal qa run`` parse their options with
these, so an integer, a share or a budget list is refused with the same words everywhere.
Foundation: the standard library and the boundary checks only.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from ._validation import check_budgets
from .exceptions import ConfcalError

__all__ = ["budgets", "columns", "int_at_least", "number_in", "positive"]


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
