"""The Python client against a real tidemark serve: the session of the README."""

import datetime as dt
import threading
import time
import uuid

import pytest

from tidemark_client import Client, Memory, TidemarkError


@pytest.fixture
def tm(server):
    base, token, _ = server
    return Client(base, token)


@pytest.fixture
def coll(tm):
    name = "py-" + uuid.uuid4().hex[:8]
    tm.create_collection(name, dim=64, embedder="hashing")
    yield name
    tm.drop_collection(name)


def test_plain_text_truth(tm, coll):
    tm.put(coll, [Memory(id="v1", text="The API rate limit is 100 requests per minute.", valid_from="2025-01-01")])
    tm.put(coll, [Memory(id="v2", text="The API rate limit is 250 requests per minute.", valid_from="2025-06-01")])
    hits = tm.search(coll, text="What is the API rate limit?", k=5).hits
    assert [h.id for h in hits][:1] == ["v2"]
    assert "v1" not in [h.id for h in hits]
    past = tm.search(coll, text="What is the API rate limit?", as_of="2025-03-01", k=1).hits
    assert [h.id for h in past] == ["v1"]
    assert isinstance(hits[0].score, float) and hits[0].memory.text.startswith("The API rate limit is 250")


def test_upsert_and_if_version(tm, coll):
    tm.put(coll, [Memory(id="cfg", text="Backups run nightly.", metadata={"team": "ops"})])
    m = tm.get(coll, "cfg")
    assert m.revision == 1 and m.metadata == {"team": "ops"}
    res = tm.put(coll, [Memory(id="cfg", text="Backups run every six hours.", metadata={"team": "ops"}, if_version=m.revision)])
    assert res[0].outcome == "stored"
    with pytest.raises(TidemarkError) as e:
        tm.put(coll, [Memory(id="cfg", text="A lost update.", if_version=m.revision)])
    assert e.value.code == "conflict" and e.value.status == 409
    assert tm.get(coll, "cfg").revision == 2
    assert [v.revision for v in tm.history(coll, "cfg") if v.id == "cfg"] == [1, 2]


def test_filters_list_and_count(tm, coll):
    mems = [Memory(id=f"d{i:03d}", text=f"Handbook chunk {i} about topic {i % 5}.", metadata={"team": ["red", "blue"][i % 2], "page": i}) for i in range(120)]
    tm.put(coll, mems)
    hits = tm.search(coll, text="Handbook chunk about topic 3", k=10, filter={"team": "red", "page": {"$lt": 50}}).hits
    assert hits and all(h.memory.metadata["team"] == "red" and h.memory.metadata["page"] < 50 for h in hits)
    assert tm.count(coll) == 120
    assert tm.count(coll, filter={"$or": [{"page": {"$gte": 100}}, {"page": 0}]}) == 21
    page = tm.list(coll, limit=7)
    assert len(page.memories) == 7 and page.next_cursor
    # Pagination while another client writes: every memory there at the
    # start is listed once.
    stop = threading.Event()
    errors = []

    def writer():
        i = 0
        while not stop.is_set():
            try:
                tm.put(coll, [Memory(id=f"late{i}", text=f"Written during the listing, {i}.")])
            except TidemarkError as err:  # pragma: no cover - reported below
                errors.append(err)
                return
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        seen = [m.id for m in tm.iter_memories(coll, page_size=9)]
    finally:
        stop.set()
        t.join()
    assert not errors
    for m in mems:
        assert seen.count(m.id) == 1
    with pytest.raises(TidemarkError) as e:
        tm.search(coll, text="x", filter={"page": {"$near": 3}})
    assert e.value.code == "invalid_argument" and "$near" in e.value.message


def test_retract_and_purge(tm, coll):
    tm.put(coll, [Memory(id="wrong", text="The office opens at 7.", metadata={"kind": "hours"})])
    assert [h.id for h in tm.search(coll, text="The office opens at 7.", k=3).hits] == ["wrong"]
    before = dt.datetime.now(dt.timezone.utc)
    # Transaction times are kept to a few milliseconds near the
    # collection's epoch (about a second within half a year of it).
    time.sleep(0.05)
    res = tm.retract(coll, "wrong")
    assert res.ids == ["wrong"] and not res.purged
    assert tm.retract(coll, "wrong").unchanged
    assert tm.search(coll, text="The office opens at 7.", k=3).hits == []
    past = tm.search(coll, text="The office opens at 7.", k=3, as_of_tx=before).hits
    assert [h.id for h in past] == ["wrong"]
    m = tm.get(coll, "wrong")
    assert m.retracted_by == "pytest" and m.retracted_at is not None and m.visible is False
    tm.put(coll, [Memory(id="secret", text="The vault code is tangerine-4471.")])
    assert tm.purge(coll, "secret").purged
    with pytest.raises(TidemarkError) as e:
        tm.get(coll, "secret")
    assert e.value.code == "not_found"
    with pytest.raises(TidemarkError) as e:
        tm.retract(coll, "nobody")
    assert e.value.code == "not_found" and e.value.status == 404


def test_errors_carry_the_code(server):
    base, _, _ = server
    with pytest.raises(TidemarkError) as e:
        Client(base, "not-a-valid-token-000000").collections()
    assert e.value.code == "unauthenticated" and e.value.status == 401
    with pytest.raises(TidemarkError) as e:
        Client("http://127.0.0.1:1", "x").collections()
    assert e.value.code == "unreachable"
