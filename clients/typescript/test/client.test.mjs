// The TypeScript client against a real tidemark serve.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client, TidemarkError } from "../dist/src/index.js";
import { startServer } from "./server.mjs";

let srv;
let tm;
before(async () => {
  srv = await startServer();
  tm = new Client(srv.url, srv.token);
});
after(async () => {
  await srv?.stop();
});

test("supersession, as of, upsert, filters, listing, retraction and errors", async () => {
  await tm.createCollection("kb", { dim: 64, embedder: "hashing" });
  await tm.put("kb", [
    { id: "v1", text: "The API rate limit is 100 requests per minute.", valid_from: "2025-01-01", metadata: { team: "platform" } },
    { id: "v2", text: "The API rate limit is 250 requests per minute.", valid_from: "2025-06-01", metadata: { team: "platform" } },
    { id: "other", text: "The cafeteria opens at nine.", metadata: { team: "facilities" } },
  ]);
  const now = await tm.search("kb", { text: "What is the API rate limit?", k: 1 });
  assert.deepEqual(now.hits.map((h) => h.id), ["v2"]);
  const then = await tm.search("kb", { text: "What is the API rate limit?", k: 1, as_of: new Date("2025-03-01T00:00:00Z") });
  assert.deepEqual(then.hits.map((h) => h.id), ["v1"]);
  const facilities = await tm.search("kb", { text: "What is the API rate limit?", k: 5, filter: { team: "facilities" } });
  assert.deepEqual(facilities.hits.map((h) => h.id), ["other"]);

  // Upsert guarded by the version read.
  const m = await tm.get("kb", "other");
  assert.equal(m.revision, 1);
  await tm.put("kb", [{ id: "other", text: "The cafeteria opens at ten.", metadata: { team: "facilities" }, if_version: m.revision }]);
  await assert.rejects(tm.put("kb", [{ id: "other", text: "A lost update.", if_version: 1 }]), (e) => e instanceof TidemarkError && e.code === "conflict" && e.status === 409);

  // Async iteration over pages; count.
  const ids = [];
  for await (const mem of tm.memories("kb", { limit: 1 })) ids.push(mem.id);
  assert.deepEqual(ids.sort(), ["other", "v2"]);
  assert.equal(await tm.count("kb", { all: true }), 4);

  // Retract: gone now, found as of before.
  const before = new Date();
  await new Promise((r) => setTimeout(r, 20));
  const res = await tm.retract("kb", "v2");
  assert.deepEqual(res.ids, ["v2"]);
  assert.deepEqual((await tm.search("kb", { text: "What is the API rate limit?", k: 1, filter: { team: "platform" } })).hits.map((h) => h.id), ["v1"]);
  assert.deepEqual((await tm.search("kb", { text: "What is the API rate limit?", k: 1, as_of_tx: before })).hits.map((h) => h.id), ["v2"]);

  // Errors carry the code; an abort signal and a timeout end a call.
  await assert.rejects(tm.get("kb", "nobody"), (e) => e instanceof TidemarkError && e.code === "not_found" && e.status === 404);
  await assert.rejects(tm.search("kb", { text: "x", filter: { page: { $near: 3 } } }), (e) => e.code === "invalid_argument" && /\$near/.test(e.message));
  await assert.rejects(new Client(srv.url, "wrong-token-000000000000").collections(), (e) => e.code === "unauthenticated");
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(tm.collections({ signal: ac.signal }), (e) => e.name === "AbortError");
  await assert.rejects(new Client("http://127.0.0.1:1", "x").collections({ timeoutMs: 2000 }), (e) => e.code === "unreachable" || e.code === "timeout");

  // The rest of the API, once each.
  const keyed = await tm.get("kb", "v1");
  assert.ok(keyed.subject && keyed.relation, "the rate-limit statement has a derived fact key");
  assert.deepEqual((await tm.factHistory("kb", keyed.subject, keyed.relation)).map((v) => v.id).sort(), ["v1", "v2"]);
  assert.ok((await tm.context("kb", { text: "rate limit", k: 2 })).text.length > 0);
  assert.equal((await tm.putDocument("kb", "policy", "Refunds within 30 days.\n\nShipping is free above 50 euros.", 40)).chunks, 2);
  assert.equal((await tm.consolidate("kb")).collection, "kb");
  assert.ok((await tm.audit("kb", 0)).audit.some((a) => a.rule === "retract" && a.id === "v2" && a.by === "node"));
  assert.ok((await tm.collections()).some((c) => c.name === "kb"));
  assert.equal((await tm.purge("kb", "v1")).purged, true);
  await tm.dropCollection("kb");
  await assert.rejects(tm.collection("kb"), (e) => e.code === "not_found");
});
