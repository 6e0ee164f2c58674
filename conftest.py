"""What the whole suite shares: Hypothesis profiles and optional dependencies of doctests.

``quick`` (the default) runs each property at a quarter of the examples its test names, so
``python -m pytest`` stays within a few minutes on a two-core machine; ``ci`` runs every
property at full strength (the count each test names, 100 where it names none). The second
stage of ``.ci/run`` selects it with ``--hypothesis-profile=ci``; so can anyone, or with
``HYPOTHESIS_PROFILE=ci``.

A module's doctests that need an optional dependency (``DOCTEST_NEEDS``) skip without it,
naming the extra, as the tests in tests/ do through ``tests/_optional.py``; it sits at the
root so that it sees the doctests of ``src/confcal`` too.
"""

from __future__ import annotations

import os

import pytest
from _pytest.doctest import DoctestItem
from hypothesis import settings

from _optional import need_module, need_program

# deadline None: a shared two-core machine makes per-example timing meaningless; speed is
# measured in benchmarks/, never by a timed property
settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("quick", max_examples=25, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium, for the tests that render report.html (skipped without it)."""
    return need_program("chromium")


# module of the doctests -> the optional modules they import
DOCTEST_NEEDS = {
    "confcal.dask": ("dask.dataframe", "distributed"),
    "confcal.extras.pdf": ("pymupdf",),
}


def pytest_runtest_setup(item: pytest.Item) -> None:
    if isinstance(item, DoctestItem):
        name = item.dtest.name if item.dtest is not None else ""  # confcal.dask.score
        for prefix, needs in DOCTEST_NEEDS.items():
            if name == prefix or name.startswith(prefix + "."):
                for name in needs:
                    need_module(name)
