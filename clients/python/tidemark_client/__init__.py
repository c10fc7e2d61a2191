"""A client for tidemark's HTTP API: what is similar and still true.

Standard library only. Every call is synchronous; a failed call raises
TidemarkError carrying the server's error code (``err.code``, one of the
codes of ``api/errors.go``: ``not_found``, ``conflict``, ``invalid_argument``
...), its HTTP status and its message. Times are ``datetime`` objects
(timezone-aware; naive ones are taken as UTC) or ``YYYY-MM-DD`` strings.

    from tidemark_client import Client, Memory

    tm = Client("http://127.0.0.1:8080", token)
    tm.create_collection("kb", dim=384, embedder="hashing")
    tm.put("kb", [Memory(id="limit", text="The API rate limit is 100 requests per minute.",
                         metadata={"team": "platform"})])
    for hit in tm.search("kb", text="What is the rate limit?", filter={"team": "platform"}).hits:
        print(hit.id, hit.score, hit.memory.text)
    for m in tm.iter_memories("kb", filter={"team": "platform"}):
        print(m.id, m.revision)
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional, Sequence, Union

__all__ = [
    "Client",
    "TidemarkError",
    "Memory",
    "PutResult",
    "Hit",
    "SearchResult",
    "MemoryPage",
    "RetractResult",
    "Collection",
]

Time = Union[_dt.datetime, _dt.date, str]


class TidemarkError(Exception):
    """A call the server refused, or that never reached it (code "unreachable")."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


def _time(t: Optional[Time]) -> Optional[str]:
    if t is None:
        return None
    if isinstance(t, str):
        if len(t) == 10 and t[4] == "-" and t[7] == "-":
            return t + "T00:00:00Z"  # a date: midnight UTC
        return t
    if isinstance(t, _dt.datetime):
        if t.tzinfo is None:
            t = t.replace(tzinfo=_dt.timezone.utc)
        return t.isoformat()
    if isinstance(t, _dt.date):
        return t.isoformat() + "T00:00:00Z"
    raise TypeError(f"a time must be a datetime, a date or a string, not {type(t).__name__}")


def _parse_time(s: Optional[str]) -> Optional[_dt.datetime]:
    if s is None:
        return None
    # Python 3.11 reads RFC 3339 with "Z" and any fraction digits.
    return _dt.datetime.fromisoformat(s)


_TIME_FIELDS = ("valid_from", "valid_to", "recorded_at", "created", "retracted_at")


@dataclass
class Memory:
    """A memory: what a client writes (id up to created) and what the server answers."""

    id: str
    text: str = ""
    vector: Optional[list[float]] = None
    kind: Optional[str] = None  # "static", "versioned", "event"
    source: Optional[str] = None
    profile: Optional[str] = None
    doc_id: Optional[str] = None
    version: Optional[int] = None
    chunk: Optional[int] = None
    subject: Optional[str] = None
    relation: Optional[str] = None
    object: Optional[str] = None
    depends_on: Optional[list[str]] = None
    metadata: Optional[dict[str, Any]] = None
    valid_from: Optional[Time] = None
    valid_to: Optional[Time] = None
    recorded_at: Optional[Time] = None
    created: Optional[Time] = None
    # On a write: the revision the writer last read (409 conflict otherwise).
    if_version: Optional[int] = None
    # Filled in by the server.
    revision: Optional[int] = None
    status: Optional[str] = None
    visible: Optional[bool] = None
    superseded_by: Optional[str] = None
    supersedes: Optional[list[str]] = None
    key_rule: Optional[str] = None
    retracted_at: Optional[_dt.datetime] = None
    retracted_by: Optional[str] = None
    purged: Optional[bool] = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            v = getattr(self, f.name)
            if v is None:
                continue
            if f.name in _TIME_FIELDS:
                v = _time(v)
            out[f.name] = v
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Memory":
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        kw = {k: v for k, v in d.items() if k in names}
        for k in _TIME_FIELDS:
            if k in kw:
                kw[k] = _parse_time(kw[k])
        return cls(**kw, extra={k: v for k, v in d.items() if k not in names})


@dataclass
class PutResult:
    id: str
    outcome: str  # "stored", "reinforced", "unchanged", "rejected"
    into: Optional[str] = None
    superseded: list[str] = field(default_factory=list)
    superseded_by: Optional[str] = None
    split: list[str] = field(default_factory=list)


@dataclass
class Hit:
    id: str
    score: float
    cosine: float
    confidence: float
    memory: Memory
    signals: Optional[dict[str, Any]] = None


@dataclass
class SearchResult:
    hits: list[Hit]
    plan: str
    candidates: int
    removed: list[dict[str, Any]] = field(default_factory=list)
    removed_total: int = 0


@dataclass
class MemoryPage:
    memories: list[Memory]
    next_cursor: Optional[str] = None


@dataclass
class RetractResult:
    ids: list[str]
    purged: bool
    restored: list[str] = field(default_factory=list)
    unchanged: bool = False


@dataclass
class Collection:
    name: str
    dim: int
    stored: int = 0
    visible: int = 0
    method: Optional[str] = None
    embedder: Optional[str] = None
    keys: Optional[str] = None
    split: Optional[str] = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Collection":
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        return cls(**{k: v for k, v in d.items() if k in names}, extra={k: v for k, v in d.items() if k not in names})


def _compact(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None and v != [] and v is not False}


class Client:
    """A tidemark server at base_url (e.g. "http://127.0.0.1:8080"), called with a bearer token."""

    def __init__(self, base_url: str, token: str, timeout: float = 30.0):
        if "://" not in base_url:
            base_url = "http://" + base_url
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    # ---- the HTTP exchange

    def _call(self, method: str, path: str, body: Any = None, query: Optional[dict[str, Any]] = None) -> Any:
        url = self.base_url + path
        if query:
            q = {k: v for k, v in query.items() if v is not None}
            if q:
                url += "?" + urllib.parse.urlencode(q)
        data = None
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                err = json.loads(raw)["error"]
                raise TidemarkError(e.code, err.get("code", ""), err.get("message", "")) from None
            except (ValueError, KeyError, TypeError):
                raise TidemarkError(e.code, "", raw.decode(errors="replace")) from None
        except urllib.error.URLError as e:
            raise TidemarkError(0, "unreachable", f"{url}: {e.reason}") from None
        return json.loads(raw) if raw else None

    @staticmethod
    def _c(collection: str) -> str:
        return "/v1/collections/" + urllib.parse.quote(collection, safe="")

    # ---- collections

    def create_collection(self, name: str, dim: int, **options: Any) -> Collection:
        """Creates a collection: dim, and any of method, embedder, remote, keys, split, half_life, ..."""
        return Collection.from_json(self._call("POST", self._c(name), {"dim": dim, **options}))

    def collections(self) -> list[Collection]:
        return [Collection.from_json(c) for c in self._call("GET", "/v1/collections")["collections"]]

    def collection(self, name: str) -> Collection:
        return Collection.from_json(self._call("GET", self._c(name)))

    def drop_collection(self, name: str) -> None:
        self._call("DELETE", self._c(name), query={"confirm": name})

    # ---- memories

    def put(self, collection: str, memories: Sequence[Memory]) -> list[PutResult]:
        """Writes a batch (all or nothing). An id that exists with other content gets a new version."""
        out = self._call("POST", self._c(collection) + "/memories", {"memories": [m.to_json() for m in memories]})
        return [PutResult(**r) for r in out["results"]]

    def get(self, collection: str, id: str) -> Memory:
        return Memory.from_json(self._call("GET", self._c(collection) + "/memories/" + urllib.parse.quote(id, safe="")))

    def history(self, collection: str, id: str) -> list[Memory]:
        out = self._call("GET", self._c(collection) + "/memories/" + urllib.parse.quote(id, safe="") + "/history")
        return [Memory.from_json(m) for m in out["versions"]]

    def retract(self, collection: str, id: str) -> RetractResult:
        """Withdraws a memory from now on; a search as of an earlier transaction time still finds it."""
        return RetractResult(**self._call("DELETE", self._c(collection) + "/memories/" + urllib.parse.quote(id, safe="")))

    def purge(self, collection: str, id: str) -> RetractResult:
        """Erases a memory's text and vector (and its split family's); gone from every file at the next checkpoint."""
        return RetractResult(
            **self._call("DELETE", self._c(collection) + "/memories/" + urllib.parse.quote(id, safe=""), query={"purge": "true"})
        )

    def feedback(self, collection: str, id: str, positive: bool) -> None:
        self._call("POST", self._c(collection) + "/feedback", {"id": id, "positive": positive})

    # ---- listing

    @staticmethod
    def _list_query(
        limit: Optional[int],
        cursor: Optional[str],
        filter: Optional[dict[str, Any]],
        all_versions: bool,
        as_of: Optional[Time],
        as_of_tx: Optional[Time],
        kinds: Optional[Sequence[str]],
        statuses: Optional[Sequence[str]],
        sources: Optional[Sequence[str]],
    ) -> dict[str, Any]:
        return {
            "limit": limit,
            "cursor": cursor,
            "filter": json.dumps(filter) if filter is not None else None,
            "all": "true" if all_versions else None,
            "as_of": _time(as_of),
            "as_of_tx": _time(as_of_tx),
            "kinds": ",".join(kinds) if kinds else None,
            "statuses": ",".join(statuses) if statuses else None,
            "sources": ",".join(sources) if sources else None,
        }

    def list(
        self,
        collection: str,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        filter: Optional[dict[str, Any]] = None,
        all_versions: bool = False,
        as_of: Optional[Time] = None,
        as_of_tx: Optional[Time] = None,
        kinds: Optional[Sequence[str]] = None,
        statuses: Optional[Sequence[str]] = None,
        sources: Optional[Sequence[str]] = None,
    ) -> MemoryPage:
        """One page of the current memories (every version with all_versions), in write order."""
        q = self._list_query(limit, cursor, filter, all_versions, as_of, as_of_tx, kinds, statuses, sources)
        out = self._call("GET", self._c(collection) + "/memories", query=q)
        return MemoryPage([Memory.from_json(m) for m in out["memories"]], out.get("next_cursor"))

    def iter_memories(self, collection: str, page_size: int = 100, **kw: Any) -> Iterator[Memory]:
        """Every memory a listing selects, page after page (the cursors stay valid while others write)."""
        cursor = kw.pop("cursor", None)
        while True:
            page = self.list(collection, limit=page_size, cursor=cursor, **kw)
            yield from page.memories
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def count(
        self,
        collection: str,
        filter: Optional[dict[str, Any]] = None,
        all_versions: bool = False,
        as_of: Optional[Time] = None,
        as_of_tx: Optional[Time] = None,
        kinds: Optional[Sequence[str]] = None,
        statuses: Optional[Sequence[str]] = None,
        sources: Optional[Sequence[str]] = None,
    ) -> int:
        q = self._list_query(None, None, filter, all_versions, as_of, as_of_tx, kinds, statuses, sources)
        return self._call("GET", self._c(collection) + "/count", query=q)["count"]

    # ---- search

    def search(
        self,
        collection: str,
        vector: Optional[Sequence[float]] = None,
        text: Optional[str] = None,
        k: int = 10,
        filter: Optional[dict[str, Any]] = None,
        method: Optional[str] = None,
        as_of: Optional[Time] = None,
        as_of_tx: Optional[Time] = None,
        now: Optional[Time] = None,
        min_score: Optional[float] = None,
        explain: bool = False,
        plan: Optional[str] = None,
        kinds: Optional[Sequence[str]] = None,
        sources: Optional[Sequence[str]] = None,
    ) -> SearchResult:
        """What is similar and still true: by vector, or by text when the collection embeds."""
        body = _compact(
            {
                "vector": list(vector) if vector is not None else None,
                "text": text,
                "k": k,
                "filter": filter,
                "method": method,
                "as_of": _time(as_of),
                "as_of_tx": _time(as_of_tx),
                "now": _time(now),
                "min_score": min_score,
                "explain": explain,
                "plan": plan,
                "kinds": list(kinds) if kinds else None,
                "sources": list(sources) if sources else None,
            }
        )
        out = self._call("POST", self._c(collection) + "/search", body)
        hits = [
            Hit(h["id"], h["score"], h["cosine"], h["confidence"], Memory.from_json(h["memory"]), h.get("signals"))
            for h in out["hits"]
        ]
        return SearchResult(hits, out["plan"], out["candidates"], out.get("removed") or [], out.get("removed_total", 0))
