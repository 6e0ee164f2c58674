"""The chat protocol's cache: answers keyed by their request, verified when read back."""

from __future__ import annotations

import json
import shutil

import pytest

from confcal._chat import ChatCache, ChatRequest, ChatResponse
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


def test_a_file_that_is_no_cache_entry_is_an_error_naming_it(tmp_path):
    cache = ChatCache(tmp_path, kind="qa-run")
    key = cache.key(Client(), ChatRequest("sys", "text"))
    cache.path(key).parent.mkdir()
    cache.path(key).write_text("not json")
    with pytest.raises(ValidationError, match=key):
        cache.get(key)


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
