// The LangChain.js vector store against a real tidemark serve, through
// LangChain's own retriever interface.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Document } from "@langchain/core/documents";
import { Embeddings } from "@langchain/core/embeddings";

import { Client } from "../dist/src/index.js";
import { TidemarkServerEmbeddings, TidemarkVectorStore } from "../dist/langchain/index.js";
import { runExample } from "../examples/retrieval-chain.mjs";
import { startServer } from "./server.mjs";

let srv;
let client;
before(async () => {
  srv = await startServer();
  client = new Client(srv.url, srv.token);
});
after(async () => {
  await srv?.stop();
});

test("the README's retrieval chain: the current value now, the old one as of a past date", async () => {
  const { now, then } = await runExample(srv.url, srv.token);
  console.log(`retrieval chain — now: ${now} | as of 2025-03-01: ${then}`);
  assert.equal(now, "Answer: The API rate limit is 250 requests per minute.");
  assert.equal(then, "Answer: The API rate limit is 100 requests per minute.");
});

test("server-side embeddings: documents and metadata through, filters, scores, delete retracts", async () => {
  await client.createCollection("lc", { dim: 128, embedder: "hashing" });
  const store = await TidemarkVectorStore.fromTexts(
    ["Backups run nightly at 02:00.", "The on-call rotation changes every Monday.", "Backups are kept for 30 days."],
    [{ team: "ops", n: 1 }, { team: "people", n: 2 }, { team: "ops", n: 3 }],
    new TidemarkServerEmbeddings(),
    { client, collection: "lc" },
  );
  const hits = await store.similaritySearchWithScore("When do backups run?", 2);
  assert.equal(hits[0][0].pageContent, "Backups run nightly at 02:00.");
  assert.equal(hits[0][0].metadata.team, "ops");
  assert.ok(typeof hits[0][1] === "number" && typeof hits[0][0].metadata._tidemark.cosine === "number");
  // A LangChain-style filter (a plain metadata object) and tidemark's where.
  const people = await store.asRetriever({ k: 3, filter: { team: "people" } }).invoke("backups");
  assert.deepEqual(people.map((d) => d.metadata.n), [2]);
  const late = await store.asRetriever({ k: 3, filter: { where: { n: { $gte: 2 } } } }).invoke("backups");
  assert.deepEqual(late.map((d) => d.metadata.n).sort(), [2, 3]);
  // delete retracts: gone now, found as of the transaction time before.
  const id = hits[0][0].id;
  const before = new Date();
  await new Promise((r) => setTimeout(r, 20));
  await store.delete({ ids: [id] });
  const after = await store.similaritySearch("When do backups run?", 3);
  assert.ok(!after.some((d) => d.id === id));
  const past = await store.asRetriever({ k: 1, filter: { asOfTx: before } }).invoke("When do backups run?");
  assert.equal(past[0].id, id);
  await assert.rejects(store.delete({ ids: ["nobody"] }), (e) => e.code === "not_found");
});

// Client-side embeddings: a tiny deterministic embedder (a word hash).
class WordHash extends Embeddings {
  constructor() {
    super({});
  }
  vec(t) {
    const v = new Array(16).fill(0.01);
    for (const w of t.toLowerCase().split(/\W+/).filter(Boolean)) {
      let h = 0;
      for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      v[h % 16] += 1;
    }
    return v;
  }
  async embedDocuments(ts) {
    return ts.map((t) => this.vec(t));
  }
  async embedQuery(t) {
    return this.vec(t);
  }
}

test("client-side embeddings: addVectors through similaritySearchVectorWithScore", async () => {
  await client.createCollection("vecs", { dim: 16 });
  const store = new TidemarkVectorStore(new WordHash(), { client, collection: "vecs" });
  const ids = await store.addDocuments([new Document({ pageContent: "red apples", metadata: { c: "red" } }), new Document({ pageContent: "green pears", metadata: { c: "green" } })]);
  assert.equal(ids.length, 2);
  const got = await store.similaritySearch("apples", 1);
  assert.equal(got[0].pageContent, "red apples");
  const green = await store.similaritySearch("apples", 1, { c: "green" });
  assert.equal(green[0].pageContent, "green pears");
});
