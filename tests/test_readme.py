"""The README's Python example runs and prints what it claims."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python example"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    confcal = namespace["confcal"]
    correct, confidence = namespace["correct"], namespace["confidence"]
    # the figures quoted in the README's comments
    assert round(confcal.auroc(correct, confidence), 3) == 0.810
    assert round(confcal.ece(correct, confidence), 3) == 0.181
    # 3 errors; the 3 least confident (0.3, 0.4, 0.7) hold 2: 2 / (3/10 * 3) = 2.22
    assert confcal.ecarb(correct, confidence, budget=0.3) == pytest.approx(20 / 9)


def test_quickstart_has_exactly_the_two_commands_and_ci_runs_the_test_one():
    text = README.read_text()
    quickstart = text.split("## Quickstart", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line for line in quickstart.splitlines() if line.strip()]
    assert commands == ['pip install -e ".[cli]" && confcal demo',
                        'pip install -e ".[test]" && python -m pytest -n auto']
    ci = [line.strip() for line in (README.parent / ".ci" / "run").read_text().splitlines()]
    assert commands[1] in ci
    # stage 1 is a newcomer: a new virtual environment, and no other install before the
    # README command (an extra installed first would hide a missing dependency)
    before = ci[:ci.index(commands[1])]
    assert any(line.startswith('python -m venv "$work/venv"') for line in before)
    assert not [line for line in before if line.startswith(("pip ", "apt-get "))]
