package api

import (
	"encoding/json"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// SearchRequest is the body of POST /v1/collections/{c}/search.
type SearchRequest struct {
	// Vector is the query embedding; when absent, Text is embedded with
	// the collection's embedder.
	Vector []float32 `json:"vector,omitempty"`
	Text   string    `json:"text,omitempty"`
	// K is the number of hits (default 10).
	K int `json:"k,omitempty"`
	// Method is the scoring preset (default the collection's).
	Method string `json:"method,omitempty"`
	// Now is the reference time (default the server's clock); AsOf asks
	// what was true at a past valid time, AsOfTx what tidemark believed at
	// a past transaction time.
	Now    *Time `json:"now,omitempty"`
	AsOf   *Time `json:"as_of,omitempty"`
	AsOfTx *Time `json:"as_of_tx,omitempty"`
	// Kinds, Statuses and Sources filter the memories (absent: all).
	Kinds    []temporal.Kind   `json:"kinds,omitempty"`
	Statuses []temporal.Status `json:"statuses,omitempty"`
	Sources  []temporal.Source `json:"sources,omitempty"`
	// Filter keeps the memories whose metadata it matches, in Chroma's
	// "where" shape: {"team":"red"}, {"n":{"$gte":3}}, $gt, $lt, $lte, $ne,
	// $in, $nin, $exists, {"$and":[…]}, {"$or":[…]}, {"$not":{…}}
	// (tidemark.Filter).
	Filter json.RawMessage `json:"filter,omitempty"`
	// Range keeps memories created inside [from, to) (either may be open).
	Range *Range `json:"range,omitempty"`
	// Weights replace the weights of the four signals of the method: of
	// Method when given, else of the collection's method.
	Weights *Weights `json:"weights,omitempty"`
	// Plan chooses how candidates are found: "auto" (default), "exact"
	// or "ann".
	Plan string `json:"plan,omitempty"`
	// Explain asks for every hit's per-signal scores and the removed
	// candidates with their reasons.
	Explain bool `json:"explain,omitempty"`
	// MinScore drops the hits scoring below it (tidemark.SearchRequest's
	// MinScore); absent means no threshold.
	MinScore *float64 `json:"min_score,omitempty"`
}

// Range is a time range; an absent bound is open.
type Range struct {
	From *Time `json:"from,omitempty"`
	To   *Time `json:"to,omitempty"`
}

// Weights are the fused score's weights of its four signals.
type Weights struct {
	Sim        float64 `json:"sim"`
	Temporal   float64 `json:"temporal"`
	Confidence float64 `json:"confidence"`
	Relational float64 `json:"relational"`
}

// SearchResult is the answer of a search or a rescore.
type SearchResult struct {
	// Hits are the best first (never null).
	Hits []Hit `json:"hits"`
	// Removed lists the candidates the masks removed, with the reason: at
	// most 100 (the first in candidate order); RemovedTotal counts all.
	Removed      []Removed `json:"removed,omitempty"`
	RemovedTotal int       `json:"removed_total,omitempty"`
	// Plan is the plan that ran ("exact", "ann"); Candidates the number
	// of beliefs the fused stage scored.
	Plan       string `json:"plan"`
	Candidates int    `json:"candidates"`
}

// Hit is one search result: tidemark.Hit on the wire.
type Hit struct {
	// ID is the memory's id.
	ID string `json:"id"`
	// Score is comparable across queries and Cosine is the raw cosine
	// (see tidemark.Hit); Confidence is the memory's live confidence at
	// the query's time.
	Score      float64 `json:"score"`
	Cosine     float64 `json:"cosine"`
	Confidence float64 `json:"confidence"`
	// Memory is the memory, without its vector.
	Memory Memory `json:"memory"`
	// Signals are the per-signal scores that explain Score.
	Signals *Signals `json:"signals,omitempty"`
}

// Signals are a hit's per-signal scores (temporal.Signals): the inputs of
// its fused score.
type Signals struct {
	// Sim is the raw cosine; SimNorm its min–max normalisation over the
	// candidates (used by the article's method only).
	Sim     float64 `json:"sim"`
	SimNorm float64 `json:"sim_norm"`
	// AgeDays is the memory's age at the query's time.
	AgeDays float64 `json:"age_days"`
	// Decay is max(floor, exp(−λ·age)); Recency the recency among the
	// candidates (1 unless the method uses it).
	Decay   float64 `json:"decay"`
	Recency float64 `json:"recency"`
	// State is the memory's validity at the query's valid time.
	State temporal.ValidityState `json:"state"`
	// EventGated is true when an open event's boost was cut by the event
	// floor.
	EventGated bool `json:"event_gated"`
	// Temporal, Confidence and Relational are the signals entering the
	// weighted sum; Penalty the semantic penalty multiplier.
	Temporal   float64 `json:"temporal"`
	Confidence float64 `json:"confidence"`
	Relational float64 `json:"relational"`
	Penalty    float64 `json:"penalty"`
}

// Removed is a candidate the masks removed.
type Removed struct {
	ID     string          `json:"id"`
	Reason temporal.Reason `json:"reason"`
}

// RescoreRequest is the body of POST /v1/rescore: candidates from another
// vector store, ranked by tidemark's fused score without being stored.
type RescoreRequest struct {
	// Vector is the query embedding; needed when a candidate has a vector.
	Vector []float32 `json:"vector,omitempty"`
	// K is the number of hits (absent: every kept candidate).
	K int `json:"k,omitempty"`
	// Method is the scoring preset (default "tidemark").
	Method string `json:"method,omitempty"`
	// Now is the reference time (default the server's clock); AsOf the
	// valid time asked about.
	Now  *Time `json:"now,omitempty"`
	AsOf *Time `json:"as_of,omitempty"`
	// Candidates are the memories to rank.
	Candidates []RescoreCandidate `json:"candidates"`
}

// RescoreCandidate is one candidate of a RescoreRequest.
type RescoreCandidate struct {
	// Memory carries the candidate's metadata; its vector, when set, is
	// compared with the query.
	Memory Memory `json:"memory"`
	// Sim is the store's cosine similarity to the query, used when the
	// memory has no vector.
	Sim *float64 `json:"sim,omitempty"`
}

// ContextRequest is the body of POST /v1/collections/{c}/context: a
// search whose hits are assembled into an annotated context block.
type ContextRequest struct {
	SearchRequest
	// TokenBudget bounds the block (default 2000 tokens).
	TokenBudget int `json:"token_budget,omitempty"`
	// TextOnly asks for the block's text as text/plain instead of JSON.
	TextOnly bool `json:"text_only,omitempty"`
}

// ContextResponse is the JSON answer of POST /v1/collections/{c}/context.
type ContextResponse struct {
	// Context is the block's structure; Text the block as handed to a
	// generator.
	Context ContextBlock `json:"context"`
	Text    string       `json:"text"`
}

// ContextBlock is the annotated context handed to a generator
// (tidemark.ContextBlock).
type ContextBlock struct {
	// Documents are the memories of the block, best first.
	Documents []ContextDoc `json:"documents"`
	// Warnings are the conflict and review notes, one line each.
	Warnings []string `json:"warnings,omitempty"`
	// Tokens is the estimate for the whole text block, Budget the limit;
	// Omitted counts ranked memories left out for the budget, Deduplicated
	// those left out as another version of a memory already in the block.
	Tokens       int `json:"tokens"`
	Budget       int `json:"budget"`
	Omitted      int `json:"omitted"`
	Deduplicated int `json:"deduplicated"`
}

// ContextDoc is one memory in a context block (tidemark.ContextDoc).
type ContextDoc struct {
	// Rank is the document's place in the block, from 1.
	Rank    int             `json:"rank"`
	ID      string          `json:"id"`
	Source  temporal.Source `json:"source"`
	DocID   string          `json:"doc_id,omitempty"`
	Version int             `json:"version,omitempty"`
	Status  temporal.Status `json:"status"`
	Created time.Time       `json:"created"`
	// ValidFrom and ValidTo are the valid window believed now (absent:
	// open).
	ValidFrom time.Time `json:"valid_from,omitzero"`
	ValidTo   time.Time `json:"valid_to,omitzero"`
	// The per-signal scores and the final score.
	Sim        float64 `json:"sim"`
	Temporal   float64 `json:"temporal"`
	Confidence float64 `json:"confidence"`
	Relational float64 `json:"relational"`
	Score      float64 `json:"score"`
	// Edges is the memory's relational degree; Accesses, Positive and
	// Negative its counters.
	Edges    int   `json:"edges"`
	Accesses int64 `json:"accesses"`
	Positive int64 `json:"positive"`
	Negative int64 `json:"negative"`
	// ConflictsWith holds the ranks of the documents of this block this
	// one contradicts; Review the changed dependencies a ripple flagged it
	// against.
	ConflictsWith []int    `json:"conflicts_with,omitempty"`
	Review        []string `json:"review,omitempty"`
	// Text is the memory's text, Tokens its estimate.
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
}
