"""The layers of docs/architecture.md: imports flow downward only.

Every import in the package, including those inside functions (the lazy ones), is read with
``ast`` and resolved to a module; a module may import its own layer and the layers below it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

# Lowest first. A module belongs to the layer of the longest prefix that names it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("confcal._version", "confcal._validation", "confcal._counts",
                    "confcal._files", "confcal._signature", "confcal._lazy",
                    "confcal._chat", "confcal._markdown",
                    "confcal._options", "confcal.exceptions")),
    ("metrics", ("confcal.metrics",)),
    ("scoring", ("confcal.scoring",)),
    ("calibration", ("confcal.calibration", "confcal.datasets")),
    ("report", ("confcal.report",)),
    ("qa", ("confcal.qa",)),
    ("extras", ("confcal.extras",)),
    ("interfaces", ("confcal.cli", "confcal.qa._command", "confcal.dask", "confcal.testing")),
]
# The package facade re-exports every layer lazily and belongs to none.
FACADE = {"confcal", "confcal.__main__"}


def layer_of(module: str) -> int:
    best, rank = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    if rank < 0:
        raise AssertionError(f"{module} is in no layer of tests/test_architecture.py")
    return rank


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / "confcal").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every confcal import in the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("confcal"):
                # "from . import x" may name a submodule; count the deeper one when it is
                names = [f"{target}.{a.name}" for a in node.names]
                found += [(node.lineno, n if n in MODULES else target) for n in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("confcal")]
    return found


MODULES = modules()


def test_every_module_has_a_layer():
    for module in MODULES:
        if module not in FACADE:
            layer_of(module)


@pytest.mark.parametrize("module", sorted(set(MODULES) - FACADE))
def test_imports_flow_downward(module):
    mine = layer_of(module)
    for line, target in imports(module, MODULES[module]):
        if target in FACADE:
            raise AssertionError(f"{module}:{line} imports the package facade {target}; "
                                 "import the module that defines the name")
        theirs = layer_of(target)
        assert theirs <= mine, (
            f"{module}:{line} ({LAYERS[mine][0]}) imports {target} ({LAYERS[theirs][0]}), "
            "a higher layer")


def test_the_check_catches_an_upward_import(tmp_path):
    # the rule itself: metrics importing the scorer must be refused
    assert layer_of("confcal.scoring._scoring") > layer_of("confcal.metrics._metrics")
    assert layer_of("confcal.qa._command") == len(LAYERS) - 1 > layer_of("confcal.qa.docqa")



def test_no_private_name_is_imported_from_another_module():
    # What modules share lives in private modules under names without a
    # leading underscore; importing a private *module* of a package is how that is done.
    offenders = []
    for module, path in MODULES.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            base = package.split(".")
            base = base[: len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                name = alias.name
                if name.startswith("_") and not name.startswith("__") and (
                        f"{target}.{name}" not in MODULES):
                    offenders.append(f"{module}:{node.lineno} imports {name} from {target}")
    assert offenders == []


def test_architecture_md_names_every_module():
    # a newcomer finds every module's job in docs/architecture.md: by its file name or, in
    # the table of what each package owns, by its name in backquotes
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    unnamed = [str(path.relative_to(SRC)) for path in sorted(SRC.rglob("*.py"))
               if path.name != "__init__.py" and path.name not in text
               and f"`{path.stem}`" not in text]
    assert unnamed == []
