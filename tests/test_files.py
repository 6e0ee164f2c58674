"""The file helpers of confcal/_files.py: JSON objects, atomic files, staged folders.

The last test keeps them the only ones: a new ``os.replace``, ``tempfile.mkdtemp`` or
``tempfile.mkstemp`` anywhere else in the package, or a new private copy of a boundary
helper, fails it.
"""

from __future__ import annotations

import ast
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import confcal._files as files_module
from _profiles import examples
from confcal._files import (
    MANIFEST_NAME,
    JsonNode,
    JsonSyntaxError,
    JsonTooDeep,
    StagedFile,
    atomic_write,
    check_destination,
    parse_json_nodes,
    read_json_object,
    staged_folder,
)
from confcal._validation import InputLimits
from confcal.exceptions import ValidationError

SRC = Path(__file__).resolve().parents[1] / "src" / "confcal"


def _entries(folder: Path) -> list[str]:
    """The entries of a folder, an output's manifest aside."""
    return sorted(p.name for p in folder.iterdir() if p.name != MANIFEST_NAME)


def _previous(out: Path, files: dict[str, str], what: str = "report") -> None:
    """A previous output at ``out``, written as a run writes one (with its manifest);
    a name ending in ``/`` is a folder."""
    with staged_folder(out, what) as staging:
        for name, text in files.items():
            if name.endswith("/"):
                (staging / name).mkdir(parents=True)
            else:
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                (staging / name).write_text(text)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask():
    """Set the umask for one test, and put the previous one back."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


# ------------------------------------------------------------------------ atomic_write
def test_atomic_write_writes_bytes_and_text(tmp_path):
    path = tmp_path / "a.bin"
    assert atomic_write(path, b"\x00\x01") == path and path.read_bytes() == b"\x00\x01"
    atomic_write(path, "é\r\n")  # text as given: UTF-8, no newline translation
    assert path.read_bytes() == b"\xc3\xa9\r\n"
    atomic_write(path, "é", encoding="latin-1")
    assert path.read_bytes() == b"\xe9"
    assert _entries(tmp_path) == ["a.bin"]  # no temporary file left beside it


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_write_follows_the_umask(tmp_path, umask, mask, mode):
    # mkstemp creates 0600 whatever the umask; the file must get what open() would give
    umask(mask)
    path = atomic_write(tmp_path / "new.txt", "x")
    assert _mode(path) == mode
    # replacing a file gives the new file the umask's mode too (as open() after unlink)
    path.chmod(0o640)
    assert _mode(atomic_write(path, "y")) == mode


def test_atomic_write_leaves_the_old_file_and_no_temp_after_a_failure_mid_write(
        tmp_path, monkeypatch):
    path = tmp_path / "answer.json"
    path.write_text("old")

    def half_then_fail(self: Path, data: bytes) -> int:
        with open(self, "wb") as fh:
            fh.write(data[:2])  # a partial file, as a full disk or a kill would leave
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        atomic_write(path, "new content")
    monkeypatch.undo()
    assert path.read_text() == "old"
    assert _entries(tmp_path) == ["answer.json"]


@pytest.mark.parametrize("step", ["fsync", "chmod", "replace"])
def test_atomic_write_cleans_up_when_publishing_fails(tmp_path, monkeypatch, step):
    path = tmp_path / "out.csv"

    def fail(*args, **kwargs):
        raise OSError(5, f"{step} failed")

    monkeypatch.setattr(files_module.os, step, fail)
    with pytest.raises(OSError, match=f"{step} failed"):
        atomic_write(path, "a,b\n")
    monkeypatch.undo()
    assert _entries(tmp_path) == []


def test_staged_file_commits_or_discards(tmp_path):
    path = tmp_path / "table.csv"
    with StagedFile(path) as staged:
        assert staged.tmp.parent == tmp_path and staged.tmp.name.startswith(".table.csv.")
        staged.tmp.write_text("a\n")
        assert not path.exists()  # nothing visible until the block ends
    assert path.read_text() == "a\n" and _entries(tmp_path) == ["table.csv"]

    with pytest.raises(RuntimeError), StagedFile(path) as staged:
        staged.tmp.write_text("b\n")
        raise RuntimeError("the writer failed")
    assert path.read_text() == "a\n" and _entries(tmp_path) == ["table.csv"]

    staged = StagedFile(path)  # by hand, for a writer called across several calls
    staged.tmp.write_text("c\n")
    staged.discard()
    assert path.read_text() == "a\n" and _entries(tmp_path) == ["table.csv"]


# ------------------------------------------------------------------------ staged_folder
def test_staged_folder_publishes_a_new_folder_with_the_umask_mode(tmp_path, umask):
    umask(0o027)
    out = tmp_path / "report"
    with staged_folder(out, "report") as staging:
        assert staging.parent == out.parent and staging.name.startswith(".report.tmp-")
        (staging / "report.md").write_text("# one")
    assert _entries(out) == ["report.md"] and _entries(out.parent) == ["report"]
    assert _mode(out) == 0o750  # 0777 & ~0027, not mkdtemp's 0700


def test_staged_folder_replaces_a_previous_report_and_keeps_its_mode(tmp_path):
    out = tmp_path / "report"
    _previous(out, {"report.md": "old", "metrics.csv": "old"})
    out.chmod(0o2775)  # a shared folder stays shared
    with staged_folder(out, "report") as staging:
        (staging / "report.md").write_text("new")
    # replaced whole: the old metrics.csv does not survive into the new report
    assert _entries(out) == ["report.md"] and (out / "report.md").read_text() == "new"
    assert _mode(out) == 0o2775
    assert _entries(tmp_path) == ["report"]  # neither the staging nor the old folder is left


def test_staged_folder_removes_the_staging_folder_after_an_exception(tmp_path):
    out = tmp_path / "report"
    _previous(out, {"report.md": "old"})
    with pytest.raises(ZeroDivisionError), staged_folder(out, "report") as staging:
        (staging / "report.md").write_text("half")
        1 / 0
    assert _entries(tmp_path) == ["report"] and (out / "report.md").read_text() == "old"


def test_staged_folder_refuses_a_foreign_folder_and_cleans_up(tmp_path):
    out = tmp_path / "photos"
    out.mkdir()
    (out / "holiday.jpg").write_bytes(b"jpeg")
    with pytest.raises(ValidationError, match=r"the report folder must be new, empty or a "
                                              r"previous confcal report; found 1 entry it did "
                                              r"not write, first 'holiday.jpg' \(no manifest "
                                              r"\.confcal-manifest\.json lists what is in the "
                                              r"folder\); nothing was removed"):
        with staged_folder(out, "report") as staging:
            (staging / "report.md").write_text("new")
    assert _entries(tmp_path) == ["photos"] and _entries(out) == ["holiday.jpg"]


# --------------------------------------------------------------------- read_json_object
def test_read_json_object_reads_text_and_bytes():
    assert read_json_object('{"a": 1}\n', where="text") == {"a": 1}
    assert read_json_object(b'{"a": "\xc3\xa9"}', where="text") == {"a": "é"}
    assert read_json_object(b'\xef\xbb\xbf{"a": 1}', where="text") == {"a": 1}  # BOM
    assert read_json_object('{"a": 1}'.encode("utf-16"), where="text") == {"a": 1}
    # a repeated key is an error, never a silent last-value-wins
    with pytest.raises(ValidationError, match=r"must not repeat a key in one object; found "
                                              r"'a' again at column 10"):
        read_json_object('{"a": 1, "a": 2}', where="text")
    value = read_json_object('{"a": NaN}', where="text")["a"]
    assert value != value


def test_read_json_object_names_the_source_and_line_of_bad_json():
    # one JSONL record, read from line 17: the message gives the column; the line attribute
    # is the file's line
    with pytest.raises(ValidationError) as info:
        read_json_object('{"a": 1,, "b": 2}\n', where="pred.jsonl, line 17:",
                         source="pred.jsonl", line=17, doc_id="d1")
    assert str(info.value) == ("pred.jsonl, line 17: must be valid JSON; found an error at "
                               "column 9: Expecting property name enclosed in double quotes")
    assert info.value.location == {"source": "pred.jsonl", "line": 17, "doc_id": "d1"}

    # a whole file: the error is on its line 3, column 7 (the 2 of '  "b" 2', no colon)
    with pytest.raises(ValidationError) as info:
        read_json_object('{\n  "a": 1,\n  "b" 2\n}\n', where="inv-1.json:",
                         source="inv-1.json")
    assert str(info.value) == ("inv-1.json: must be valid JSON; found an error at line 3, "
                               "column 7: Expecting ':' delimiter")
    assert info.value.location == {"source": "inv-1.json", "line": 3}

    # an error at the end of a record is on the record's line, not the next one
    with pytest.raises(ValidationError, match=r"^r\.jsonl, line 2: must be valid JSON; found an "
                                              r"error at column 8: Expecting ',' delimiter"):
        read_json_object('{"a": 1\n', where="r.jsonl, line 2:", line=2)


@pytest.mark.parametrize("text, kind", [
    ("[1, 2]", "list"), ('"text"', "str"), ("3", "int"), ("null", "NoneType"),
])
def test_read_json_object_refuses_other_json_types(text, kind):
    with pytest.raises(ValidationError) as info:
        read_json_object(text, where="r.jsonl, line 4:", what="a JSON object (one record)",
                         source="r.jsonl", line=4)
    assert str(info.value) == (f"r.jsonl, line 4: must be a JSON object (one record); found a "
                               f"JSON {kind}")
    assert info.value.location == {"source": "r.jsonl", "line": 4}


def test_read_json_object_hint_bytes_and_type():
    with pytest.raises(ValidationError, match=r"^truths lines must be valid JSON; found an error "
                                              r"at column 1: Expecting value in 'x'$"):
        read_json_object("x", where="truths lines", hint=" in 'x'")
    with pytest.raises(ValidationError) as info:
        read_json_object(b'{"a": "\xff"}', where="a.json:", source="a.json", doc_id="a")
    assert str(info.value) == ("a.json: must be UTF-8 text; found an undecodable byte at "
                               "position 7")
    assert info.value.location == {"source": "a.json", "doc_id": "a"}
    with pytest.raises(ValidationError, match=r"^text must be a JSON string; found dict$"):
        read_json_object({"a": 1}, where="text")  # type: ignore[arg-type]


# --------------------------------------------------------------------- parse_json_nodes
class _Object(list):  # type: ignore[type-arg]
    """An object of the generated trees: (key, value) pairs, so that a key may repeat."""


_KEYS = st.sampled_from(["a", "b", 'say "hi"', "back\\slash", "é", "\u2028", "", "a b"])
_SCALARS = (st.none() | st.booleans() | st.integers(-(10**20), 10**20)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6))
_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.lists(st.tuples(_KEYS, inner), max_size=4).map(_Object),
    max_leaves=25)
_SPACE = st.sampled_from(["", " ", "  ", "\n", "\t", "\r\n "])


class _Rendered:
    """JSON text written from a tree, remembering where every value and key went: the
    reference the reader's positions are checked against."""

    def __init__(self, spaces: list[str], ascii_only: bool) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.spaces, self.ascii_only, self.turn = spaces or [""], ascii_only, 0

    def put(self, piece: str) -> int:
        at = self.size
        self.parts.append(piece)
        self.size += len(piece)
        return at

    def space(self) -> None:
        self.put(self.spaces[self.turn % len(self.spaces)])
        self.turn += 1

    def value(self, tree: Any) -> dict[str, Any]:
        """Writes ``tree``; returns {"kind", "start", "end", "children", "keys"}."""
        if isinstance(tree, _Object) or isinstance(tree, list):
            is_object = isinstance(tree, _Object)
            start = self.put("{" if is_object else "[")
            children, keys = [], []
            for i, item in enumerate(tree):
                if i:
                    self.space()
                    self.put(",")
                self.space()
                if is_object:
                    key, item = item
                    keys.append((key, self.put(json.dumps(key, ensure_ascii=self.ascii_only))))
                    self.space()
                    self.put(":")
                    self.space()
                children.append(self.value(item))
            self.space()
            end = self.put("}" if is_object else "]") + 1
            return {"kind": "object" if is_object else "array", "start": start, "end": end,
                    "children": children, "keys": keys}
        literal = json.dumps(tree, ensure_ascii=self.ascii_only)
        start = self.put(literal)
        if isinstance(tree, str):  # the content between the quotes
            return {"kind": "string", "start": start + 1, "end": start + len(literal) - 1,
                    "value": tree}
        kind = "null" if tree is None else "bool" if isinstance(tree, bool) else "number"
        return {"kind": kind, "start": start, "end": start + len(literal), "value": tree}

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _render(tree: Any, spaces: list[str], ascii_only: bool = True) -> tuple[str, dict[str, Any]]:
    out = _Rendered(spaces, ascii_only)
    where = out.value(tree)
    return out.text, where


def _same_positions(node: JsonNode, where: dict[str, Any], text: str) -> None:
    assert (node.kind, node.start, node.end) == (where["kind"], where["start"], where["end"])
    if node.kind == "object":
        assert [k for k, _ in node.members] == [k for k, _ in where["keys"]]
        for k, (_, at) in enumerate(where["keys"]):
            assert node.key_start(k, text) == at
    children = node.items or [child for _, child in node.members]
    assert len(children) == len(where.get("children", []))
    for child, sub in zip(children, where.get("children", []), strict=True):
        _same_positions(child, sub, text)
    if "value" in where:
        assert type(node.value) is type(where["value"]) and node.value == where["value"]


@settings(max_examples=150, deadline=None)
@given(_TREES, st.lists(_SPACE, max_size=5), st.booleans())
def test_every_value_is_found_where_it_was_written(tree: Any, spaces: list[str],
                                                   ascii_only: bool) -> None:
    text, where = _render(tree, spaces, ascii_only)
    node, end = parse_json_nodes(text)
    assert end == len(text)
    _same_positions(node, where, text)


def _decoded(node: JsonNode) -> Any:
    """The value json.loads gives (a repeated key: the last one wins)."""
    if node.kind == "object":
        return {key: _decoded(child) for key, child in node.members}
    if node.kind == "array":
        return [_decoded(child) for child in node.items]
    return node.value


@settings(max_examples=300, deadline=None)
@given(_TREES, st.lists(_SPACE, max_size=3), st.data())
def test_the_reader_agrees_with_the_standard_library_on_broken_text(tree: Any,
                                                                    spaces: list[str],
                                                                    data: Any) -> None:
    # one character deleted, replaced or inserted: json's own raw_decode (the C scanner)
    # is the reference for what is JSON, where it breaks and why
    text, _ = _render(tree, spaces)
    at = data.draw(st.integers(0, len(text)))
    piece = data.draw(st.sampled_from(["", ",", ":", '"', "]", "}", "[", "{", "x", "\\",
                                       "\x01", "-", "0"]))
    cut = data.draw(st.integers(0, 1))
    broken = text[:at] + piece + text[at + cut:]
    try:
        value, end = json.JSONDecoder().raw_decode(broken, 0)
    except json.JSONDecodeError as exc:
        with pytest.raises(JsonSyntaxError) as info:
            parse_json_nodes(broken)
        assert (info.value.msg, info.value.pos) == (exc.msg, exc.pos)
    else:
        node, got_end = parse_json_nodes(broken)
        assert got_end == end
        assert json.dumps(_decoded(node)) == json.dumps(value)


def _first_repeat_reference(where: dict[str, Any]) -> tuple[str, int] | None:
    """The decoder's order: children first (an inner object closes first), then the keys."""
    for child in where.get("children", []):
        found = _first_repeat_reference(child)
        if found:
            return found
    seen = set()
    for key, at in where.get("keys", []):
        if key in seen:
            return key, at
        seen.add(key)
    return None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_KEYS, _TREES), max_size=5).map(_Object),
       st.lists(st.sampled_from(["", " ", "\t"]), max_size=3))
def test_a_repeated_key_is_located_where_it_was_written(tree: Any, spaces: list[str]) -> None:
    text, where = _render(tree, spaces)  # one line: the column is the position + 1
    repeat = _first_repeat_reference(where)
    if repeat is None:
        assert read_json_object(text, where="t:") == json.loads(text)
        return
    key, at = repeat
    with pytest.raises(ValidationError) as info:
        read_json_object(text, where="t:")
    assert str(info.value) == (f"t: must not repeat a key in one object; found {key!r} "
                               f"again at column {at + 1}")


def test_positions_reading_refuses_constants_and_control_characters_on_request():
    assert parse_json_nodes('{"a": NaN}')[0].members[0][1].value != 0  # NaN, as json reads
    with pytest.raises(JsonSyntaxError) as info:
        parse_json_nodes('{"a": NaN}', constants=False)
    assert (info.value.msg, info.value.pos, info.value.inside) == ("Expecting value", 6,
                                                                   "object")
    with pytest.raises(JsonSyntaxError, match="Invalid control character at"):
        parse_json_nodes('["a\nb"]')
    node, _ = parse_json_nodes('["a\nb"]', strict=False)  # a model's raw newline
    assert node.items[0].value == "a\nb"


def test_positions_reading_bounds_the_nesting_before_parsing():
    deep = "[" * 100_000 + "]" * 100_000  # 200,000 recursive calls if nothing checked
    with pytest.raises(JsonTooDeep) as info:
        parse_json_nodes(deep, max_depth=200)
    assert (info.value.pos, info.value.msg) == (200, "Nesting deeper than 200 levels")
    # nesting after the value is none of its business; a mistake before the deep bracket
    # is reported as the mistake it is
    assert parse_json_nodes("[1] " + deep, max_depth=3)[1] == 3
    with pytest.raises(JsonSyntaxError) as info:
        parse_json_nodes("[1 2, " + deep, max_depth=3)
    assert not isinstance(info.value, JsonTooDeep) and info.value.pos == 3


def test_a_repeated_key_at_the_deepest_nesting_allowed_is_located():
    # 500 levels cost 1,000 frames to read with positions: the reader makes room, then
    # gives the interpreter its limit back
    limit = sys.getrecursionlimit()
    text = '{"a": ' + "[" * 498 + '{"x": 1, "x": 2}' + "]" * 498 + "}"
    with pytest.raises(ValidationError, match=r"found 'x' again at column 514$"):
        read_json_object(text, where="t:", limits=InputLimits(max_depth=500))
    assert text[513:516] == '"x"' and sys.getrecursionlimit() == limit


# ------------------------------------------------------------------- no copies are left
# Calls that only _files.py may make: every writer stages through it.
ONLY_IN_FILES = {("os", "replace"), ("tempfile", "mkdtemp"), ("tempfile", "mkstemp"),
                 ("tempfile", "NamedTemporaryFile")}
# Private copies of the shared helpers, by the names they had (each helper lives once, in
# its shared module).
COPIES = {"_is_real", "_is_number", "_check_seed", "_is_missing", "_is_missing_scalar",
          "_missing", "_write_atomic", "_atomic_write", "_json_object", "_publish",
          "_staging"}


def _calls_and_defs(path: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))  # docstrings are not calls
    calls, defs = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) \
                and (node.func.value.id, node.func.attr) in ONLY_IN_FILES:
            calls.append((node.lineno, f"{node.func.value.id}.{node.func.attr}"))
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "tempfile"):
            for alias in node.names:  # from os import replace: the same call by another name
                if (node.module, alias.name) in ONLY_IN_FILES:
                    calls.append((node.lineno, f"from {node.module} import {alias.name}"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in COPIES:
            defs.append((node.lineno, node.name))
    return calls, defs


def test_no_copies_of_the_boundary_helpers_are_left():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        calls, defs = _calls_and_defs(path)
        where = path.relative_to(SRC.parent)
        if path.name != "_files.py" or path.parent != SRC:
            found += [f"{where}:{line}: {name} (use confcal._files)" for line, name in calls]
        found += [f"{where}:{line}: def {name} (use confcal._validation or confcal._files)"
                  for line, name in defs]
    assert not found, "\n".join(found)


def test_the_copy_finder_finds_copies(tmp_path):
    copy = tmp_path / "copy.py"
    copy.write_text('"""tempfile.mkdtemp() in a docstring is fine."""\n'
                    "import os\nfrom tempfile import mkstemp\n\n"
                    "def _is_real(v):\n    return True\n\n"
                    "def write(a, b):\n    os.replace(a, b)\n")
    calls, defs = _calls_and_defs(copy)
    assert calls == [(3, "from tempfile import mkstemp"), (9, "os.replace")]
    assert defs == [(5, "_is_real")]


# ------------------------------------------------------------- crash safety and paths
_KILLED = r"""
import os, signal, sys
from pathlib import Path
import confcal._files as files

out, mode = Path(sys.argv[1]), sys.argv[2]
if mode == "fallback":  # no renameat2: the two renames, killed between them
    files._exchange = lambda a, b: False
    calls = []
    real_replace = os.replace
    def replace(src, dst):
        calls.append(src)
        if len(calls) == 2:  # the previous output moved away, the new one not yet in place
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)
    files.os.replace = replace
else:  # the atomic swap done, killed before the previous output is removed
    def retire(previous, out, listed):
        os.kill(os.getpid(), signal.SIGKILL)
    files._retire = retire
with files.staged_folder(out, "report") as staging:
    (staging / "report.md").write_text("new")
"""


def _kill_while_publishing(tmp_path: Path, mode: str) -> Path:
    import subprocess

    out = tmp_path / "report"
    _previous(out, {"report.md": "old"})
    done = subprocess.run([sys.executable, "-c", _KILLED, str(out), mode],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == -9, done.stderr  # really killed at that point
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_a_kill_after_the_atomic_swap_leaves_the_new_report_and_the_next_run_cleans(tmp_path):
    out = _kill_while_publishing(tmp_path, "swap")
    assert (out / "report.md").read_text() == "new"  # never missing: swapped in one step
    stale = [n for n in _entries(tmp_path) if n != "report"]
    assert len(stale) == 1 and stale[0].startswith(f".report.tmp-{files_module._host()}-")
    with staged_folder(out, "report") as staging:
        (staging / "report.md").write_text("newer")
    assert _entries(tmp_path) == ["report"] and (out / "report.md").read_text() == "newer"


def test_a_kill_between_the_fallback_renames_is_repaired_by_the_next_run(tmp_path):
    out = _kill_while_publishing(tmp_path, "fallback")
    # what the kill left: no report folder, the previous one in .report.old-*, the staging
    assert "report" not in _entries(tmp_path)
    assert sorted(n.split("-")[0] for n in _entries(tmp_path)) == [".report.old", ".report.tmp"]
    # the next run, before any work, puts the previous report back and removes the staging
    files_module.check_destination(out, "report")
    assert _entries(tmp_path) == ["report"] and (out / "report.md").read_text() == "old"


def test_a_killed_writers_staging_is_removed_only_when_stale(tmp_path):
    out = tmp_path / "report"
    host = files_module._host()
    dead = 2**22 + 12345  # above Linux's pid_max default (4194304): no such process
    gone = tmp_path / f".report.tmp-{host}-{dead}-abcd1234"
    live = tmp_path / f".report.tmp-{host}-{os.getpid()}-abcd1234"  # this process: kept
    legacy_new = tmp_path / ".report.old-k2j4h5g6"  # pre-pid name, recent: kept
    legacy_old = tmp_path / ".report.tmp-zz99yy88"  # pre-pid name, older than a week
    other = tmp_path / ".report.tmp-mine"  # not the pattern: never touched
    cousin = tmp_path / f".reports.tmp-{host}-{dead}-abcd1234"  # another output's
    for folder in (gone, live, legacy_new, legacy_old, other, cousin):
        folder.mkdir()
    week = files_module.STALE_AFTER_SECONDS + 60
    os.utime(legacy_old, (os.path.getmtime(legacy_old) - week,) * 2)
    tmp_file = tmp_path / f".report.{host}-{dead}-q1w2e3r4.tmp"
    tmp_file.write_bytes(b"x" * 1000)
    removed = files_module.clean_stale_staging(out)
    assert sorted(p.name for p in removed) == sorted([gone.name, legacy_old.name,
                                                      tmp_file.name])
    assert _entries(tmp_path) == sorted([live.name, legacy_new.name, other.name, cousin.name])


def test_staged_file_removes_a_killed_writers_temporary_file(tmp_path):
    # what kill -9 during `confcal score -o table.parquet` leaves: a hidden .tmp beside it
    host = files_module._host()
    left = tmp_path / f".table.parquet.{host}-{2**22 + 7}-a1b2c3d4.tmp"
    left.write_bytes(b"\0" * 4096)
    with StagedFile(tmp_path / "table.parquet") as staged:
        assert staged.tmp.name.startswith(f".table.parquet.{host}-{os.getpid()}-")
        staged.tmp.write_text("rows")
    assert _entries(tmp_path) == ["table.parquet"]


def test_outputs_need_an_existing_parent_and_are_checked_before_work(tmp_path):
    with pytest.raises(ValidationError, match=r"the folder of the report folder must exist "
                                              r"\(it is not created for you.*found nothing"):
        with staged_folder(tmp_path / "typo" / "report", "report"):
            pytest.fail("the block must not run")
    assert _entries(tmp_path) == []
    with pytest.raises(ValidationError, match=r"the entity table must be a file; found a "
                                              r"folder"):
        files_module.check_output_file(tmp_path, "entity table")
    with pytest.raises(ValidationError, match=r"folder of the entity table must exist"):
        files_module.check_output_file(tmp_path / "no" / "t.parquet", "entity table")
    assert files_module.check_output_file(tmp_path / "t.parquet") == tmp_path / "t.parquet"


def test_the_current_folder_is_refused_as_a_report_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for out in (Path("."), tmp_path, tmp_path.parent):
        with pytest.raises(ValidationError, match=r"must not be the current folder or hold "
                                                  r"it.*such as -o report"):
            files_module.check_destination(out, "report")
    assert _entries(tmp_path) == []


def test_a_symlinked_report_folder_keeps_its_link_and_gets_the_new_report(tmp_path):
    target = tmp_path / "real"
    _previous(target, {"report.md": "old"})
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    with staged_folder(link, "report") as staging:
        (staging / "report.md").write_text("new")
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert (target / "report.md").read_text() == "new"
    assert _entries(tmp_path) == ["link", "real"]


def test_a_symlinked_file_is_written_through(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    atomic_write(link, "new")
    assert link.is_symlink() and target.read_text() == "new"


@pytest.mark.parametrize("kind", ["folder", "symlink", "fifo"])
def test_an_entry_of_a_written_name_but_another_kind_is_never_deleted(tmp_path, kind):
    # the attack: a folder named metrics.csv inside the report folder was deleted, with
    # everything in it, when the report replaced its previous output
    out = tmp_path / "report"
    _previous(out, {"report.md": "old", "metrics.csv": "old"})
    name = "metrics.csv"
    (out / name).unlink()
    if kind == "folder":
        (out / name).mkdir()
        (out / name / "thesis.tex").write_text("years of work")
    elif kind == "symlink":
        (tmp_path / "mine.txt").write_text("mine")
        (out / name).symlink_to(tmp_path / "mine.txt")
    else:
        os.mkfifo(out / name)
    shown = {"folder": "metrics.csv/", "symlink": "metrics.csv", "fifo": "metrics.csv"}[kind]
    found = {"folder": "folder", "symlink": "symlink", "fifo": "special file"}[kind]
    with pytest.raises(ValidationError, match=rf"found 1 entry it did not write, first "
                                              rf"'{shown}' \(a {found} where the run wrote a "
                                              rf"file\); nothing was removed"), \
            staged_folder(out, "report") as staging:
        (staging / name).write_text("new")
    assert (out / name).exists() or (out / name).is_symlink()
    if kind == "folder":
        assert (out / name / "thesis.tex").read_text() == "years of work"
    if kind == "symlink":
        assert (tmp_path / "mine.txt").read_text() == "mine"
    assert (out / "report.md").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_manifest_lists_every_file_and_folder_the_run_wrote(tmp_path):
    out = tmp_path / "run"
    _previous(out, {"records.jsonl": "r\n", "doc1/": "", "doc1/document.txt": "text"},
              "qa run output")
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert (manifest["format"], manifest["version"], manifest["what"]) == (
        "confcal.output-manifest", 1, "qa run output")
    import hashlib
    assert manifest["entries"] == [
        {"path": "doc1", "kind": "folder"},
        {"path": "doc1/document.txt", "kind": "file", "size": 4,
         "sha256": hashlib.sha256(b"text").hexdigest()},
        {"path": "records.jsonl", "kind": "file", "size": 2,
         "sha256": hashlib.sha256(b"r\n").hexdigest()}]
    with pytest.raises(AssertionError, match="must not write .confcal-manifest.json"), \
            staged_folder(out, "qa run output") as staging:
        (staging / MANIFEST_NAME).write_text("{}")
    assert (out / "doc1" / "document.txt").read_text() == "text"


@pytest.mark.parametrize("change, why", [
    ("beside", r"'notes.txt' \(not in its manifest \.confcal-manifest\.json\)"),
    ("inside", r"'doc1/notes.txt' \(not in its manifest"),
    ("longer", r"'report.md' \(changed since the run wrote it: 9 bytes, written 3\)"),
    ("edited", r"'report.md' \(changed since the run wrote it: another SHA-256\)"),
    ("other run", r"must be the manifest of a previous confcal report .*found the manifest "
                  r"of a confcal 'qa output'"),
    ("no manifest", r"first 'doc1/' \(no manifest \.confcal-manifest\.json lists"),
])
def test_a_run_refuses_what_it_did_not_write_and_removes_nothing(tmp_path, change, why):
    out = tmp_path / "report"
    _previous(out, {"report.md": "old", "doc1/": ""},
              "qa output" if change == "other run" else "report")
    if change == "beside":
        (out / "notes.txt").write_text("mine")
    elif change == "inside":  # in a folder the run wrote: not the run's either
        (out / "doc1" / "notes.txt").write_text("mine")
    elif change == "longer":
        (out / "report.md").write_text("old, mine")
    elif change == "edited":  # same size, another text
        (out / "report.md").write_text("OLD")
    elif change == "no manifest":
        (out / MANIFEST_NAME).unlink()
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    with pytest.raises(ValidationError, match=why):
        with staged_folder(out, "report") as staging:
            (staging / "report.md").write_text("new")
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before
    assert (out / "report.md").read_text() in ("old", "OLD", "old, mine")


def test_a_previous_output_replaced_whole_when_everything_in_it_is_its_own(tmp_path):
    out = tmp_path / "run"
    _previous(out, {"run.json": "{}", "doc1/": "", "doc1/a.txt": "a", "doc2/": ""},
              "qa run output")
    (out / "doc2").rmdir()  # what the run wrote may be gone: nothing to remove
    with staged_folder(out, "qa run output") as staging:
        (staging / "doc3").mkdir()
    assert _entries(out) == ["doc3"] and _entries(tmp_path) == ["run"]


_VICTIM = "years of work"


def _hostile(tmp_path: Path, entries: list[dict[str, Any]]) -> Path:
    """A report folder whose manifest was edited by hand to list ``entries``, with a
    user's file and folder beside it that must survive."""
    out = tmp_path / "report"
    _previous(out, {"report.md": "old"})
    (tmp_path / "victim.txt").write_text(_VICTIM)
    (tmp_path / "thesis").mkdir()
    (tmp_path / "thesis" / "ch1.tex").write_text(_VICTIM)
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest["entries"] += entries
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    return out


def _digest(text: str) -> dict[str, Any]:
    import hashlib
    return {"size": len(text.encode()), "sha256": hashlib.sha256(text.encode()).hexdigest()}


@pytest.mark.parametrize("path", ["../victim.txt", "../thesis", "/etc/passwd", "a/../../x",
                                  "./report.md", "", "doc//x", "..", "a\\..\\..\\x",
                                  "x\0y"])
def test_a_manifest_path_leaving_the_folder_is_refused(tmp_path, path):
    out = _hostile(tmp_path, [{"path": path, "kind": "file", **_digest(_VICTIM)}])
    with pytest.raises(ValidationError, match=r"must be the manifest of a previous confcal "
                                              r"report .*a path must stay inside the folder"):
        with staged_folder(out, "report") as staging:
            (staging / "report.md").write_text("new")
    assert (tmp_path / "victim.txt").read_text() == _VICTIM
    assert (tmp_path / "thesis" / "ch1.tex").read_text() == _VICTIM
    assert (out / "report.md").read_text() == "old"


@pytest.mark.parametrize("target", ["file", "folder"])
def test_a_symlink_listed_in_a_manifest_is_never_followed(tmp_path, target):
    # the manifest lists what the link points at, with the right digests: still the user's
    if target == "file":
        entries = [{"path": "linked.txt", "kind": "file", **_digest(_VICTIM)}]
    else:
        entries = [{"path": "linked", "kind": "folder"},
                   {"path": "linked/ch1.tex", "kind": "file", **_digest(_VICTIM)}]
    out = _hostile(tmp_path, entries)
    name = "linked.txt" if target == "file" else "linked"
    (out / name).symlink_to(tmp_path / ("victim.txt" if target == "file" else "thesis"))
    with pytest.raises(ValidationError, match=rf"first '{name}' \(a symlink where the run "
                                              rf"wrote a {target}\)"):
        with staged_folder(out, "report") as staging:
            (staging / "report.md").write_text("new")
    assert (tmp_path / "victim.txt").read_text() == _VICTIM
    assert (tmp_path / "thesis" / "ch1.tex").read_text() == _VICTIM


@pytest.mark.parametrize("manifest, why", [
    ("symlink", "found no regular file"),
    ("folder", "found no regular file"),
    ("not json", "must be valid JSON"),
    ("list", "must be a JSON object"),
    ("format", "found format 'mine' version 1"),
    ("entries", "found entries of type dict"),
    ("kind", "'x' of kind 'symlink' \\(expected 'file' or 'folder'\\)"),
    ("digest", "'x' without a size and a SHA-256"),
    ("repeat", "repeating the path 'report.md'"),
])
def test_a_manifest_not_written_by_confcal_is_refused(tmp_path, manifest, why):
    out = _hostile(tmp_path, [])
    path = out / MANIFEST_NAME
    data = json.loads(path.read_text())
    if manifest in ("symlink", "folder"):
        path.unlink()
        if manifest == "symlink":
            path.symlink_to(tmp_path / "victim.txt")
        else:
            path.mkdir()
    elif manifest == "not json":
        path.write_text("{")
    elif manifest == "list":
        path.write_text("[]")
    else:
        data.update({"format": {"format": "mine"}, "entries": {"entries": {}},
                     "kind": {"entries": data["entries"] + [{"path": "x", "kind": "symlink"}]},
                     "digest": {"entries": data["entries"] + [{"path": "x", "kind": "file",
                                                               "size": -1, "sha256": "0"}]},
                     "repeat": {"entries": data["entries"] * 2}}[manifest])
        path.write_text(json.dumps(data))
    with pytest.raises(ValidationError, match=why):
        check_destination(out, "report")
    assert (tmp_path / "victim.txt").read_text() == _VICTIM
    assert (out / "report.md").read_text() == "old"


@pytest.mark.parametrize("swap", [True, False])
def test_an_entry_appearing_during_the_publish_is_kept_with_a_warning(tmp_path, monkeypatch,
                                                                        swap):
    # between the last check and the swap a user's file lands in the folder: of the
    # previous output only the run's own entries are removed (with the atomic swap, or
    # the two renames where it does not exist)
    out = tmp_path / "report"
    _previous(out, {"report.md": "old", "doc1/": "", "doc1/a.txt": "a"})
    real = files_module._exchange

    def late(a: Path, b: Path) -> bool:
        (out / "doc1" / "late.txt").write_text(_VICTIM)
        return real(a, b) if swap else False

    monkeypatch.setattr(files_module, "_exchange", late)
    with pytest.warns(RuntimeWarning, match=r"entries that appeared in the previous output "
                                            r"while it was replaced are kept in"):
        with staged_folder(out, "report") as staging:
            (staging / "report.md").write_text("new")
    assert (out / "report.md").read_text() == "new" and _entries(out) == ["report.md"]
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("report.kept-")]
    assert len(kept) == 1, _entries(tmp_path)
    # only the late file and the folders that hold it are left: the run's own are gone
    assert sorted(str(p.relative_to(kept[0])) for p in kept[0].rglob("*")) == [
        "report", "report/.confcal-manifest.json", "report/doc1", "report/doc1/late.txt"]
    assert sorted(n for n in _entries(tmp_path) if n != kept[0].name) == ["report"]


def test_a_written_folder_is_listed_as_a_folder(tmp_path):
    out = tmp_path / "run"
    _previous(out, {"doc1/": "", "doc1/answers.jsonl": "old"}, "qa run output")
    with staged_folder(out, "qa run output") as staging:
        (staging / "doc1").mkdir()
    assert (out / "doc1").is_dir() and not (out / "doc1" / "answers.jsonl").exists()
    (out / "doc1").rmdir()
    (out / "doc1").write_text("a file where a folder was written")
    with pytest.raises(ValidationError, match=r"first 'doc1' \(a file where the run wrote a "
                                              r"folder\)"):
        check_destination(out, "qa run output")


@settings(max_examples=examples(40), deadline=None)
@given(entries=st.lists(st.fixed_dictionaries({
    "path": st.text(alphabet=["a", "b", ".", "/", "\\", "\0", " "], max_size=12)
    | st.sampled_from(["../victim.txt", "../..", "/", "report.md", "a", "a/b"]),
    "kind": st.sampled_from(["file", "folder", "symlink", None])}), max_size=4),
       link=st.booleans())
def test_no_hand_edited_manifest_removes_anything_outside_the_folder(entries, link):
    import hashlib
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        out = root / "report"
        _previous(out, {"report.md": "old", "a/": ""})
        (root / "victim.txt").write_text(_VICTIM)
        if link:  # a symlink inside, to the user's file, that a manifest may name
            (out / "a" / "b").symlink_to(root / "victim.txt")
        manifest = json.loads((out / MANIFEST_NAME).read_text())
        digest = {"size": len(_VICTIM), "sha256": hashlib.sha256(_VICTIM.encode()).hexdigest()}
        manifest["entries"] += [{**e, **(digest if e["kind"] == "file" else {})}
                                for e in entries]
        (out / MANIFEST_NAME).write_text(json.dumps(manifest))
        try:
            with staged_folder(out, "report") as staging:
                (staging / "report.md").write_text("new")
        except ValidationError:
            assert (out / "report.md").read_text() == "old"  # refused: nothing removed
            assert not link or (out / "a" / "b").is_symlink()
        else:
            assert not link  # a symlink is never the run's
            assert _entries(out) == ["report.md"] and (out / "report.md").read_text() == "new"
        assert (root / "victim.txt").read_text() == _VICTIM
        assert sorted(p.name for p in root.iterdir()) == ["report", "victim.txt"]
