package tidemark

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/temporal"
)

// Options configure a DB. A nil *Options means the defaults; a zero field
// takes its default.
//
// The options types of this package (Options, CollectionOptions,
// DocumentOptions, ConsolidateOptions, ContextOptions) and of packages
// index, embed, store, temporal (DriftOptions) and eval follow one idiom:
// a nil pointer means every default and a zero field its default;
// Validate reports the first invalid field by its name without changing
// anything; WithDefaults returns a copy with the zero fields filled from
// exported Default… constants (or functions). A default that depends on where the
// options are used (a collection's creation day, the DB's clock, the
// collection's embedder) is filled there, and its field says so.
type Options struct {
	// Clock is the engine's clock: it gives the transaction time of every
	// write and "now" of every search that names none (default time.Now).
	// Transaction times never go backwards: a write is recorded at the
	// later of the clock and the previous write's time.
	Clock func() time.Time
	// CheckpointRecords is the number of log records after which the DB
	// writes a snapshot in the background and drops the log before it
	// (default 4096; negative turns automatic checkpoints off, leaving
	// Checkpoint and Close).
	CheckpointRecords int
	// CheckpointBytes is the number of log bytes after which the DB
	// checkpoints (default 256 MiB; negative: off).
	CheckpointBytes int64
	// MaxBatch is the largest number of memories one Put takes (default
	// 10000).
	MaxBatch int
	// MaxTextBytes is the largest Text of one memory (default 1 MiB).
	MaxTextBytes int
	// MaxRecordBytes is the largest log record, so the largest encoded Put
	// (default 64 MiB).
	MaxRecordBytes int
	// NoSync turns off every fsync: writes survive the process being
	// killed but not a machine crash. For tests and benchmarks only
	// (default false).
	NoSync bool
	// Backend is the fused scoring stage (default kernels.DefaultCPU()).
	Backend kernels.Backend
	// OnSync, when set, is called with the duration of every fsync of the
	// write-ahead log (from its writer goroutine: it must be quick). For
	// metrics.
	OnSync func(time.Duration)
	// OnCheckpointError, when set, is called with the error of every
	// background checkpoint that fails (from its goroutine): the writes go
	// on, but the log grows until one succeeds. See DB.CheckpointError.
	OnCheckpointError func(error)
	// EmbedCacheEntries bounds the file-backed cache of remote embeddings
	// in the data directory (embeddings.cache), shared by the collections
	// whose embedder is "openai" or "ollama" (default 20000 vectors;
	// negative: no file cache, an in-memory one per collection).
	EmbedCacheEntries int
	// EmbedHTTPClient is the HTTP client of remote embedders (default: one
	// with sane connection timeouts; tests point it at a fake server).
	EmbedHTTPClient *http.Client
	// ConsolidateEvery runs DB.Consolidate in the background at this
	// interval (default 0: never; call Consolidate). A run's error is kept
	// for DB.LastConsolidation.
	ConsolidateEvery time.Duration
	// Embedders gives back, by collection name, the embedders of
	// collections created with a Go value (CollectionOptions.TextEmbedder,
	// stored as the Embedder name EmbedderCustom): the value itself is not
	// stored, so a reopened collection embeds text only if it is passed
	// here again. A collection whose embedder is missing opens, serves
	// everything given as vectors, and fails what needs its text embedded
	// with ErrEmbedder. An entry for a collection that exists with another
	// embedder is an error (Open and CreateCollection return ErrOptions);
	// an entry for one that does not exist yet serves a later
	// CreateCollection with Embedder EmbedderCustom.
	Embedders map[string]embed.Embedder
}

// Defaults of Options.
const (
	DefaultCheckpointRecords = 4096
	DefaultCheckpointBytes   = 256 << 20
	DefaultMaxBatch          = 10000
	DefaultMaxTextBytes      = 1 << 20
	DefaultMaxRecordBytes    = 64 << 20
	DefaultEmbedCacheEntries = 20000
)

// Validate reports the first invalid field.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	switch {
	case o.MaxBatch < 0:
		return fmt.Errorf("%w: Options.MaxBatch = %d, want ≥ 0", ErrOptions, o.MaxBatch)
	case o.MaxTextBytes < 0:
		return fmt.Errorf("%w: Options.MaxTextBytes = %d, want ≥ 0", ErrOptions, o.MaxTextBytes)
	case o.MaxRecordBytes < 0 || o.MaxRecordBytes > 1<<30:
		return fmt.Errorf("%w: Options.MaxRecordBytes = %d, want 0…1 GiB", ErrOptions, o.MaxRecordBytes)
	case o.ConsolidateEvery < 0:
		return fmt.Errorf("%w: Options.ConsolidateEvery = %v, want ≥ 0", ErrOptions, o.ConsolidateEvery)
	}
	for _, name := range slices.Sorted(maps.Keys(o.Embedders)) {
		if o.Embedders[name] == nil {
			return fmt.Errorf("%w: Options.Embedders[%q] is nil", ErrOptions, name)
		}
	}
	return nil
}

// WithDefaults returns a copy of o with every zero field set to its
// default; a nil o gives every default. It does not validate.
func (o *Options) WithDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Clock == nil {
		r.Clock = time.Now
	}
	if r.CheckpointRecords == 0 {
		r.CheckpointRecords = DefaultCheckpointRecords
	}
	if r.CheckpointBytes == 0 {
		r.CheckpointBytes = DefaultCheckpointBytes
	}
	if r.MaxBatch == 0 {
		r.MaxBatch = DefaultMaxBatch
	}
	if r.MaxTextBytes == 0 {
		r.MaxTextBytes = DefaultMaxTextBytes
	}
	if r.MaxRecordBytes == 0 {
		r.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if r.Backend == nil {
		r.Backend = kernels.DefaultCPU()
	}
	if r.EmbedCacheEntries == 0 {
		r.EmbedCacheEntries = DefaultEmbedCacheEntries
	}
	return r
}

// CollectionOptions configure a collection. They are fixed when it is
// created and stored with it. A zero field takes its default.
type CollectionOptions struct {
	// Dim is the vector dimension (required, 1…65536).
	Dim int
	// Method is the scoring preset searches use when they name none
	// (default temporal.MethodTidemark, the zero value).
	Method temporal.Method
	// HalfLife is the decay half-life in days of a memory without a
	// Profile (default temporal.SmartVectorHalfLife, 30, SmartVector's).
	HalfLife float64
	// Epoch is the origin of the float32 day clock of the fused stage:
	// times are kept as days since it, exact to about a second within half
	// a year of it and to about 20 s ten years away (default: the
	// collection's creation time, cut to the UTC day).
	Epoch time.Time
	// Embedder names the embedder for memories and queries given as text
	// without a vector: "" (none: vectors are required), "hashing" (the
	// offline default: embed.Hashing at Dim with word and character
	// n-gram features, deterministic, no network), "hashing-words"
	// (embed.Hashing with word features alone — what "hashing" was for
	// collections created before format version 2), "openai" (an
	// OpenAI-compatible POST {base}/embeddings: OpenAI, Ollama's /v1,
	// vLLM, Hugging Face TEI, llama.cpp's server, LM Studio), "ollama"
	// (Ollama's native /api/embed) or EmbedderCustom ("custom": the Go
	// value of TextEmbedder, or of Options.Embedders). "openai" and
	// "ollama" need Remote.
	Embedder string
	// TextEmbedder is an embedder given as a Go value instead of by name:
	// any embed.Embedder (a model of your own, embed.NewHashing with other
	// options, a client of your own service). Its Dim must be Dim (or 0
	// while it does not know it). Embedder is then "" or EmbedderCustom,
	// and the collection's options read Embedder EmbedderCustom, which is
	// what is stored: the value itself cannot be. When the DB is closed
	// and opened again, the collection embeds text only if the value is
	// passed again in Options.Embedders under the collection's name;
	// without it the collection opens and serves everything given as
	// vectors, and a Put, PutDocument or Search that needs text embedded
	// fails with ErrEmbedder, saying so. Collection.Options reports the
	// value in use (nil while it is missing). Its vectors are not cached
	// by the DB (Options.EmbedCacheEntries is for "openai" and "ollama").
	TextEmbedder embed.Embedder
	// Remote configures the "openai" and "ollama" embedders; it is stored
	// with the collection (the API key's variable name, never the key).
	Remote RemoteEmbedder
	// Keys says where fact keys come from (default KeysAuto: memories
	// with text and no key are keyed at ingest, and a marker-free update
	// of a current memory takes its key; KeysExplicit: only the keys
	// callers give).
	Keys KeyPolicy
	// Split says whether a memory that states several facts is split
	// into one sibling per fact (default SplitAuto, with Keys = KeysAuto:
	// at Put, and in consolidation for memories written before; SplitOff:
	// never). See SplitPolicy.
	Split SplitPolicy
	// Planner configures an optional LLM planner for consolidation
	// (All-Mem's diagnoser and Split planner; PlannerOptions): zero means
	// none, the deterministic rules alone. It is stored with the
	// collection (the API key's variable name, never the key).
	Planner PlannerOptions
	// ExactThreshold is the number of memories on the visible surface up
	// to which a search scans every memory with the fused stage instead of
	// asking the HNSW index (default DefaultExactThreshold, 10000).
	ExactThreshold int
	// Overfetch is how many candidates per result the HNSW plan asks for
	// (default DefaultOverfetch, 8: k = 10 scores 80 candidates; at least
	// 64 are asked).
	Overfetch int
	// M, EfConstruction and Ef configure the HNSW indexes (defaults
	// index.DefaultM and index.DefaultEfConstruction, 16 and 100, and
	// DefaultEf, 200; see index.Options). The ANN plan's beam is at least
	// Ef: 200 keeps the engine's recall@10 (cosine only) at 0.958 on
	// GloVe-100 lifted to 768 dimensions, 100k memories (bench scale;
	// 0.90 at 80, 0.948 at 160).
	M, EfConstruction, Ef int
	// ExpandHops and ExpandBudget bound the version-link expansion that
	// brings archived versions into a historical query (defaults
	// DefaultExpandHops and DefaultExpandBudget, 8 and 256; see
	// internal/links, Graph.Expand).
	ExpandHops, ExpandBudget int
	// FeedbackPerDay and FeedbackPerSource bound how much one feedback
	// source can move one memory's confidence (SmartVector §11.2): at most
	// FeedbackPerDay judgements per 24 hours of transaction time and
	// FeedbackPerSource in all are counted (defaults DefaultFeedbackPerDay
	// and DefaultFeedbackPerSource, 5 and 20); more is refused with
	// ErrRateLimited.
	FeedbackPerDay, FeedbackPerSource int
	// StaticDecay turns drift-adaptive decay off: a method that asks for
	// it (temporal.MethodVDD) then decays every memory at its static
	// ln 2 / half-life (default false: the drift detectors' λ(t) is used).
	StaticDecay bool
}

// Defaults of CollectionOptions; M's and EfConstruction's are the index
// package's (index.DefaultM, index.DefaultEfConstruction) and HalfLife's
// is temporal.SmartVectorHalfLife.
const (
	DefaultEf             = 200
	DefaultExactThreshold = 10000
	DefaultOverfetch      = 8
	DefaultExpandHops     = 8
	DefaultExpandBudget   = 256
	// Feedback limits per (memory, source).
	DefaultFeedbackPerDay    = 5
	DefaultFeedbackPerSource = 20
	MaxDim                   = 1 << 16
)

// EmbedderCustom is the CollectionOptions.Embedder of a collection whose
// embedder is a Go value (CollectionOptions.TextEmbedder).
const EmbedderCustom = "custom"

// Validate reports the first invalid field, by name, in an error wrapping
// ErrOptions. It does not change o. A nil o is invalid: Dim is required.
func (o *CollectionOptions) Validate() error {
	if o == nil {
		return fmt.Errorf("%w: CollectionOptions are required (Dim)", ErrOptions)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: CollectionOptions."+format, append([]any{ErrOptions}, args...)...)
	}
	switch {
	case o.Dim < 1 || o.Dim > MaxDim:
		return bad("Dim = %d, want 1…%d", o.Dim, MaxDim)
	case int(o.Method) >= len(temporal.Methods()):
		return bad("Method = %d", o.Method)
	case !(o.HalfLife >= 0) || math.IsInf(o.HalfLife, 0):
		return bad("HalfLife = %v, want a finite number ≥ 0", o.HalfLife)
	case !slices.Contains(embedders, o.Embedder):
		return bad("Embedder = %q, want one of %q", o.Embedder, embedders)
	case o.TextEmbedder != nil && o.Embedder != "" && o.Embedder != EmbedderCustom:
		return bad("TextEmbedder is set and so is Embedder = %q: give one", o.Embedder)
	case o.TextEmbedder != nil && o.TextEmbedder.Dim() != 0 && o.TextEmbedder.Dim() != o.Dim:
		return bad("TextEmbedder makes vectors of %d dimensions, want Dim = %d", o.TextEmbedder.Dim(), o.Dim)
	case o.Keys > KeysExplicit:
		return bad("Keys = %d", o.Keys)
	case o.Split > SplitOff:
		return bad("Split = %d", o.Split)
	case !o.Epoch.IsZero() && (o.Epoch.Year() < minYear || o.Epoch.Year() > maxYear):
		return bad("Epoch = %v, want the years %d…%d", o.Epoch, minYear, maxYear)
	}
	// The counts: 0 takes the default; at most what the stored format
	// holds (1 << 30), or the field's own limit.
	for _, f := range []struct {
		name   string
		v, max int
	}{
		{"ExactThreshold", o.ExactThreshold, 1 << 30},
		{"Overfetch", o.Overfetch, 1 << 10},
		{"M", o.M, index.MaxM},
		{"EfConstruction", o.EfConstruction, 1 << 30},
		{"Ef", o.Ef, 1 << 30},
		{"ExpandHops", o.ExpandHops, 64},
		{"ExpandBudget", o.ExpandBudget, 1 << 20},
		{"FeedbackPerDay", o.FeedbackPerDay, 1 << 30},
		{"FeedbackPerSource", o.FeedbackPerSource, 1 << 30},
	} {
		if f.v < 0 || f.v > f.max {
			return bad("%s = %d, want 0 (the default) … %d", f.name, f.v, f.max)
		}
	}
	if o.M == 1 {
		return bad("M = 1, want 2…%d (or 0 for the default %d)", index.MaxM, index.DefaultM)
	}
	if err := o.Planner.validate(); err != nil {
		return err
	}
	if err := o.Remote.validate(o.Embedder); err != nil {
		return err
	}
	// The HNSW parameters, as the index checks them.
	io := index.Options{Dim: o.Dim, M: o.M, EfConstruction: o.EfConstruction, Ef: o.Ef}
	if err := io.Validate(); err != nil {
		return bad("M, EfConstruction or Ef: %w", err)
	}
	return nil
}

// WithDefaults returns a copy of o with every zero field set to its
// default and Epoch in UTC; a nil o gives every default (and a zero Dim).
// A zero Epoch stays zero: its default is the collection's creation day,
// which CreateCollection fills. It does not validate.
func (o *CollectionOptions) WithDefaults() CollectionOptions {
	var r CollectionOptions
	if o != nil {
		r = *o
	}
	if r.HalfLife == 0 {
		r.HalfLife = temporal.SmartVectorHalfLife
	}
	r.Planner = r.Planner.withDefaults()
	if !r.Epoch.IsZero() {
		r.Epoch = r.Epoch.UTC()
	}
	if r.TextEmbedder != nil && r.Embedder == "" {
		r.Embedder = EmbedderCustom
	}
	if r.ExactThreshold == 0 {
		r.ExactThreshold = DefaultExactThreshold
	}
	if r.Overfetch == 0 {
		r.Overfetch = DefaultOverfetch
	}
	if r.M == 0 {
		r.M = index.DefaultM
	}
	if r.EfConstruction == 0 {
		r.EfConstruction = index.DefaultEfConstruction
	}
	if r.Ef == 0 {
		r.Ef = DefaultEf
	}
	if r.ExpandHops == 0 {
		r.ExpandHops = DefaultExpandHops
	}
	if r.ExpandBudget == 0 {
		r.ExpandBudget = DefaultExpandBudget
	}
	if r.FeedbackPerDay == 0 {
		r.FeedbackPerDay = DefaultFeedbackPerDay
	}
	if r.FeedbackPerSource == 0 {
		r.FeedbackPerSource = DefaultFeedbackPerSource
	}
	return r
}

// createdAt returns the options of a collection created at tx: WithDefaults,
// and a zero Epoch set to tx's UTC day.
func (o *CollectionOptions) createdAt(tx time.Time) CollectionOptions {
	r := o.WithDefaults()
	if r.Epoch.IsZero() {
		r.Epoch = tx.UTC().Truncate(24 * time.Hour)
	}
	return r
}

// embedders are the names CollectionOptions.Embedder takes.
var embedders = []string{"", "hashing", "hashing-words", "openai", "ollama", EmbedderCustom}

// RemoteEmbedder configures an embedding endpoint (CollectionOptions.Remote).
type RemoteEmbedder struct {
	// BaseURL is the endpoint's base, http or https (required): e.g.
	// "https://api.openai.com/v1", "http://localhost:11434/v1" for
	// Ollama's OpenAI-compatible API, "http://localhost:11434" for its
	// native one.
	BaseURL string
	// Model is the model name (required).
	Model string
	// APIKeyEnv is the name of the environment variable that holds the
	// bearer key, read at each request ("" for none). The key itself is
	// never stored, logged or put in an error.
	APIKeyEnv string
}

func (r RemoteEmbedder) validate(embedder string) error {
	remote := embedder == "openai" || embedder == "ollama"
	if !remote {
		if r != (RemoteEmbedder{}) {
			return fmt.Errorf("%w: CollectionOptions.Remote is set but Embedder is %q, not \"openai\" or \"ollama\"", ErrOptions, embedder)
		}
		return nil
	}
	return checkEndpoint("Remote", r.BaseURL, r.Model, r.APIKeyEnv)
}

// checkEndpoint checks a model endpoint's options (CollectionOptions.
// Remote or Planner, named by field): an http or https base URL without
// credentials or query, a model, and an environment variable's name.
func checkEndpoint(field, baseURL, model, keyEnv string) error {
	u, err := url.Parse(baseURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%w: CollectionOptions.%s.BaseURL = %q, want an http or https URL", ErrOptions, field, baseURL)
	case u.User != nil || u.RawQuery != "":
		return fmt.Errorf("%w: CollectionOptions.%s.BaseURL must hold no credentials or query (use APIKeyEnv)", ErrOptions, field)
	case model == "" || len(model) > 256:
		return fmt.Errorf("%w: CollectionOptions.%s.Model is required (at most 256 bytes)", ErrOptions, field)
	case len(baseURL) > 2048:
		return fmt.Errorf("%w: CollectionOptions.%s.BaseURL is longer than 2048 bytes", ErrOptions, field)
	case len(keyEnv) > 256 || strings.ContainsAny(keyEnv, "= \t\n\x00"):
		return fmt.Errorf("%w: CollectionOptions.%s.APIKeyEnv = %q is not an environment variable name", ErrOptions, field, keyEnv)
	}
	return nil
}

// KeyPolicy says where a collection's fact keys come from.
type KeyPolicy uint8

const (
	// KeysAuto is the default: a memory with text, no key, no document
	// and a kind other than Event is keyed at ingest by the rule-based
	// extractor (extract.Key); a memory whose text repeats a current
	// memory's statement with one value changed after the verb
	// (extract.Compare's Update) shares that memory's key, so the newer
	// supersedes the older by temporal.Resolve's order. A key the caller
	// gives always wins, and overrides an extracted one.
	KeysAuto KeyPolicy = iota
	// KeysExplicit keys only what callers key (the behaviour of
	// collections created before format version 2).
	KeysExplicit
)

var keyPolicyNames = [...]string{"auto", "explicit"}

func (k KeyPolicy) String() string {
	if int(k) < len(keyPolicyNames) {
		return keyPolicyNames[k]
	}
	return fmt.Sprintf("KeyPolicy(%d)", uint8(k))
}

// MarshalText implements encoding.TextMarshaler.
func (k KeyPolicy) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler ("auto", "explicit").
func (k *KeyPolicy) UnmarshalText(b []byte) error {
	i := slices.Index(keyPolicyNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("%w: key policy %q, want auto or explicit", ErrInvalid, b)
	}
	*k = KeyPolicy(i)
	return nil
}

// SplitPolicy says whether a collection splits memories that state
// several facts (All-Mem's Split, App. B.2.1).
type SplitPolicy uint8

const (
	// SplitAuto is the default: in a collection that keys at ingest
	// (KeysAuto) and embeds text, a memory given as text without a key,
	// document or vector whose text holds two or more separately keyable
	// statements (extract.Split) is stored as archived evidence and split
	// into siblings "ID#1", "ID#2", …, each an exact substring of the text
	// with its own key, vector and validity (Memory.SplitInto); a later
	// update then supersedes the one statement it changes, and the others
	// stay current. A memory kept whole is split when a later memory
	// restates one of its statements with one value changed (the update
	// is the evidence). Consolidation splits the memories written before
	// (ConsolidationReport.Split). Narrative text is not split by the
	// rules.
	SplitAuto SplitPolicy = iota
	// SplitOff never splits.
	SplitOff
)

var splitPolicyNames = [...]string{"auto", "off"}

func (p SplitPolicy) String() string {
	if int(p) < len(splitPolicyNames) {
		return splitPolicyNames[p]
	}
	return fmt.Sprintf("SplitPolicy(%d)", uint8(p))
}

// MarshalText implements encoding.TextMarshaler.
func (p SplitPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler ("auto", "off").
func (p *SplitPolicy) UnmarshalText(b []byte) error {
	i := slices.Index(splitPolicyNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("%w: split policy %q, want auto or off", ErrInvalid, b)
	}
	*p = SplitPolicy(i)
	return nil
}

// PlannerOptions configure a collection's consolidation planner: any
// OpenAI-compatible chat-completions endpoint (POST {BaseURL}/chat/
// completions: OpenAI, Ollama's /v1, vLLM, llama.cpp server, LM Studio)
// asked, during a consolidation run, for All-Mem's diagnosis of Split,
// Merge and Update targets with confidences and for the segments of a
// Split, as JSON only (All-Mem App. C.1, B.6). Its answers are
// proposals: the executor accepts one only at a confidence of at least
// Threshold (All-Mem Eq. 28) and after checking every rule of App. B.5
// and C.2 — a Split's segments exact substrings of the memory, in order,
// without overlap, covering it (extract.CheckSegments); a Merge of 2 to 4
// memories; an Update whose new memory is newer; every memory named
// exists, is current, was not edited earlier in the run, and is neither a
// document chunk, an event nor keyed by its caller — and otherwise does
// nothing (the rules' edits of the same run leave alone what it changed). When the endpoint fails (an error, a timeout, an
// answer that is not the JSON asked for), the deterministic rules decide
// instead. The planner is never on the read path.
type PlannerOptions struct {
	// BaseURL is the endpoint's base, http or https, e.g.
	// "http://localhost:11434/v1" ("" for no planner).
	BaseURL string
	// Model is the chat model (required with BaseURL).
	Model string
	// APIKeyEnv is the name of the environment variable holding the
	// bearer key, read at each request ("" for none).
	APIKeyEnv string
	// Threshold is θ, the confidence a proposal needs (default
	// DefaultPlannerThreshold, 0.9; at most 1).
	Threshold float64
	// MaxTargets bounds the memories one run asks about (default
	// DefaultPlannerTargets, 32); the rest are judged by the rules.
	MaxTargets int
	// Timeout bounds one request (default DefaultPlannerTimeout, 30 s).
	Timeout time.Duration
}

// Defaults of PlannerOptions.
const (
	DefaultPlannerThreshold = 0.9
	DefaultPlannerTargets   = 32
	DefaultPlannerTimeout   = 30 * time.Second
)

// enabled reports whether a planner is configured.
func (p PlannerOptions) enabled() bool { return p.BaseURL != "" }

// withDefaults fills the zero fields of a configured planner.
func (p PlannerOptions) withDefaults() PlannerOptions {
	if !p.enabled() {
		return p
	}
	if p.Threshold == 0 {
		p.Threshold = DefaultPlannerThreshold
	}
	if p.MaxTargets == 0 {
		p.MaxTargets = DefaultPlannerTargets
	}
	if p.Timeout == 0 {
		p.Timeout = DefaultPlannerTimeout
	}
	return p
}

func (p PlannerOptions) validate() error {
	if !p.enabled() {
		if p != (PlannerOptions{}) {
			return fmt.Errorf("%w: CollectionOptions.Planner is set without a BaseURL", ErrOptions)
		}
		return nil
	}
	if err := checkEndpoint("Planner", p.BaseURL, p.Model, p.APIKeyEnv); err != nil {
		return err
	}
	switch {
	case !(p.Threshold >= 0 && p.Threshold <= 1):
		return fmt.Errorf("%w: CollectionOptions.Planner.Threshold = %v, want 0 (the default) … 1", ErrOptions, p.Threshold)
	case p.MaxTargets < 0 || p.MaxTargets > 1<<20:
		return fmt.Errorf("%w: CollectionOptions.Planner.MaxTargets = %d, want 0 (the default) … %d", ErrOptions, p.MaxTargets, 1<<20)
	case p.Timeout < 0 || p.Timeout > time.Hour:
		return fmt.Errorf("%w: CollectionOptions.Planner.Timeout = %v, want 0 (the default) … 1h", ErrOptions, p.Timeout)
	}
	return nil
}
