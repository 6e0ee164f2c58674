"""The public surface: every public name exported, documented and importable."""

from __future__ import annotations

import inspect

import confcal


def test_every_public_name_is_in_all():
    public = {name for name in dir(confcal) if not name.startswith("_")}
    modules = {name for name in public if inspect.ismodule(getattr(confcal, name))}
    assert public - modules - {"annotations"} == set(confcal.__all__)


def test_all_names_resolve_and_have_docstrings():
    for name in confcal.__all__:
        obj = getattr(confcal, name)
        assert obj.__doc__, f"{name} has no docstring"


def test_metrics_share_one_signature_convention():
    # data positional first, then keyword-only options with shared names
    for name in ("auroc", "ece", "mce", "brier", "ecarb", "ecarb_curve", "reliability_bins",
                 "calibration_report", "bootstrap_ci"):
        params = list(inspect.signature(getattr(confcal, name)).parameters.values())
        assert [p.name for p in params[:2]] == ["correct", "confidence"], name
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[2:]), name


def test_core_import_does_not_pull_optional_dependencies():
    import subprocess
    import sys

    code = ("import sys, confcal; bad = [m for m in ('matplotlib', 'hypothesis', 'sklearn') "
            "if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_py_typed_is_shipped():
    from importlib import resources

    assert resources.files("confcal").joinpath("py.typed").is_file()
