// Package tidemark is a temporal-aware vector memory: it answers "what is
// similar and still true". A DB holds collections of memories — evidence
// text with an embedding and bi-temporal metadata — in a durable ledger;
// an HNSW index over the visible surface (the memories that are current)
// feeds the fused scoring stage (package kernels), which masks superseded
// and expired memories and ranks the rest on cosine, decay, validity,
// confidence and relational signals (DESIGN "Scoring").
//
// # Basics
//
//	db, err := tidemark.Open(dir, nil)
//	c, err := db.CreateCollection(ctx, "facts", &tidemark.CollectionOptions{Dim: 768})
//	res, err := c.Put(ctx, []tidemark.Memory{{ID: "a", Text: "…", Vector: v, Subject: "acme", Relation: "ceo", Object: "Bob"}})
//	hits, err := c.Search(ctx, &tidemark.SearchRequest{Vector: q, K: 10})
//	past, err := c.Search(ctx, &tidemark.SearchRequest{Vector: q, AsOf: t})
//	err = db.Close()
//
// A nil error from Put means the batch is on stable storage (written to
// the log and fsynced) and visible to searches.
//
// # Write path
//
// Put validates every memory (dimension, finite values, sizes, times,
// enum values; one bad memory refuses the batch), embeds the texts sent
// without a vector (one call to the collection's embedder; a failure
// refuses the batch), derives fact keys from text (keys.go: with the
// default CollectionOptions.Keys, extract.Key keys a memory that has none,
// and a memory that restates a current one with one value changed shares
// its key — extract.Compare; the derived keys are logged, so recovery
// replays them without analysing text), logs the batch, and applies it in
// log order, exactly as the reference memory of package eval does for the
// keys it is given (the tests hold the two to the same answers):
//
//   - a memory whose text, kind, windows, fact and document chunk equal
//     those of a current memory is folded into it as an access
//     (Reinforced); so is a fact whose key and object equal its
//     predecessor's;
//   - a fact with the same normalised (subject, relation) and another
//     object supersedes the one before it in temporal.Resolve's order
//     (valid-from, transaction time, arrival), whatever order they arrive
//     in (MemStrata); a higher Version of the same (DocID, Chunk)
//     supersedes the lower;
//   - superseding closes the old memory bi-temporally: the belief with the
//     open window is retired at the new memory's transaction time and a
//     belief with the closed window is recorded from then on (Memory.
//     Beliefs); a version link new → old is added and the old memory
//     leaves the visible surface for the archive index;
//   - a memory whose valid window had ended when it was written goes
//     straight to the archive.
//
// # Read path
//
// Search picks a plan: PlanExact runs the fused stage over every belief of
// every memory (collections with at most CollectionOptions.ExactThreshold
// visible memories); PlanANN asks the HNSW index of the surface for
// k·Overfetch candidates and, for a query about a past time (AsOf, AsOfTx,
// or a Now before the latest write) or a method that does not mask, also
// the archive index and the archived versions reachable by version links.
// Masks at the query's valid time and transaction time remove what was
// not true or not believed then; Explain returns each hit's signals and
// the reason code of each removed candidate. A hit's Score depends only on
// the memory, the query's times and its Cosine (also returned), so scores
// compare across queries and SearchRequest.MinScore means the same in
// each; a method that normalises within the pool (the article's) ranks by
// its pooled score and shows the pool-free one (temporal.PoolFreeScore).
// A hit's Confidence is moved by evidence, never by age, for a static
// memory (temporal.ConfidenceParams.Reported).
//
// # Durability
//
// The log (package store) has a CRC per record and group commit; a
// snapshot of every collection — ledger and both HNSW indexes — is written
// after Options.CheckpointRecords records or CheckpointBytes bytes, by
// Checkpoint and by Close, and the log before it is dropped. Open loads the
// snapshot (on Linux mapped into memory and checksummed as it is parsed,
// store.MapSnapshot), checks the indexes against the ledger (rebuilding them when
// they disagree), derives the link graph from the ledger, and replays the
// records after it. The ledger (ledger.go) is the one truth: the indexes
// and the link graph are derived from it; codec.go documents both
// formats. A torn tail is cut;
// corruption that a crash cannot explain is ErrCorrupt.
//
// OpenPostgres keeps the same log and snapshots in a PostgreSQL database
// instead, shared by any number of nodes (postgres.go): a write commits
// its record as the next change of one gap-free sequence, every node
// applies every change in that order, and Seq, WaitApplied and CatchUp
// give read-your-writes across nodes. The database also holds a
// bi-temporal projection of the keyed beliefs whose exclusion constraint
// refuses two open beliefs of one key (beliefs.go).
//
// # Concurrency
//
// A DB and its Collections are safe for concurrent use. Writes are
// applied one record at a time in log order while their fsyncs are shared
// (group commit); searches run beside writes and see each write whole
// once its Put has returned.
//
// # Caveats
//
//   - Writes wait while a snapshot is written (about as long as writing the
//     collection's vectors twice); searches do not.
//   - The fused stage keeps times as float32 days since
//     CollectionOptions.Epoch: about a second of resolution within half a
//     year of it, about 20 s ten years away. Query times are rounded the
//     same way, so equal times compare equal.
//   - Vectors are held twice: in the column store of the fused stage and
//     in the vector arena of the surface or archive index (and once more
//     for each extra belief of a superseded memory).
//   - Write throughput is bounded by HNSW insertion at high dimension
//     (see `tidemark bench engine`). A batch's inserts run in parallel,
//     so the graph — derived data — differs from one build to the next
//     (recovery included); the ledger and every exact answer do not.
package tidemark
