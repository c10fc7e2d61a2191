// A LangChain retrieval chain over tidemark: it answers with the current
// value of a fact that changed, and with the old value as of a past date.
// Run against a server: TIDEMARK_URL=http://127.0.0.1:8080 TIDEMARK_TOKEN=… node examples/retrieval-chain.mjs
// (npm run build first). The "model" is a stand-in that answers with the
// first retrieved document, so that the example needs no LLM: put a chat
// model in its place for a real one.
import { Document } from "@langchain/core/documents";
import { RunnableLambda, RunnableSequence } from "@langchain/core/runnables";

import { Client } from "../dist/src/index.js";
import { TidemarkServerEmbeddings, TidemarkVectorStore } from "../dist/langchain/index.js";

export async function runExample(url, token, collection = "example-rate-limits") {
  const client = new Client(url, token);
  await client.createCollection(collection, { dim: 256, embedder: "hashing" });
  const store = new TidemarkVectorStore(new TidemarkServerEmbeddings(), { client, collection });
  await store.addDocuments(
    [
      new Document({ pageContent: "The API rate limit is 100 requests per minute.", metadata: { team: "platform" } }),
      new Document({ pageContent: "The API rate limit is 250 requests per minute.", metadata: { team: "platform" } }),
    ],
    { ids: ["limit-2025-01", "limit-2025-06"] },
  );
  // (The two were written now; give them their valid times.)
  await client.put(collection, [
    { id: "limit-2025-01", text: "The API rate limit is 100 requests per minute.", metadata: { team: "platform" }, valid_from: "2025-01-01" },
    { id: "limit-2025-06", text: "The API rate limit is 250 requests per minute.", metadata: { team: "platform" }, valid_from: "2025-06-01" },
  ]);
  const answer = (retriever) =>
    RunnableSequence.from([
      retriever,
      RunnableLambda.from((docs) => (docs.length ? `Answer: ${docs[0].pageContent}` : "Answer: I don't know.")),
    ]);
  const question = "What is the API rate limit?";
  const now = await answer(store.asRetriever({ k: 1, filter: { where: { team: "platform" } } })).invoke(question);
  const then = await answer(store.asRetriever({ k: 1, filter: { asOf: "2025-03-01" } })).invoke(question);
  return { now, then };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { now, then } = await runExample(process.env.TIDEMARK_URL ?? "http://127.0.0.1:8080", process.env.TIDEMARK_TOKEN ?? "");
  console.log(`now:              ${now}`);
  console.log(`as of 2025-03-01: ${then}`);
}
