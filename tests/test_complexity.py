"""No function in src/ is too branchy to hold in one's head: radon's cyclomatic complexity of
every function and method is at most 20 (radon counts each if, loop, boolean operator,
comprehension and except clause as a branch). A function that grows past it is split along
the rules its branches serve."""

from __future__ import annotations

from pathlib import Path

from _optional import need_module

SRC = Path(__file__).resolve().parents[1] / "src" / "confcal"
LIMIT = 20


def test_no_function_is_more_complex_than_the_limit():
    visitor = need_module("radon.complexity")
    over = []
    for path in sorted(SRC.rglob("*.py")):
        for block in visitor.cc_visit(path.read_text(encoding="utf-8")):
            if block.complexity > LIMIT:
                over.append(f"{path.relative_to(SRC)}:{block.lineno} {block.fullname} "
                            f"({block.complexity})")
    assert over == []


def test_the_count_sees_a_branchy_function():
    # the check can fail: 21 ifs make complexity 22
    visitor = need_module("radon.complexity")
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(21))
    (block,) = visitor.cc_visit(f"def f(x):\n{body}    return -1\n")
    assert block.complexity == 22 > LIMIT
