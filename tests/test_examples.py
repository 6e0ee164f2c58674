"""The examples run as documented, and the user docs point at things that exist."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import confcal

ROOT = Path(__file__).resolve().parents[1]
USER_DOCS = ["quickstart.md", "concepts.md", "api.md", "cli.md", "architecture.md"]


def _run(script: str, cwd: Path) -> subprocess.CompletedProcess:
    src = str(Path(confcal.__file__).parents[1])  # the confcal this test imports
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, str(ROOT / "examples" / script)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_ecarb_on_arrays(tmp_path):
    done = _run("ecarb_on_arrays.py", tmp_path)
    assert done.returncode == 0, done.stderr
    # 20 predictions, 4 errors; the 2 least confident (0.55, 0.62) are both errors:
    # 2 / (2/20 * 4) = 5.0, the ceiling
    assert done.stdout.splitlines()[0] == ("review the 2 least confident (10%): 5.00x the "
                                           "errors of a random review (best possible 5.00x)")
    code = (ROOT / "examples" / "ecarb_on_arrays.py").read_text()
    body = [line for line in code.split('"""', 2)[2].splitlines() if line.strip()]
    assert len(body) <= 14  # "a dozen lines"


def test_score_jsonl_files_writes_and_reads_the_report(tmp_path):
    done = _run("score_jsonl_files.py", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "report: example-report/report.html" in done.stdout
    assert re.search(r"logprob: AUROC 0\.\d\d \[0\.\d\d, 0\.\d\d\], ECE", done.stdout)
    assert (tmp_path / "example-report" / "report.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["example-report"]


@pytest.mark.parametrize("page", USER_DOCS)
def test_user_docs_link_to_files_that_exist(page):
    text = (ROOT / "docs" / page).read_text()
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / "docs" / target).resolve().exists(), f"{page} links to {target}"


@pytest.mark.parametrize("module", [
    "confcal.metrics", "confcal.metrics.bootstrap", "confcal.scoring", "confcal.scoring.schema",
    "confcal.scoring.comparators", "confcal.scoring.matching", "confcal.scoring.presets",
                                    "confcal.calibration.confidence",
    "confcal.calibration.calibrators", "confcal.calibration.routing", "confcal.testing",
                                    "confcal.exceptions",
    "confcal.metrics.sketch", "confcal.qa.docqa", "confcal.report.degradation", "confcal.report",
    "confcal.report.plots", "confcal.datasets", "confcal.scoring.io", "confcal.dask", "confcal.cli",
    "confcal.extras.augment", "confcal.extras.models"])
def test_api_reference_lists_every_public_name(module):
    text = (ROOT / "docs" / "api.md").read_text()
    assert f"## `{module}`" in text
    section = text.split(f"## `{module}`", 1)[1].split("\n## ", 1)[0]
    package = importlib.import_module(module)
    for name in package.__all__:
        # a package facade re-exports its public modules' names: their own sections list them
        home = getattr(package, name).__module__ if hasattr(getattr(package, name),
                                                            "__module__") else module
        sections = [section] + [text.split(f"## `{sub}`", 1)[1].split("\n## ", 1)[0]
                                for sub in _public_children(module)
                                if f"## `{sub}`" in text]
        assert any(form in part for part in sections
                   for form in (f"`{name}", f"`class {name}", f"**{name}**")), (
            f"{module}.{name} (defined in {home})")


def _public_children(package: str) -> list[str]:
    import pkgutil

    parent = importlib.import_module(package)
    return [info.name for info in pkgutil.iter_modules(getattr(parent, "__path__", []),
                                                        f"{package}.")
            if not info.name.rpartition(".")[2].startswith("_")]
