"""Optional dependencies of the test suite: a skip that names what to install.

``python -m pytest`` after ``pip install -e ".[test]"`` must pass with nothing else
installed, so a test that needs an extra (PyMuPDF, Augraphy, pytesseract, botocore, dask)
or a program (tesseract, chromium, stickler-eval's environment) asks for it here and is
skipped, with the install line in the reason, when it is absent.

With ``CONFCAL_REQUIRE_OPTIONAL=1`` (the second stage of ``.ci/run``, where everything is
installed) the same call fails the test instead, so a missing install step cannot hide
behind a skip. Every such reason starts with ``needs``; ``.ci/run`` also refuses a run
whose skip list shows one.
"""

from __future__ import annotations

import importlib
import os
import shutil
from types import ModuleType

import pytest

__all__ = ["REQUIRE", "missing", "need_module", "need_program", "program_or_none"]

REQUIRE = "CONFCAL_REQUIRE_OPTIONAL"

# the install line for each optional import, by its top-level module name
_EXTRA = {
    "pymupdf": "pip install -e '.[pdf]'",
    "augraphy": "pip install -e '.[augment]'",
    "cv2": "pip install -e '.[augment]'",
    "pytesseract": "pip install -e '.[ocr]'",
    "PIL": "pip install -e '.[models]'",
    "botocore": "pip install -e '.[bedrock]'",
    "dask": "pip install -e '.[dask]'",
    "distributed": "pip install -e '.[dask]'",
    "radon": "pip install radon==6.0.1, as CI's code-health step does",
    "munkres": "pip install -e '.[test-reference]'",
}
_PROGRAM = {
    "tesseract": "apt-get install tesseract-ocr",
    "chromium": "apt-get install chromium",
}


def missing(reason: str) -> None:
    """Skip (or, under ``CONFCAL_REQUIRE_OPTIONAL``, fail) for a missing dependency."""
    if os.environ.get(REQUIRE):
        pytest.fail(f"{reason} ({REQUIRE} is set: every optional dependency must be here)",
                    pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def need_module(name: str) -> ModuleType:
    """Import ``name`` (``"botocore.stub"``), or skip naming the extra that brings it."""
    top = name.split(".")[0]
    if top not in _EXTRA:
        raise KeyError(f"{top!r} is no optional dependency of the tests; known: "
                       f"{', '.join(sorted(_EXTRA))}")
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"needs {top} ({_EXTRA[top]}): {exc}")
        raise  # unreachable: missing() raises


def program_or_none(name: str) -> str | None:
    """The path of a program on PATH (``chromium`` also as ``chromium-browser``)."""
    if name not in _PROGRAM:
        raise KeyError(f"{name!r} is no optional program of the tests; known: "
                       f"{', '.join(sorted(_PROGRAM))}")
    found = shutil.which(name)
    if found is None and name == "chromium":
        found = shutil.which("chromium-browser")
    return found


def need_program(name: str) -> str:
    """The path of a program, or skip naming the Debian package that brings it."""
    found = program_or_none(name)
    if found is None:
        missing(f"needs the {name} program ({_PROGRAM[name]})")
        raise AssertionError("unreachable")
    return found
