// A LangChain.js vector store over a tidemark collection: what is similar
// and still true, and what was true as of a date.
//
//   const store = new TidemarkVectorStore(new TidemarkServerEmbeddings(), { client, collection: "kb" });
//   await store.addDocuments([new Document({ pageContent: "The API rate limit is 250 requests per minute.", metadata: { team: "platform" } })]);
//   const now = await store.asRetriever({ k: 1 }).invoke("What is the API rate limit?");
//   const then = await store.asRetriever({ k: 1, filter: { asOf: "2025-03-01" } }).invoke("What is the API rate limit?");
//
// Scores: similaritySearch*WithScore returns tidemark's fused score (the
// collection's method: cosine, time decay, validity, confidence), which
// compares across queries; the raw cosine is in each document's metadata
// under _tidemark.cosine, with the memory's revision, validity window and
// confidence.

import { Document, type DocumentInterface } from "@langchain/core/documents";
import { Embeddings, type EmbeddingsInterface } from "@langchain/core/embeddings";
import { VectorStore } from "@langchain/core/vectorstores";

import { Client, type SearchOptions, type Time } from "../src/index.js";
import type { Memory } from "../src/wire.js";

/**
 * What a search through the store may ask: a metadata filter in
 * tidemark's (Chroma's) shape under `where`, the times (`asOf`: what was
 * true then; `asOfTx`: what tidemark believed then), the scoring `method`
 * and `minScore`. A plain object without these keys is taken as the
 * metadata filter itself ({team: "red"}), as LangChain's filters are.
 */
export interface TidemarkFilter {
  where?: Record<string, unknown>;
  asOf?: Time;
  asOfTx?: Time;
  method?: string;
  minScore?: number;
}

const optionKeys = new Set(["where", "asOf", "asOfTx", "method", "minScore"]);

function searchOptions(filter: TidemarkFilter | Record<string, unknown> | undefined, k: number): SearchOptions {
  const o: SearchOptions = { k };
  if (!filter) return o;
  const keys = Object.keys(filter);
  if (keys.length > 0 && keys.every((key) => !optionKeys.has(key))) {
    o.filter = filter as Record<string, unknown>;
    return o;
  }
  const f = filter as TidemarkFilter;
  if (f.where) o.filter = f.where;
  if (f.asOf !== undefined) o.as_of = f.asOf;
  if (f.asOfTx !== undefined) o.as_of_tx = f.asOfTx;
  if (f.method) o.method = f.method as SearchOptions["method"];
  if (f.minScore !== undefined) o.min_score = f.minScore;
  return o;
}

/**
 * The embeddings of a collection that embeds on the server (created with
 * an embedder): documents are sent as text and queries searched as text,
 * so nothing is embedded in the client. Its embed methods are never
 * called by TidemarkVectorStore; called directly, they fail.
 */
export class TidemarkServerEmbeddings extends Embeddings {
  constructor() {
    super({});
  }
  embedDocuments(): Promise<number[][]> {
    return Promise.reject(new Error("TidemarkServerEmbeddings: the collection embeds on the server; send text through TidemarkVectorStore"));
  }
  embedQuery(): Promise<number[]> {
    return Promise.reject(new Error("TidemarkServerEmbeddings: the collection embeds on the server; search through TidemarkVectorStore"));
  }
}

/** Where a TidemarkVectorStore keeps its documents. */
export interface TidemarkStoreArgs {
  client: Client;
  collection: string;
}

let idCounter = 0;

/** A LangChain VectorStore over one tidemark collection. */
export class TidemarkVectorStore extends VectorStore {
  declare FilterType: TidemarkFilter | Record<string, unknown>;
  readonly client: Client;
  readonly collection: string;

  constructor(embeddings: EmbeddingsInterface, args: TidemarkStoreArgs) {
    super(embeddings, args);
    this.client = args.client;
    this.collection = args.collection;
  }

  _vectorstoreType(): string {
    return "tidemark";
  }

  private serverSide(): boolean {
    return this.embeddings instanceof TidemarkServerEmbeddings;
  }

  private static memory(doc: DocumentInterface, id: string | undefined, vector?: number[]): Memory {
    const m: Memory = { id: id ?? doc.id ?? `doc-${Date.now().toString(36)}-${(idCounter++).toString(36)}`, text: doc.pageContent };
    const { _tidemark, ...metadata } = (doc.metadata ?? {}) as Record<string, unknown>;
    void _tidemark;
    if (Object.keys(metadata).length > 0) m.metadata = metadata;
    if (vector) m.vector = vector;
    return m;
  }

  /** Writes documents with their vectors; metadata is carried through (ids from options.ids, the documents' ids, or new ones). */
  async addVectors(vectors: number[][], documents: DocumentInterface[], options?: { ids?: string[] }): Promise<string[]> {
    const memories = documents.map((d, i) => TidemarkVectorStore.memory(d, options?.ids?.[i], vectors[i]));
    await this.client.put(this.collection, memories);
    return memories.map((m) => m.id);
  }

  /** Writes documents: as text when the collection embeds on the server, else embedded here first. */
  async addDocuments(documents: DocumentInterface[], options?: { ids?: string[] }): Promise<string[]> {
    if (this.serverSide()) {
      const memories = documents.map((d, i) => TidemarkVectorStore.memory(d, options?.ids?.[i]));
      await this.client.put(this.collection, memories);
      return memories.map((m) => m.id);
    }
    return this.addVectors(await this.embeddings.embedDocuments(documents.map((d) => d.pageContent)), documents, options);
  }

  private static document(hit: { id: string; score: number; cosine: number; confidence: number; memory: Memory }): [DocumentInterface, number] {
    const m = hit.memory;
    const doc = new Document({
      id: hit.id,
      pageContent: m.text ?? "",
      metadata: {
        ...(m.metadata ?? {}),
        _tidemark: {
          id: hit.id,
          cosine: hit.cosine,
          score: hit.score,
          confidence: hit.confidence,
          revision: m.revision,
          valid_from: m.valid_from,
          valid_to: m.valid_to,
        },
      },
    });
    return [doc, hit.score];
  }

  /** The k best by tidemark's fused score for a query vector. */
  async similaritySearchVectorWithScore(query: number[], k: number, filter?: this["FilterType"]): Promise<[DocumentInterface, number][]> {
    const res = await this.client.search(this.collection, { ...searchOptions(filter, k), vector: query });
    return res.hits.map(TidemarkVectorStore.document);
  }

  /** The k best for a query text (searched as text when the collection embeds on the server). */
  async similaritySearchWithScore(query: string, k = 4, filter?: this["FilterType"]): Promise<[DocumentInterface, number][]> {
    if (!this.serverSide()) return super.similaritySearchWithScore(query, k, filter);
    const res = await this.client.search(this.collection, { ...searchOptions(filter, k), text: query });
    return res.hits.map(TidemarkVectorStore.document);
  }

  async similaritySearch(query: string, k = 4, filter?: this["FilterType"]): Promise<DocumentInterface[]> {
    return (await this.similaritySearchWithScore(query, k, filter)).map(([d]) => d);
  }

  /** Retracts the documents: no longer believed from now on (a search asOfTx before still finds them). */
  async delete(params?: { ids?: string[] }): Promise<void> {
    for (const id of params?.ids ?? []) {
      await this.client.retract(this.collection, id);
    }
  }

  static async fromTexts(texts: string[], metadatas: object[] | object, embeddings: EmbeddingsInterface, args: TidemarkStoreArgs): Promise<TidemarkVectorStore> {
    const docs = texts.map((t, i) => new Document({ pageContent: t, metadata: Array.isArray(metadatas) ? (metadatas[i] ?? {}) : metadatas }));
    return TidemarkVectorStore.fromDocuments(docs, embeddings, args);
  }

  static async fromDocuments(docs: DocumentInterface[], embeddings: EmbeddingsInterface, args: TidemarkStoreArgs): Promise<TidemarkVectorStore> {
    const store = new TidemarkVectorStore(embeddings, args);
    await store.addDocuments(docs);
    return store;
  }
}
