package api

import "fmt"

// Collection describes a collection: the answer of GET and POST
// /v1/collections/{c}, and an element of CollectionList.
type Collection struct {
	// Name is the collection's name.
	Name string `json:"name"`
	// Dim is the dimension of its vectors.
	Dim int `json:"dim"`
	// Method is the scoring preset its searches use by default
	// (temporal.Method's text: "tidemark", "article", …).
	Method string `json:"method,omitempty"`
	// Embedder is its text embedder ("" when it stores vectors only).
	Embedder string `json:"embedder,omitempty"`
	// Remote configures the "openai" and "ollama" embedders.
	Remote *RemoteEmbedder `json:"remote,omitempty"`
	// Keys says where its fact keys come from.
	Keys KeyPolicy `json:"keys"`
	// Split says whether memories stating several facts are split.
	Split SplitPolicy `json:"split"`
	// Planner is its consolidation planner, if any.
	Planner *Planner `json:"planner,omitempty"`
	// Stored counts the memories stored, Visible those on the visible
	// surface.
	Stored  int `json:"stored"`
	Visible int `json:"visible"`
}

// CollectionList is the answer of GET /v1/collections: the collections
// the token may read.
type CollectionList struct {
	// Collections are described in name order.
	Collections []Collection `json:"collections"`
}

// CreateCollection is the body of POST /v1/collections/{c}.
type CreateCollection struct {
	// Dim is the dimension of the collection's vectors (required).
	Dim int `json:"dim"`
	// Method is the default scoring preset (default "tidemark").
	Method string `json:"method,omitempty"`
	// Embedder is the text embedder: "" (vectors only), "hashing",
	// "hashing-words", "openai" or "ollama" (with Remote).
	Embedder string `json:"embedder,omitempty"`
	// Remote configures the "openai" and "ollama" embedders.
	Remote *RemoteEmbedder `json:"remote,omitempty"`
	// HalfLife is the decay half-life in days of a memory without a
	// profile (default 30).
	HalfLife float64 `json:"half_life,omitempty"`
	// Keys is "auto" (the default: keys extracted from text at ingest)
	// or "explicit".
	Keys KeyPolicy `json:"keys,omitzero"`
	// Split is "auto" (the default: a memory given as text that states
	// several facts is split into one sibling per fact) or "off".
	Split SplitPolicy `json:"split,omitzero"`
	// Planner configures an optional LLM planner for consolidation (an
	// OpenAI-compatible chat-completions endpoint among the server's
	// allowed model URLs).
	Planner *Planner `json:"planner,omitempty"`
}

// Planner configures a collection's consolidation planner
// (tidemark.PlannerOptions): the name of the server's environment
// variable holding the API key, never the key.
type Planner struct {
	// BaseURL is the endpoint, e.g. http://localhost:11434/v1.
	BaseURL string `json:"base_url"`
	// Model is the chat model.
	Model string `json:"model"`
	// APIKeyEnv names the server's environment variable holding the key.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Threshold is the confidence a proposal needs (default 0.9).
	Threshold float64 `json:"threshold,omitempty"`
	// MaxTargets bounds the memories one run asks about (default 32).
	MaxTargets int `json:"max_targets,omitempty"`
	// TimeoutMS bounds one request, in milliseconds (default 30000).
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// RemoteEmbedder configures a remote embedder: the name of the server's
// environment variable holding the API key, never the key.
type RemoteEmbedder struct {
	// BaseURL is the endpoint, e.g. http://localhost:11434/v1.
	BaseURL string `json:"base_url"`
	// Model is the embedding model.
	Model string `json:"model"`
	// APIKeyEnv names the server's environment variable holding the key.
	APIKeyEnv string `json:"api_key_env,omitempty"`
}

// Dropped is the answer of DELETE /v1/collections/{c}?confirm={c}.
type Dropped struct {
	// Dropped is the name of the collection dropped.
	Dropped string `json:"dropped"`
}

// KeyPolicy says where a collection's fact keys come from. The zero value
// (absent) means the server's default, KeysAuto.
type KeyPolicy string

// The key policies.
const (
	// KeysAuto: a memory with text and no key is keyed at ingest by the
	// rule-based extractor; a key the caller gives always wins.
	KeysAuto KeyPolicy = "auto"
	// KeysExplicit: only the keys callers give.
	KeysExplicit KeyPolicy = "explicit"
)

// UnmarshalText implements encoding.TextUnmarshaler: it accepts "auto"
// and "explicit" only.
func (k *KeyPolicy) UnmarshalText(b []byte) error {
	switch p := KeyPolicy(b); p {
	case KeysAuto, KeysExplicit:
		*k = p
		return nil
	}
	return fmt.Errorf("tidemark: invalid input: key policy %q, want auto or explicit", b)
}

// SplitPolicy says whether a collection splits memories that state
// several facts (tidemark.SplitPolicy). The zero value (absent) means the
// server's default, SplitAuto.
type SplitPolicy string

// The split policies.
const (
	// SplitAuto: a memory given as text without a key that states several
	// separately keyable facts is split into siblings, one per fact.
	SplitAuto SplitPolicy = "auto"
	// SplitOff: memories are never split.
	SplitOff SplitPolicy = "off"
)

// UnmarshalText implements encoding.TextUnmarshaler: it accepts "auto"
// and "off" only.
func (p *SplitPolicy) UnmarshalText(b []byte) error {
	switch v := SplitPolicy(b); v {
	case SplitAuto, SplitOff:
		*p = v
		return nil
	}
	return fmt.Errorf("tidemark: invalid input: split policy %q, want auto or off", b)
}
