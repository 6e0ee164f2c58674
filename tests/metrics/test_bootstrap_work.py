"""The bootstrap's work bound: a request beyond it is refused before anything is drawn."""

from __future__ import annotations

import numpy as np
import pytest

from confcal import bootstrap_ci
from confcal.exceptions import ValidationError
from confcal.report import MAX_WORK


def _data(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    confidence = rng.random(n)
    return (rng.random(n) < confidence).astype(int), confidence


def test_a_billion_resamples_are_refused_before_any_is_drawn():
    correct, confidence = _data()
    # (10**9 + 1) * (40 rows + 10,000 * 5 bins + 20,000 * 1 budget) = 7.0e13 > 2e10
    with pytest.raises(ValidationError, match=r"^the metrics would cost 7e\+13 units of work.*"
                                              r"of 40 rows in 1 runs with 5 bins and 1 "
                                              r"budgets each\), more than max_work="
                                              r"20000000000 allows") as info:
        bootstrap_ci(correct, confidence, n_resamples=10**9)
    assert info.value.option == ("max_work", 20_000_000_000)
    # without ECARB no budget is searched: (10**9 + 1) * (40 + 50,000) = 5.0e13
    with pytest.raises(ValidationError, match=r"cost 5e\+13 units.*and 0 budgets each"):
        bootstrap_ci(correct, confidence, metrics=("auroc",), n_resamples=10**9)


def test_the_bound_can_be_raised_and_is_itself_checked():
    correct, confidence = _data()
    # 21 resamples (20 + the estimate) * (40 + 50,000 + 20,000) = 1,470,840 units of work
    with pytest.raises(ValidationError, match=r"cost 1\.47e\+06 units"):
        bootstrap_ci(correct, confidence, n_resamples=20, max_work=1_470_839)
    table = bootstrap_ci(correct, confidence, n_resamples=20, max_work=1_470_840)
    assert len(table) == 4 and MAX_WORK == 2e10
    with pytest.raises(ValidationError, match=r"max_work must be a number >= 1; found 0"):
        bootstrap_ci(correct, confidence, max_work=0)
