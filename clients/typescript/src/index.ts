// A client for tidemark's HTTP API (/v1): what is similar and still true.
//
// Built on the platform fetch, with no runtime dependencies. Every call
// takes an AbortSignal and a timeout; a failed call throws TidemarkError,
// carrying the API's error code ("not_found", "conflict", …) and the HTTP
// status. The wire types are generated from the server's OpenAPI document
// (src/wire.ts).

import type * as wire from "./wire.js";

export type * from "./wire.js";

/** A time on the wire: a Date, or a string (RFC 3339, or YYYY-MM-DD for a day's start in UTC). */
export type Time = Date | string;

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the call. */
  signal?: AbortSignal;
  /** Milliseconds before the call is aborted (default the client's timeoutMs). */
  timeoutMs?: number;
}

/** A call the server refused, or one that never reached it (code "unreachable" or "timeout"). */
export class TidemarkError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = "TidemarkError";
  }
}

/** Search options: the API's search request with times as Date or string. */
export interface SearchOptions extends Omit<wire.Search, "now" | "as_of" | "as_of_tx" | "filter"> {
  now?: Time;
  as_of?: Time;
  as_of_tx?: Time;
  /** A metadata filter in Chroma's "where" shape: {team: "red"}, {n: {$gte: 3}}, $in, $nin, $exists, $and, $or, $not. */
  filter?: Record<string, unknown>;
}

/** What a listing selects (GET …/memories and …/count). */
export interface ListOptions {
  limit?: number;
  cursor?: string;
  filter?: Record<string, unknown>;
  /** Every stored version (superseded, expired, retracted) instead of the current memories. */
  all?: boolean;
  now?: Time;
  as_of?: Time;
  as_of_tx?: Time;
  kinds?: string[];
  statuses?: string[];
  sources?: string[];
}

function wireTime(t: Time | undefined): string | undefined {
  if (t === undefined) return undefined;
  return t instanceof Date ? t.toISOString() : t;
}

/** A tidemark server at baseUrl (e.g. "http://127.0.0.1:8080"), called with a bearer token. */
export class Client {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
    private readonly timeoutMs = 30_000,
  ) {
    this.baseUrl = (baseUrl.includes("://") ? baseUrl : `http://${baseUrl}`).replace(/\/+$/, "");
  }

  private async call<T>(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<T> {
    const signals = [AbortSignal.timeout(opts.timeoutMs ?? this.timeoutMs)];
    if (opts.signal) signals.push(opts.signal);
    const headers: Record<string, string> = { Authorization: `Bearer ${this.token}`, Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.any(signals),
      });
    } catch (e) {
      const err = e as Error;
      if (err.name === "TimeoutError") throw new TidemarkError(0, "timeout", `${method} ${path}: no answer in time`);
      if (err.name === "AbortError") throw err;
      throw new TidemarkError(0, "unreachable", `${this.baseUrl}${path}: ${err.message}`);
    }
    const text = await res.text();
    if (!res.ok) {
      let code = "";
      let message = text;
      try {
        const e = (JSON.parse(text) as wire.ErrorBody).error;
        code = e.code;
        message = e.message;
      } catch {
        // not the error shape: the body as it came
      }
      throw new TidemarkError(res.status, code, message);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private static c(collection: string): string {
    return `/v1/collections/${encodeURIComponent(collection)}`;
  }

  private static m(collection: string, id: string): string {
    return `${Client.c(collection)}/memories/${encodeURIComponent(id)}`;
  }

  // ---- collections

  /** Creates a collection. */
  createCollection(name: string, options: wire.CreateCollection, opts?: CallOptions): Promise<wire.Collection> {
    return this.call("POST", Client.c(name), options, opts);
  }

  /** The collections the token may read. */
  async collections(opts?: CallOptions): Promise<wire.Collection[]> {
    const out = await this.call<{ collections: wire.Collection[] }>("GET", "/v1/collections", undefined, opts);
    return out.collections;
  }

  /** One collection's options and sizes. */
  collection(name: string, opts?: CallOptions): Promise<wire.Collection> {
    return this.call("GET", Client.c(name), undefined, opts);
  }

  /** Drops a collection and every memory in it. */
  async dropCollection(name: string, opts?: CallOptions): Promise<void> {
    await this.call("DELETE", `${Client.c(name)}?confirm=${encodeURIComponent(name)}`, undefined, opts);
  }

  // ---- memories

  /** Writes a batch (all or nothing); an id that exists with other content gets its next version. */
  async put(collection: string, memories: wire.Memory[], opts?: CallOptions): Promise<wire.PutResult[]> {
    const out = await this.call<wire.PutResponse>("POST", `${Client.c(collection)}/memories`, { memories }, opts);
    return out.results;
  }

  /** One memory (its latest version). */
  get(collection: string, id: string, opts?: CallOptions): Promise<wire.Memory> {
    return this.call("GET", Client.m(collection, id), undefined, opts);
  }

  /** Every version linked to a memory, oldest first. */
  async history(collection: string, id: string, opts?: CallOptions): Promise<wire.Memory[]> {
    const out = await this.call<{ versions: wire.Memory[] }>("GET", `${Client.m(collection, id)}/history`, undefined, opts);
    return out.versions;
  }

  /** Every version of a fact key, oldest first. */
  async factHistory(collection: string, subject: string, relation: string, opts?: CallOptions): Promise<wire.Memory[]> {
    const q = new URLSearchParams({ subject, relation });
    const out = await this.call<{ versions: wire.Memory[] }>("GET", `${Client.c(collection)}/facts?${q}`, undefined, opts);
    return out.versions;
  }

  /** Withdraws a memory from now on; a search as of an earlier transaction time still finds it. */
  retract(collection: string, id: string, opts?: CallOptions): Promise<wire.RetractResponse> {
    return this.call("DELETE", Client.m(collection, id), undefined, opts);
  }

  /** Erases a memory's text and vector (every version, its split family); gone from the server's files at its next checkpoint. */
  purge(collection: string, id: string, opts?: CallOptions): Promise<wire.RetractResponse> {
    return this.call("DELETE", `${Client.m(collection, id)}?purge=true`, undefined, opts);
  }

  /** Records a judgement of a memory (counted for the token). */
  async feedback(collection: string, id: string, positive: boolean, opts?: CallOptions): Promise<void> {
    await this.call("POST", `${Client.c(collection)}/feedback`, { id, positive }, opts);
  }

  /** Stores a document's whole text as chunk memories, or an edit of it. */
  putDocument(collection: string, doc: string, text: string, chunkBytes?: number, opts?: CallOptions): Promise<wire.DocumentReport> {
    return this.call("PUT", `${Client.c(collection)}/documents/${encodeURIComponent(doc)}`, { text, chunk_bytes: chunkBytes }, opts);
  }

  // ---- listing

  private static listQuery(o: ListOptions, paged: boolean): string {
    const q = new URLSearchParams();
    if (paged && o.limit !== undefined) q.set("limit", String(o.limit));
    if (paged && o.cursor) q.set("cursor", o.cursor);
    if (o.filter) q.set("filter", JSON.stringify(o.filter));
    if (o.all) q.set("all", "true");
    for (const [k, v] of [
      ["now", o.now],
      ["as_of", o.as_of],
      ["as_of_tx", o.as_of_tx],
    ] as const) {
      const t = wireTime(v);
      if (t) q.set(k, t);
    }
    for (const [k, v] of [
      ["kinds", o.kinds],
      ["statuses", o.statuses],
      ["sources", o.sources],
    ] as const) {
      if (v?.length) q.set(k, v.join(","));
    }
    const s = q.toString();
    return s ? `?${s}` : "";
  }

  /** One page of the current memories (every version with all), in write order. */
  list(collection: string, options: ListOptions = {}, opts?: CallOptions): Promise<wire.MemoryList> {
    return this.call("GET", `${Client.c(collection)}/memories${Client.listQuery(options, true)}`, undefined, opts);
  }

  /** Every memory a listing selects, page after page (cursors stay valid while others write). */
  async *memories(collection: string, options: ListOptions = {}, opts?: CallOptions): AsyncGenerator<wire.Memory> {
    let cursor = options.cursor;
    for (;;) {
      const page = await this.list(collection, { ...options, cursor }, opts);
      yield* page.memories;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  /** How many memories a listing selects. */
  async count(collection: string, options: ListOptions = {}, opts?: CallOptions): Promise<number> {
    const out = await this.call<{ count: number }>("GET", `${Client.c(collection)}/count${Client.listQuery(options, false)}`, undefined, opts);
    return out.count;
  }

  // ---- search

  private static searchBody(s: SearchOptions): wire.Search {
    return { ...s, now: wireTime(s.now), as_of: wireTime(s.as_of), as_of_tx: wireTime(s.as_of_tx) } as wire.Search;
  }

  /** What is similar and still true: by vector, or by text when the collection embeds. */
  search(collection: string, query: SearchOptions, opts?: CallOptions): Promise<wire.Result> {
    return this.call("POST", `${Client.c(collection)}/search`, Client.searchBody(query), opts);
  }

  /** A search's hits assembled into an annotated context block for a generator. */
  context(collection: string, query: SearchOptions & { token_budget?: number }, opts?: CallOptions): Promise<{ context: Record<string, unknown>; text: string }> {
    return this.call("POST", `${Client.c(collection)}/context`, Client.searchBody(query), opts);
  }

  /** Ranks another store's candidates by tidemark's fused score without storing them. */
  rescore(request: Record<string, unknown>, opts?: CallOptions): Promise<wire.Result> {
    return this.call("POST", "/v1/rescore", request, opts);
  }

  // ---- consolidation and audit

  /** Runs one consolidation cycle. */
  consolidate(collection: string, opts?: CallOptions): Promise<wire.ConsolidationReport> {
    return this.call("POST", `${Client.c(collection)}/consolidate`, undefined, opts);
  }

  /** The collection's last background consolidation run. */
  lastConsolidation(collection: string, opts?: CallOptions): Promise<{ error: string; last_background_run: wire.ConsolidationReport | null }> {
    return this.call("GET", `${Client.c(collection)}/consolidate`, undefined, opts);
  }

  /** A page of the audit log after sequence number since. */
  audit(collection: string, since = 0, limit?: number, opts?: CallOptions): Promise<wire.AuditLog> {
    const q = new URLSearchParams({ since: String(since) });
    if (limit) q.set("limit", String(limit));
    return this.call("GET", `${Client.c(collection)}/audit?${q}`, undefined, opts);
  }
}
