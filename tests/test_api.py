"""The public surface: every public name exported, documented and importable."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import confcal


def test_every_public_name_is_in_all():
    public = {name for name in dir(confcal) if not name.startswith("_")}
    modules = {name for name in public if inspect.ismodule(getattr(confcal, name))}
    assert public - modules - {"annotations"} == set(confcal.__all__)


def test_all_names_resolve_and_have_docstrings():
    for name in confcal.__all__:
        obj = getattr(confcal, name)
        assert obj.__doc__, f"{name} has no docstring"


METRICS = ("auroc", "ece", "mce", "brier", "ecarb", "ecarb_curve", "reliability_bins",
           "calibration_report", "bootstrap_ci", "debiased_ece", "smooth_ece", "aurc",
           "risk_coverage_curve", "brier_decomposition", "calibration_slope", "log_loss",
           "roc_curve_points", "pr_curve_points")


def test_metrics_share_one_signature_convention():
    # data positional first, then keyword-only options with shared names
    for name in METRICS:
        params = list(inspect.signature(getattr(confcal, name)).parameters.values())
        assert [p.name for p in params[:2]] == ["correct", "confidence"], name
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[2:]), name


def test_every_metric_takes_sample_weight():
    for name in (*METRICS, "ecarb_ceiling"):
        params = inspect.signature(getattr(confcal, name)).parameters
        assert "sample_weight" in params, name
        assert params["sample_weight"].default is None, name
        assert params["sample_weight"].kind is inspect.Parameter.KEYWORD_ONLY, name


def _public_callables():
    """(qualified name, callable) of every public function and public method."""
    import importlib

    modules = ["confcal", "confcal.metrics", "confcal.metrics.bootstrap",
               "confcal.metrics.sketch", "confcal.calibration.calibrators",
               "confcal.calibration.routing", "confcal.calibration.confidence",
               "confcal.report", "confcal.report.plots", "confcal.report.degradation",
               "confcal.qa.docqa", "confcal.dask", "confcal.scoring", "confcal.testing"]
    seen = set()
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            targets = [(f"{module_name}.{name}", obj)]
            if inspect.isclass(obj):
                targets += [(f"{module_name}.{name}.{m}", f) for m, f in vars(obj).items()
                            if not m.startswith("_") and callable(getattr(obj, m, None))]
            for qualified, fn in targets:
                fn = getattr(fn, "__func__", fn)  # classmethods
                if callable(fn) and id(fn) not in seen:
                    seen.add(id(fn))
                    yield qualified, fn


# One vocabulary (docs/api.md): these spellings of its keywords are not used anywhere.
OLD_NAMES = {"level": "confidence_level", "bootstrap": "n_resamples"}


def test_no_public_function_takes_an_old_name():
    checked = 0
    for name, fn in _public_callables():
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        checked += 1
        for old in (*OLD_NAMES, "group"):
            assert old not in params, f"{name} takes {old}="
    assert checked > 100


def test_every_budgets_default_is_the_one_default():
    from confcal.metrics import DEFAULT_BUDGETS

    found = []
    for name, fn in _public_callables():
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if "budgets" in params and params["budgets"].default is not inspect.Parameter.empty:
            default = params["budgets"].default
            if name.endswith(("ecarb_curve", "ecarb_vs_budget")):  # the grid 0.05, ..., 1.0
                assert default is None, name
                continue
            assert default is DEFAULT_BUDGETS, (name, default)
            found.append(name)
    assert DEFAULT_BUDGETS == (0.1, 0.3)
    assert set(found) == {
        "confcal.calibration_report", "confcal.compare_runs", "confcal.compare_systems",
        "confcal.write_report",
        "confcal.report.runs_table", "confcal.report.compare_runs_sketched",
        "confcal.CalibrationSketch.report", "confcal.CalibrationSketch.error_bounds",
        "confcal.CalibrationSketch.merged_report",
        "confcal.dask.dask_calibration_report", "confcal.dask.dask_calibration_reports",
        "confcal.dask.dask_compare_runs", "confcal.qa.docqa.calibration_table"}


def test_reliability_bins_default_to_the_bins_of_ece():
    ece = inspect.signature(confcal.ece).parameters
    bins = inspect.signature(confcal.reliability_bins).parameters
    report = inspect.signature(confcal.calibration_report).parameters
    for option in ("n_bins", "binning"):
        assert ece[option].default == bins[option].default == report[option].default


def test_core_import_does_not_pull_optional_dependencies():
    import subprocess
    import sys

    code = ("import sys, confcal; bad = [m for m in ('matplotlib', 'hypothesis', 'sklearn') "
            "if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_scalar_metrics_load_numpy_only():
    # A metric call on arrays costs numpy and confcal's metrics; pandas (626
    # modules with its own imports, ~3.5x `import numpy`) loads only for a DataFrame.
    import subprocess
    import sys

    code = (
        "import sys, confcal\n"
        "y, c = [0, 1, 1, 0], [0.2, 0.8, 0.6, 0.4]\n"
        "confcal.auroc(y, c); confcal.ece(y, c); confcal.mce(y, c); confcal.brier(y, c)\n"
        "confcal.ecarb(y, c); confcal.ecarb_ceiling(y); confcal.review_count(0.3, 4)\n"
        "confcal.auroc(y, c, sample_weight=[1, 2, 1, 1])\n"
        "confcal.debiased_ece(y, c, n_bins=2); confcal.smooth_ece(y, c); confcal.log_loss(y, c)\n"
        "confcal.calibration_slope(y, c); confcal.brier_decomposition(y, c, n_bins=2)\n"
        "confcal.aurc(y, c)\n"
        "import confcal.metrics.bootstrap, confcal.metrics.sketch\n"
        "heavy = ('pandas', 'scipy', 'sklearn', 'rapidfuzz', 'dateutil', 'matplotlib')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_py_typed_is_shipped():
    from importlib import resources

    assert resources.files("confcal").joinpath("py.typed").is_file()


# ------------------------------------------------------------------ one name, one object
def _public_modules() -> dict[str, types.ModuleType]:
    """Every module of confcal whose dotted path has no private part."""
    found = {"confcal": confcal}
    for info in pkgutil.walk_packages(confcal.__path__, "confcal."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found[info.name] = importlib.import_module(info.name)
    return found


def test_every_public_module_has_an_all_that_resolves():
    modules = _public_modules()
    assert len(modules) > 30
    for name, module in modules.items():
        assert isinstance(getattr(module, "__all__", None), (list, tuple)), name
        assert len(set(module.__all__)) == len(module.__all__), name
        for public in module.__all__:
            assert not public.startswith("_"), (name, public)
            assert hasattr(module, public), (name, public)


def test_a_public_name_denotes_one_object_wherever_it_is_exported():
    holders: dict[str, dict[int, list[str]]] = {}
    for name, module in _public_modules().items():
        for public in module.__all__:
            value = getattr(module, public)
            holders.setdefault(public, {}).setdefault(id(value), []).append(name)
    clashes = {public: list(by_object.values()) for public, by_object in holders.items()
               if len(by_object) > 1}
    assert clashes == {}


def test_each_package_exports_the_public_names_of_its_public_modules():
    # confcal.extras is the exception: each of its modules is an optional dependency's
    # boundary, imported by name (importing the package must not import them)
    modules = _public_modules()
    for name, module in modules.items():
        if not hasattr(module, "__path__") or name in ("confcal", "confcal.extras"):
            continue
        for child, child_module in modules.items():
            if child.rpartition(".")[0] == name and not hasattr(child_module, "__path__"):
                missing = set(child_module.__all__) - set(module.__all__)
                assert missing == set(), f"{name} does not export {sorted(missing)} of {child}"
    assert confcal.calibration.TemperatureScaling is confcal.TemperatureScaling
    assert confcal.metrics.bootstrap_ci is confcal.bootstrap_ci
    assert confcal.scoring.Schema is confcal.Schema and confcal.qa.RuleJudge is confcal.RuleJudge


def test_dir_of_the_package_shows_only_public_names():
    shown = dir(confcal)
    assert [n for n in shown if n.startswith("_") and n != "__version__"] == []
    assert "annotations" not in shown
    assert set(confcal.__all__) <= set(shown)
    for name in shown:
        assert getattr(confcal, name) is not None


# every public metric, calibrator, scorer, report and judge entry point leads its reader on
SEE_ALSO_PACKAGES = ("confcal.metrics", "confcal.calibration", "confcal.scoring",
                     "confcal.report", "confcal.qa", "confcal.datasets")
# protocols, small value types and switches whose neighbours are the entry points above
SEE_ALSO_EXEMPT = {"BatchedComparator", "Comparator", "Judge", "Verdict", "clear_caches",
                   "InputLimits", "WrittenReport", "RunSummary", "AlignedSignals",
                   "check_template", "parse_judge_reply", "load_docbench_verdicts",
                   "cascade_table", "wilson_interval", "load_sample", "check_records",
                   "to_html", "to_markdown"}


def _see_also(doc: str) -> list[str]:
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "See Also" and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            names = []
            for entry in lines[i + 2:]:
                if not entry.strip():
                    break
                if not entry.startswith(" " * (len(line) - len(line.lstrip()) + 1)):
                    names.extend(n.strip() for n in entry.split(":")[0].split(","))
            return names
    return []


def _resolve(name: str, home: str) -> bool:
    candidates = [home, home.rpartition(".")[0], "confcal"]
    for module in candidates:
        if module and hasattr(importlib.import_module(module), name.split(".")[0]):
            target: object = importlib.import_module(module)
            for part in name.split("."):
                target = getattr(target, part, None)
            if target is not None:
                return True
    head, _, attr = name.rpartition(".")
    while head:
        try:
            target = importlib.import_module(head)
        except ImportError:
            head, _, more = head.rpartition(".")
            attr = f"{more}.{attr}"
            continue
        for part in attr.split("."):
            target = getattr(target, part, None)
        return target is not None
    return False


def test_every_public_entry_point_has_a_see_also_that_resolves():
    without, unresolved = [], []
    for package in SEE_ALSO_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if (name in SEE_ALSO_EXEMPT or not (inspect.isfunction(obj) or inspect.isclass(obj))
                    or (inspect.isclass(obj) and issubclass(obj, (Warning, Exception)))):
                continue
            refs = _see_also(inspect.getdoc(obj) or "")
            if not refs:
                without.append(f"{package}.{name}")
            unresolved += [f"{package}.{name} -> {r}" for r in refs
                           if not _resolve(r, obj.__module__)]
    assert without == []
    assert unresolved == []
