"""Hypothesis strategies for ``(correct, confidence)`` arrays.

Re-exported by :mod:`confcal.testing`. Hypothesis is imported inside the strategy functions,
so this module imports without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._references import check_option

if TYPE_CHECKING:  # pragma: no cover - typing only; hypothesis is optional at runtime
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "calibration_data",
    "grouped_calibration_data",
    "review_budgets",
    "weighted_calibration_data",
]

# ---------------------------------------------------------------------------------------
# Hypothesis strategies
# ---------------------------------------------------------------------------------------

_TIE_MODES = ("some", "heavy", "none", "all")


def _check_sizes(min_size: int, max_size: int, single_class: bool | None) -> None:
    if not (isinstance(min_size, int) and isinstance(max_size, int) and 1 <= min_size <= max_size):
        raise ValueError(
            f"min_size and max_size must be integers with 1 <= min_size <= max_size; "
            f"found {min_size!r} and {max_size!r}"
        )
    if single_class is False and max_size < 2:
        raise ValueError("single_class=False needs max_size >= 2 (both classes present)")


def _confidence_lists(min_size: int, max_size: int, ties: str) -> SearchStrategy[list[float]]:
    from hypothesis import strategies as st

    # Explicit ranges: st.floats(0, 1) never yields NaN, inf or -0.0. The extremes are
    # sampled on purpose, they are where bin edges and clipping bugs live.
    extremes = st.sampled_from([0.0, 1.0])
    if ties == "none":
        return st.lists(
            st.one_of(st.floats(0, 1), extremes), min_size=min_size, max_size=max_size,
            unique=True,
        )
    if ties == "heavy":
        # Confidences rounded to 1 or 2 decimals: at most 11 or 101 distinct values.
        def rounded(decimals: int) -> SearchStrategy[list[float]]:
            scale = 10**decimals
            return st.lists(
                st.integers(0, scale).map(lambda i: i / scale),
                min_size=min_size, max_size=max_size,
            )

        return st.sampled_from([1, 2]).flatmap(rounded)
    if ties == "all":
        return st.tuples(st.one_of(extremes, st.floats(0, 1)), st.integers(min_size, max_size)).map(
            lambda t: [t[0]] * t[1]
        )

    # "some": fresh floats mixed with repeats from a small pool (and the extremes).
    def mixed(pool: list[float]) -> SearchStrategy[list[float]]:
        return st.lists(
            st.one_of(st.floats(0, 1), st.sampled_from(pool), extremes),
            min_size=min_size, max_size=max_size,
        )

    return st.lists(st.floats(0, 1), min_size=1, max_size=5).flatmap(mixed)


def _label_lists(n: int, single_class: bool | None) -> SearchStrategy[list[bool]]:
    from hypothesis import strategies as st

    if single_class is True:
        return st.booleans().map(lambda v: [v] * n)

    mixed = st.lists(st.booleans(), min_size=n, max_size=n)
    if single_class is False:

        def both(draw_labels: tuple[list[bool], int]) -> list[bool]:
            labels, flip = draw_labels
            if len(set(labels)) == 1:
                labels = list(labels)
                labels[flip] = not labels[flip]
            return labels

        return st.tuples(mixed, st.integers(0, n - 1)).map(both)
    # None: mostly mixed, and explicitly the two single-class cases.
    return st.one_of(mixed, st.booleans().map(lambda v: [v] * n))


def calibration_data(
    min_size: int = 1,
    max_size: int = 200,
    *,
    ties: str = "some",
    single_class: bool | None = None,
) -> SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """Strategy for ``(correct, confidence)``: a bool array and a float64 array in [0, 1].

    Parameters
    ----------
    min_size, max_size : int
        Bounds on n, the number of rows (1 <= min_size <= max_size).
    ties : {"some", "heavy", "none", "all"}
        "some": fresh ``st.floats(0, 1)`` mixed with repeats from a small pool of values and
        the extremes 0.0 and 1.0. "heavy": confidences rounded to 1 or 2 decimals (``i / 10``
        or ``i / 100``), so long runs of equal values and both extremes. "none": all
        confidences distinct. "all": every row has the same confidence.
    single_class : bool or None
        None (default): labels are mostly mixed and sometimes all correct or all wrong.
        True: always a single class (all correct or all wrong). False: both classes always
        present (n >= 2: a smaller ``min_size`` is raised to 2).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of tuple (ndarray of bool, ndarray of float64)

    Notes
    -----
    Hypothesis is imported when this function is called, not when the module is imported.
    Never generates NaN, inf or -0.0: those are invalid-input tests, not properties.

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> @settings(max_examples=10, deadline=None)
    ... @given(calibration_data(min_size=2, max_size=20, ties="heavy", single_class=False))
    ... def check(data):
    ...     correct, confidence = data
    ...     assert correct.dtype == bool and 0 < correct.sum() < len(correct)
    ...     assert np.all((0 <= confidence) & (confidence <= 1))
    >>> check()
    """
    _check_sizes(min_size, max_size, single_class)
    check_option(ties, "ties", _TIE_MODES)
    if single_class is False:
        min_size = max(min_size, 2)

    def attach_labels(confidence: list[float]) -> SearchStrategy[tuple[np.ndarray, np.ndarray]]:
        return _label_lists(len(confidence), single_class).map(
            lambda labels: (np.array(labels, dtype=bool), np.array(confidence, dtype=np.float64))
        )

    return _confidence_lists(min_size, max_size, ties).flatmap(attach_labels)


def weighted_calibration_data(
    min_size: int = 1,
    max_size: int = 200,
    *,
    ties: str = "some",
    single_class: bool | None = None,
    weights: str = "integer",
    max_weight: int = 5,
) -> SearchStrategy[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Strategy for ``(correct, confidence, sample_weight)``.

    Parameters
    ----------
    min_size, max_size, ties, single_class
        As in :func:`calibration_data`.
    weights : {"integer", "float"}
        "integer": whole numbers 0..max_weight stored as float64, so a weighted row equals
        that many copies of the row (0 drops it). "float": ``st.floats(0, max_weight)``.
        The total weight is always positive.
    max_weight : int

    Notes
    -----
    With "float" weights, fast and reference quantile bins agree unless a cumulative weight
    ratio W_before·M/W lies within float rounding (~n·1e-16) of the 1e-9 tolerance of the
    bin rule, which random data does not hit.

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> @settings(max_examples=10, deadline=None)
    ... @given(weighted_calibration_data(max_size=10))
    ... def check(data):
    ...     correct, confidence, weight = data
    ...     assert len(correct) == len(confidence) == len(weight) and weight.sum() > 0
    >>> check()
    """
    from hypothesis import strategies as st

    check_option(weights, "weights", ("integer", "float"))
    element = (
        st.integers(0, max_weight).map(float) if weights == "integer"
        else st.floats(0, max_weight)
    )

    def attach_weights(
        data: tuple[np.ndarray, np.ndarray],
    ) -> SearchStrategy[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        n = len(data[0])

        def build(drawn: tuple[list[float], int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            values, fix = drawn
            w = np.array(values, dtype=np.float64)
            if not w.sum() > 0:
                w[fix] = 1.0
            return data[0], data[1], w

        return st.tuples(
            st.lists(element, min_size=n, max_size=n), st.integers(0, n - 1)
        ).map(build)

    return calibration_data(
        min_size, max_size, ties=ties, single_class=single_class
    ).flatmap(attach_weights)


def grouped_calibration_data(
    min_size: int = 1,
    max_size: int = 200,
    *,
    ties: str = "some",
    single_class: bool | None = None,
    max_groups: int = 20,
) -> SearchStrategy[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Strategy for ``(correct, confidence, groups)``: document ids for the bootstrap.

    ``groups`` is an int64 array of document ids in ``[0, max_groups)``, one per row, in any
    order (the rows of one document need not be contiguous). Other parameters as in
    :func:`calibration_data`.

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> @settings(max_examples=10, deadline=None)
    ... @given(grouped_calibration_data(max_size=10, max_groups=3))
    ... def check(data):
    ...     correct, confidence, groups = data
    ...     assert set(groups.tolist()) <= {0, 1, 2}
    >>> check()
    """
    from hypothesis import strategies as st

    if not (isinstance(max_groups, int) and max_groups >= 1):
        raise ValueError(f"max_groups must be an integer >= 1; found {max_groups!r}")

    def attach_groups(
        data: tuple[np.ndarray, np.ndarray],
    ) -> SearchStrategy[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        n = len(data[0])
        return st.lists(st.integers(0, max_groups - 1), min_size=n, max_size=n).map(
            lambda g: (data[0], data[1], np.array(g, dtype=np.int64))
        )

    return calibration_data(
        min_size, max_size, ties=ties, single_class=single_class
    ).flatmap(attach_groups)


def review_budgets() -> SearchStrategy[float]:
    """Strategy for ECARB budgets in (0, 1].

    Mostly short decimals (``i / 100`` and ``i / 1000``, where b·n lands exactly on whole
    numbers and float rounding bites: 0.29 · 100 = 28.999999999999996), plus 1.0 and any
    float in (0, 1].

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> @settings(max_examples=10, deadline=None)
    ... @given(review_budgets())
    ... def check(b):
    ...     assert 0 < b <= 1
    >>> check()
    """
    from hypothesis import strategies as st

    return st.one_of(
        st.integers(1, 100).map(lambda i: i / 100),
        st.integers(1, 1000).map(lambda i: i / 1000),
        st.just(1.0),
        st.floats(0, 1, exclude_min=True),
    )
