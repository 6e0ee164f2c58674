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


def test_scalar_metrics_load_numpy_only():
    # STYLE.md 19: a metric call on arrays costs numpy and confcal's metrics; pandas (626
    # modules with its own imports, ~3.5x `import numpy`) loads only for a DataFrame.
    import subprocess
    import sys

    code = (
        "import sys, confcal\n"
        "y, c = [0, 1, 1, 0], [0.2, 0.8, 0.6, 0.4]\n"
        "confcal.auroc(y, c); confcal.ece(y, c); confcal.mce(y, c); confcal.brier(y, c)\n"
        "confcal.ecarb(y, c); confcal.ecarb_ceiling(y); confcal.review_count(0.3, 4)\n"
        "confcal.auroc(y, c, sample_weight=[1, 2, 1, 1])\n"
        "import confcal.metrics.bootstrap, confcal.metrics.sketch\n"
        "heavy = ('pandas', 'scipy', 'sklearn', 'rapidfuzz', 'dateutil', 'matplotlib')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_py_typed_is_shipped():
    from importlib import resources

    assert resources.files("confcal").joinpath("py.typed").is_file()
