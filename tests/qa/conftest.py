"""Fixtures shared by the tests of tests/qa/."""

from __future__ import annotations

import pytest


@pytest.fixture
def local_http(monkeypatch):
    monkeypatch.setenv("CONFCAL_TEST_KEY", "sk-local-test")
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
