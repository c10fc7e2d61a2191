package api

import (
	"github.com/tidemark/tidemark/temporal"
)

// Memory is a memory on the wire: what a client writes (the fields up to
// Created) and what the server answers (all of them). Zero values and nil
// pointers are absent.
type Memory struct {
	// ID names the memory in its collection (required).
	ID string `json:"id"`
	// Text is the evidence; Vector its embedding (it may be absent when
	// the collection has an embedder and Text is set).
	Text   string    `json:"text,omitempty"`
	Vector []float32 `json:"vector,omitempty"`
	// Kind, Source and Profile are the memory's kind ("static",
	// "versioned", "event"), source and decay profile.
	Kind    temporal.Kind   `json:"kind,omitzero"`
	Source  temporal.Source `json:"source,omitzero"`
	Profile string          `json:"profile,omitempty"`
	// DocID, Version and Chunk place the memory in a document.
	DocID   string `json:"doc_id,omitempty"`
	Version int    `json:"version,omitempty"`
	Chunk   int    `json:"chunk,omitempty"`
	// Subject, Relation and Object are the fact key and its value.
	Subject  string `json:"subject,omitempty"`
	Relation string `json:"relation,omitempty"`
	Object   string `json:"object,omitempty"`
	// DependsOn lists the memories this one depends on.
	DependsOn []string `json:"depends_on,omitempty"`
	// Access, Positive and Negative are the access and feedback counters.
	Access   int64 `json:"access,omitempty"`
	Positive int64 `json:"positive,omitempty"`
	Negative int64 `json:"negative,omitempty"`
	// ValidFrom and ValidTo are the valid-time window (absent: open).
	ValidFrom *Time `json:"valid_from,omitempty"`
	ValidTo   *Time `json:"valid_to,omitempty"`
	// RecordedAt is the transaction time (default the server's clock);
	// Created when the evidence was authored (default ValidFrom, else
	// RecordedAt).
	RecordedAt *Time `json:"recorded_at,omitempty"`
	Created    *Time `json:"created,omitempty"`
	// Metadata is the memory's own fields, a JSON object (at most 16 KiB,
	// nested at most 4 deep; top-level keys do not start with "$"): what
	// a filter tests.
	Metadata map[string]any `json:"metadata,omitempty"`
	// IfVersion, when set on a memory being written, is the version
	// (Revision) the writer last read of its id: the put answers 409
	// conflict when someone else wrote the id in between (or it does not
	// exist). Writing an id that exists with other content makes its next
	// version, which supersedes the one before.
	IfVersion int `json:"if_version,omitempty"`

	// Filled in by the server.

	// Status is the lifecycle status; Visible says the memory is on the
	// visible surface.
	Status  *temporal.Status `json:"status,omitempty"`
	Visible *bool            `json:"visible,omitempty"`
	// SupersededBy and Supersedes are version links (new → old);
	// Contradicts the memories consolidation found this one contradicting.
	SupersededBy string   `json:"superseded_by,omitempty"`
	Supersedes   []string `json:"supersedes,omitempty"`
	Contradicts  []string `json:"contradicts,omitempty"`
	// KeyRule and KeyFrom say where a derived fact key came from
	// (tidemark.Memory.KeyRule); Penalty is the base confidence taken by
	// ripples and lost contradictions, ContradictedBy the memories that
	// won them.
	KeyRule        string   `json:"key_rule,omitempty"`
	KeyFrom        string   `json:"key_from,omitempty"`
	Penalty        float64  `json:"penalty,omitempty"`
	ContradictedBy []string `json:"contradicted_by,omitempty"`
	// SplitInto, on a memory that stated several facts, lists the
	// siblings it was split into (one statement each, exact substrings of
	// its text; the memory itself is archived evidence); SplitFrom, on a
	// sibling, names that memory; SplitRule says what decided the split
	// ("rules", "update" or "planner"). See tidemark.Memory.SplitInto.
	SplitInto []string `json:"split_into,omitempty"`
	SplitFrom string   `json:"split_from,omitempty"`
	SplitRule string   `json:"split_rule,omitempty"`
	// RetractedAt and RetractedBy say when and by whom the memory was
	// retracted (DELETE …/memories/{id}); Purged says its content was
	// erased (only ever seen in another memory's history).
	// Revision is the version of its id the memory is: 1 for the first
	// write, one more for each put of other content under the id.
	Revision    int    `json:"revision,omitempty"`
	RetractedAt *Time  `json:"retracted_at,omitempty"`
	RetractedBy string `json:"retracted_by,omitempty"`
	Purged      bool   `json:"purged,omitempty"`
}

// RetractResponse is the answer of DELETE
// /v1/collections/{c}/memories/{id} (?purge=true erases).
type RetractResponse struct {
	// IDs are the memories retracted or purged, the one named first: a
	// memory answers to the ids folded into it as duplicates too, and a
	// purge takes the rest of a split memory's family (each sibling is a
	// copy of part of its text).
	IDs []string `json:"ids"`
	// Purged says the memories' content was erased (it leaves the data
	// directory's files at the next checkpoint).
	Purged bool `json:"purged"`
	// Restored lists the earlier versions that hold again: the retracted
	// memory had superseded them.
	Restored []string `json:"restored,omitempty"`
	// Unchanged says the memory was already retracted: nothing was
	// written.
	Unchanged bool `json:"unchanged,omitempty"`
}

// PutRequest is the body of POST /v1/collections/{c}/memories.
type PutRequest struct {
	// Memories is the batch (1 to 10000 memories): when one is bad,
	// none is written.
	Memories []Memory `json:"memories"`
}

// PutResponse is the answer of POST /v1/collections/{c}/memories.
type PutResponse struct {
	// Results has one entry per memory of the request, in its order.
	Results []PutResult `json:"results"`
}

// PutResult reports what happened to one memory of a put.
type PutResult struct {
	// ID is the memory's id.
	ID string `json:"id"`
	// Outcome is what the put did with it.
	Outcome Outcome `json:"outcome"`
	// Into is the memory a reinforced or unchanged write landed in.
	Into string `json:"into,omitempty"`
	// Superseded lists the memories this write closed; SupersededBy is
	// set when a newer version was already stored and this write went
	// straight to the archive.
	Superseded   []string `json:"superseded,omitempty"`
	SupersededBy string   `json:"superseded_by,omitempty"`
	// Split lists the siblings a memory that states several facts was
	// split into; Superseded then includes what they superseded.
	Split []string `json:"split,omitempty"`
}

// Outcome is what a put did with one memory.
type Outcome string

// The outcomes.
const (
	// OutcomeStored: a new memory (it may have superseded others).
	OutcomeStored Outcome = "stored"
	// OutcomeReinforced: a duplicate or restatement of a current fact,
	// folded into PutResult.Into as an access.
	OutcomeReinforced Outcome = "reinforced"
	// OutcomeUnchanged: the id was written before with the same content
	// (a retry); nothing changed.
	OutcomeUnchanged Outcome = "unchanged"
	// OutcomeRejected: another put wrote the id with other content first.
	OutcomeRejected Outcome = "rejected"
)

// Versions is the answer of GET /v1/collections/{c}/memories/{id}/history
// and GET /v1/collections/{c}/facts: every version, oldest first.
type Versions struct {
	// Versions are the memories of the version chain.
	Versions []Memory `json:"versions"`
}

// FeedbackRequest is the body of POST /v1/collections/{c}/feedback.
type FeedbackRequest struct {
	// ID is the memory judged; Positive says whether it helped.
	ID       string `json:"id"`
	Positive bool   `json:"positive"`
}

// FeedbackResponse is the answer of POST /v1/collections/{c}/feedback.
type FeedbackResponse struct {
	// Counted is true: the feedback was counted for the token.
	Counted bool `json:"counted"`
}
