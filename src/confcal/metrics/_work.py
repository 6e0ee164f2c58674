"""The work bound of the bootstrap: how much resampling a call may take on before any of it
is done (:data:`MAX_WORK`, :func:`check_work`), shared by :func:`confcal.bootstrap_ci`,
:func:`confcal.report.compare_runs` and :func:`confcal.report.write_report`."""

from __future__ import annotations

from typing import Any

from .._validation import is_real, shown
from ..exceptions import ValidationError

__all__ = ["MAX_WORK", "check_work"]

MAX_WORK = 2e10
"""The most work :func:`confcal.bootstrap_ci`, :func:`~confcal.report.compare_runs` and
:func:`~confcal.report.write_report` take on unless told otherwise (``max_work``,
``confcal report --max-work``), in units of one row of one resample (about 12 ns): about
four minutes.

The work is ``(n_resamples + 1) * (rows + runs * (10,000 * n_bins + 20,000 * budgets))``:
every resample reweights every row, and finds each run's quantile bins (a search per bin,
about 0.1 ms) and ECARB budgets (about 0.25 ms each). A request beyond it
(``n_resamples=10**9``, a million bins with intervals, 10,000 budgets) is refused before
any of it is done, naming the figures; raise ``max_work`` for a real need."""

_WORK_PER_BIN = 10_000
_WORK_PER_BUDGET = 20_000


def check_work(rows: int, runs: int, *, n_resamples: int, n_bins: int, n_budgets: int,
               max_work: Any) -> None:
    """Refuse a request whose work (:data:`MAX_WORK`'s formula) is beyond ``max_work``.

    >>> check_work(840, 1, n_resamples=1000, n_bins=5, n_budgets=2, max_work=MAX_WORK)
    >>> check_work(840, 1, n_resamples=10**9, n_bins=5, n_budgets=2,
    ...            max_work=MAX_WORK)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: the metrics would cost 9.08e+13 units of work, ...
    """
    if not (is_real(max_work) and float(max_work) >= 1):
        raise ValidationError(f"max_work must be a number >= 1; found {shown(max_work)}")
    per_resample = rows + runs * (_WORK_PER_BIN * n_bins + _WORK_PER_BUDGET * n_budgets)
    work = (n_resamples + 1) * per_resample
    if work > max_work:
        raise ValidationError(
            f"the metrics would cost {work:.3g} units of work, about {work * 12e-9:.2g} s "
            f"({n_resamples + 1:,} rankings, n_resamples + 1, of {rows:,} rows in {runs:,} "
            f"runs with {n_bins:,} bins and {n_budgets:,} budgets each), more than "
            "{option} allows; lower n_resamples, n_bins or the budgets, or raise it",
            option=("max_work", int(max_work) if float(max_work).is_integer() else max_work))
