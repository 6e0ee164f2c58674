"""The chat protocol's cache: answers keyed by their request, verified when read back."""

from __future__ import annotations

import json
import shutil
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _profiles import examples
from confcal._chat import (
    SAMPLING_PARAMETERS,
    ChatCache,
    ChatRequest,
    ChatResponse,
    check_sampling,
)
from confcal.exceptions import ValidationError


class Client:
    provider, model, supports_logprobs = "openai-compatible", "m1", False


class Other(Client):
    model = "m2"


def test_an_answer_comes_back_for_its_own_request_only(tmp_path):
    cache = ChatCache(tmp_path / "c", kind="qa-judge")
    a, b = ChatRequest("sys", "question a"), ChatRequest("sys", "question b")
    ka, kb = cache.key(Client(), a), cache.key(Client(), b)
    assert ka != kb
    cache.put(ka, ChatResponse("1", "stop"))
    assert cache.get(ka) == ChatResponse("1", "stop")
    assert cache.get(kb) is None
    # another model, another kind: other keys
    assert cache.key(Other(), a) != ka
    assert ChatCache(tmp_path / "c", kind="extraction").key(Client(), a) != ka


def test_an_entry_copied_from_another_request_is_rejected_not_used(tmp_path):
    cache = ChatCache(tmp_path, kind="qa-run")
    a, b = ChatRequest("sys", "document A"), ChatRequest("sys", "document B")
    ka, kb = cache.key(Client(), a), cache.key(Client(), b)
    cache.put(ka, ChatResponse("answer for A", "stop"))
    cache.path(kb).parent.mkdir(exist_ok=True)
    shutil.copy(cache.path(ka), cache.path(kb))  # a user copies a cache file by hand
    assert cache.get(kb) is None
    assert cache.rejected == [cache.path(kb)]
    cache.put(kb, ChatResponse("answer for B", "stop"))  # asked again, overwritten
    assert cache.get(kb).text == "answer for B"


def test_an_edited_identity_no_longer_matches_its_key(tmp_path):
    cache = ChatCache(tmp_path, kind="qa-run")
    key = cache.key(Client(), ChatRequest("sys", "text"))
    cache.put(key, ChatResponse("x", "stop"))
    data = json.loads(cache.path(key).read_text())
    data["identity"]["model"] = "m9"
    cache.path(key).write_text(json.dumps(data))
    fresh = ChatCache(tmp_path, kind="qa-run")  # a new run: no identity remembered yet
    assert fresh.get(key) is None and fresh.rejected == [cache.path(key)]


def test_an_edited_answer_is_rejected_not_used(tmp_path):
    # the identity still matches its key; only the answer was changed by hand
    cache = ChatCache(tmp_path, kind="qa-judge")
    key = cache.key(Client(), ChatRequest("sys", "Is 2 + 2 = 5?"))
    cache.put(key, ChatResponse("0", "stop"))
    assert cache.get(key) == ChatResponse("0", "stop")
    data = json.loads(cache.path(key).read_text())
    data["response"]["text"] = "1"
    cache.path(key).write_text(json.dumps(data))
    assert cache.get(key) is None and cache.rejected == [cache.path(key)]
    fresh = ChatCache(tmp_path, kind="qa-judge")  # a new run, not knowing the identity
    assert fresh.get(key) is None and fresh.rejected == [cache.path(key)]


def test_a_file_that_is_no_cache_entry_is_refetched_and_replaced(tmp_path):
    cache = ChatCache(tmp_path, kind="qa-run")
    key = cache.key(Client(), ChatRequest("sys", "text"))
    cache.path(key).parent.mkdir()
    cache.path(key).write_text("not json")
    assert cache.get(key) is None and cache.unreadable == [cache.path(key)]
    cache.put(key, ChatResponse("fresh", "stop"))
    assert cache.get(key).text == "fresh" and len(cache.unreadable) == 1


def test_a_folder_where_an_entry_belongs_is_an_error_naming_it_and_kept(tmp_path):
    # it may hold the user's files: never replaced, never emptied
    cache = ChatCache(tmp_path, kind="qa-run")
    key = cache.key(Client(), ChatRequest("sys", "text"))
    cache.path(key).mkdir(parents=True)
    (cache.path(key) / "mine.txt").write_text("keep")
    with pytest.raises(ValidationError, match=rf"{key}.*found a folder, which is not replaced"):
        cache.get(key)
    assert (cache.path(key) / "mine.txt").read_text() == "keep"


def test_nothing_secret_is_stored(tmp_path):
    cache = ChatCache(tmp_path, kind="qa-run")
    key = cache.key(Client(), ChatRequest("sys", "text"))
    cache.put(key, ChatResponse("x", "stop"))
    assert set(json.loads(cache.path(key).read_text())["identity"]) == {
        "format", "version", "kind", "provider", "model", "request"}


def test_the_folder_is_created_with_its_parents_and_a_file_in_the_way_is_an_error(tmp_path):
    cache = ChatCache(tmp_path / "runs" / "a" / "cache", kind="extraction")
    assert cache.directory.is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValidationError, match="must be a folder; found a file"):
        ChatCache(tmp_path / "file", kind="extraction")
    with pytest.raises(ValidationError, match="must be a folder that can be created"):
        ChatCache(tmp_path / "file" / "below", kind="extraction")


def test_concurrent_writers_and_readers_agree(tmp_path):
    # run_extraction keys, reads and writes from several threads at once
    from concurrent.futures import ThreadPoolExecutor

    cache = ChatCache(tmp_path, kind="extraction")
    requests = [ChatRequest("sys", f"document {i}") for i in range(64)]

    def roundtrip(request: ChatRequest) -> str:
        key = cache.key(Client(), request)
        cache.put(key, ChatResponse(f"answer to {request.text}", "stop"))
        return cache.get(key).text

    with ThreadPoolExecutor(8) as pool:
        texts = list(pool.map(roundtrip, requests))
    assert texts == [f"answer to document {i}" for i in range(64)] and cache.rejected == []


# ------------------------------------------------------------------- sampling parameters
def test_sampling_parameters_are_unset_by_default_and_sent_only_when_set():
    request = ChatRequest("s", "t")
    assert (request.temperature, request.top_p, request.top_k) == (None, None, None)
    assert request.sampling() == {}
    # an int temperature is kept as the float it means; top_k stays an int
    assert ChatRequest("s", "t", temperature=0, top_k=5).sampling() == {
        "temperature": 0.0, "top_k": 5}
    assert ChatRequest("s", "t", top_p=1).sampling() == {"top_p": 1.0}


@pytest.mark.parametrize("name, value, wanted", [
    ("temperature", -0.1, "a finite number >= 0"),
    ("temperature", float("inf"), "a finite number >= 0"),
    ("temperature", True, "a finite number >= 0"),
    ("temperature", "0", "a finite number >= 0"),
    ("top_p", 0, r"a number in \(0, 1\]"),
    ("top_p", 1.5, r"a number in \(0, 1\]"),
    ("top_p", float("nan"), r"a number in \(0, 1\]"),
    ("top_k", 0, "an integer >= 1"),
    ("top_k", 2.0, "an integer >= 1"),
    ("top_k", False, "an integer >= 1"),
])
def test_a_bad_sampling_parameter_is_refused_naming_it(name, value, wanted):
    with pytest.raises(ValidationError, match=f"^{name} must be {wanted}, or None to leave "
                                              f"it unset; found "):
        ChatRequest("s", "t", **{name: value})


def test_check_sampling_takes_only_the_sampling_names():
    assert check_sampling({"temperature": 0, "top_p": None}) == {"temperature": 0}
    with pytest.raises(ValidationError, match="sampling may name only temperature, top_p, "
                                              "top_k; found 'seed'"):
        check_sampling({"seed": 1})
    with pytest.raises(ValidationError, match="sampling must be a mapping"):
        check_sampling([("temperature", 0)])  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="^top_p must be a number in"):
        check_sampling({"top_p": 2})


@settings(max_examples=examples(50), deadline=None)
@given(st.fixed_dictionaries({}, optional={
    "temperature": st.floats(0, 2), "top_p": st.floats(0.01, 1), "top_k": st.integers(1, 99)}))
def test_a_request_leaving_sampling_to_the_server_never_shares_a_key(values):
    # the cache identity tells unset from set (temperature 0 included), parameter by
    # parameter: an answer asked one way is never served to a request asked another
    with tempfile.TemporaryDirectory() as folder:
        cache = ChatCache(folder, kind="extraction")
    request = ChatRequest("s", "t", **values)
    assert request.sampling() == {k: (float(v) if k != "top_k" else v)
                                  for k, v in values.items()}
    printed = request.fingerprint()
    assert all(printed[name] is None for name in SAMPLING_PARAMETERS if name not in values)
    base = ChatCache.digest(cache.identity(Client(), ChatRequest("s", "t")))
    assert (ChatCache.digest(cache.identity(Client(), request)) == base) == (not values)


@pytest.mark.parametrize("kind", ["fifo", "symlink-to-dev-zero", "symlink", "huge"])
def test_a_hostile_entry_is_refetched_never_a_hang_or_a_whole_read(tmp_path, kind,
                                                                   monkeypatch):
    # the attacks: a FIFO made `qa run` hang; a symlink to /dev/zero or a 3 GiB file was
    # read whole (MemoryError); now each is counted, asked again and replaced atomically
    import os
    import stat

    from confcal import _chat

    cache = ChatCache(tmp_path, kind="qa-run")
    key = cache.key(Client(), ChatRequest("sys", "text"))
    path = cache.path(key)
    path.parent.mkdir()
    real = tmp_path / "real.json"
    if kind == "fifo":
        os.mkfifo(path)  # nobody writes: an open for reading would block for ever
    elif kind == "symlink-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "symlink":
        cache.put(key, ChatResponse("hi", "stop"))
        path.rename(real)
        path.symlink_to(real)
    else:
        monkeypatch.setattr(_chat, "MAX_ENTRY_BYTES", 1000)  # a 3 GiB file, scaled
        path.write_bytes(b" " * 1001)
    before = real.read_bytes() if kind == "symlink" else None
    assert cache.get(key) is None and cache.unreadable == [path]
    cache.put(key, ChatResponse("fresh", "stop"))
    assert stat.S_ISREG(os.lstat(path).st_mode)  # the link or FIFO itself was replaced
    assert cache.get(key).text == "fresh"
    if kind == "symlink":
        assert real.read_bytes() == before  # the link's target is untouched
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left


@pytest.mark.parametrize("field, value", [("text", 5), ("usage", {"n": "x"}),
                                          ("tokens", [1]), ("top_logprobs", [3]),
                                          ("finish_reason", None)])
def test_an_entry_of_wrong_types_with_a_recomputed_digest_is_refetched(tmp_path, field, value):
    # the attack: the answer edited to wrong types and its digest recomputed, so that the
    # digest check passes: a traceback later
    cache = ChatCache(tmp_path, kind="qa-run")
    key = cache.key(Client(), ChatRequest("sys", "text"))
    cache.put(key, ChatResponse("hi", "stop", tokens=("h",), token_logprobs=(-0.1,),
                                top_logprobs=(({"token": "h", "logprob": -0.1},),)))
    data = json.loads(cache.path(key).read_text())
    data["response"][field] = value
    data["response_sha256"] = ChatCache.digest(data["response"])
    cache.path(key).write_text(json.dumps(data))
    assert cache.get(key) is None and cache.unreadable == [cache.path(key)]
    assert cache.rejected == []
