package tidemark

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/temporal"
)

// Options configure a DB. A nil *Options means the defaults; a zero field
// takes its default.
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
	return nil
}

// EnsureDefaults returns a copy of o with every zero field set to its
// default.
func (o *Options) EnsureDefaults() Options {
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
	// Profile (default 30, SmartVector's).
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
	// vLLM, Hugging Face TEI, llama.cpp's server, LM Studio) or "ollama"
	// (Ollama's native /api/embed). The last two need Remote.
	Embedder string
	// Remote configures the "openai" and "ollama" embedders; it is stored
	// with the collection (the API key's variable name, never the key).
	Remote RemoteEmbedder
	// Keys says where fact keys come from (default KeysAuto: memories
	// with text and no key are keyed at ingest, and a marker-free update
	// of a current memory takes its key; KeysExplicit: only the keys
	// callers give).
	Keys KeyPolicy
	// ExactThreshold is the number of memories on the visible surface up
	// to which a search scans every memory with the fused stage instead of
	// asking the HNSW index (default 10000).
	ExactThreshold int
	// Overfetch is how many candidates per result the HNSW plan asks for
	// (default 8: k = 10 scores 80 candidates; at least 64 are asked).
	Overfetch int
	// M, EfConstruction and Ef configure the HNSW indexes (defaults 16,
	// 100, 64; see index.Options).
	M, EfConstruction, Ef int
	// ExpandHops and ExpandBudget bound the version-link expansion that
	// brings archived versions into a historical query (defaults 8 and
	// 256; see index.LinkGraph.Expand).
	ExpandHops, ExpandBudget int
	// FeedbackPerDay and FeedbackPerSource bound how much one feedback
	// source can move one memory's confidence (SmartVector §11.2): at most
	// FeedbackPerDay judgements per 24 hours of transaction time and
	// FeedbackPerSource in all are counted (defaults 5 and 20); more is
	// refused with ErrRateLimited.
	FeedbackPerDay, FeedbackPerSource int
	// StaticDecay turns drift-adaptive decay off: a method that asks for
	// it (temporal.MethodVDD) then decays every memory at its static
	// ln 2 / half-life (default false: the drift detectors' λ(t) is used).
	StaticDecay bool
}

// Defaults of CollectionOptions.
const (
	DefaultExactThreshold = 10000
	DefaultOverfetch      = 8
	DefaultExpandHops     = 8
	DefaultExpandBudget   = 256
	// Feedback limits per (memory, source).
	DefaultFeedbackPerDay    = 5
	DefaultFeedbackPerSource = 20
	MaxDim                   = 1 << 16
)

// Validate reports the first invalid field.
func (o *CollectionOptions) Validate() error {
	if o == nil {
		return fmt.Errorf("%w: CollectionOptions are required (Dim)", ErrOptions)
	}
	switch {
	case o.Dim < 1 || o.Dim > MaxDim:
		return fmt.Errorf("%w: CollectionOptions.Dim = %d, want 1…%d", ErrOptions, o.Dim, MaxDim)
	case int(o.Method) >= len(temporal.Methods()):
		return fmt.Errorf("%w: CollectionOptions.Method = %d", ErrOptions, o.Method)
	case !(o.HalfLife >= 0) || math.IsInf(o.HalfLife, 0):
		return fmt.Errorf("%w: CollectionOptions.HalfLife = %v, want a finite number ≥ 0", ErrOptions, o.HalfLife)
	case !slices.Contains(embedders, o.Embedder):
		return fmt.Errorf("%w: CollectionOptions.Embedder = %q, want one of %q", ErrOptions, o.Embedder, embedders)
	case o.Keys > KeysExplicit:
		return fmt.Errorf("%w: CollectionOptions.Keys = %d", ErrOptions, o.Keys)
	case o.ExactThreshold < 0, o.Overfetch < 0, o.M < 0, o.EfConstruction < 0, o.Ef < 0, o.ExpandHops < 0, o.ExpandBudget < 0,
		o.FeedbackPerDay < 0, o.FeedbackPerSource < 0:
		return fmt.Errorf("%w: CollectionOptions has a negative count", ErrOptions)
	case !o.Epoch.IsZero() && (o.Epoch.Year() < minYear || o.Epoch.Year() > maxYear):
		return fmt.Errorf("%w: CollectionOptions.Epoch = %v, want the years %d…%d", ErrOptions, o.Epoch, minYear, maxYear)
	case o.ExpandHops > 64, o.ExpandBudget > 1<<20, o.Overfetch > 1<<10, o.ExactThreshold > 1<<31,
		o.FeedbackPerDay > 1<<30, o.FeedbackPerSource > 1<<30:
		return fmt.Errorf("%w: CollectionOptions has a count past its limit (ExpandHops ≤ 64, ExpandBudget ≤ 2^20, Overfetch ≤ 1024)", ErrOptions)
	}
	if err := o.Remote.validate(o.Embedder); err != nil {
		return err
	}
	// The HNSW parameters, as the index checks them (M, EfConstruction, Ef).
	io := index.Options{Dim: o.Dim, M: o.M, EfConstruction: o.EfConstruction, Ef: o.Ef}
	if err := io.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return nil
}

func (o CollectionOptions) withDefaults(now time.Time) CollectionOptions {
	if o.HalfLife == 0 {
		o.HalfLife = temporal.SmartVectorHalfLife
	}
	if o.Epoch.IsZero() {
		o.Epoch = now.UTC().Truncate(24 * time.Hour)
	}
	o.Epoch = o.Epoch.UTC()
	if o.ExactThreshold == 0 {
		o.ExactThreshold = DefaultExactThreshold
	}
	if o.Overfetch == 0 {
		o.Overfetch = DefaultOverfetch
	}
	if o.M == 0 {
		o.M = 16
	}
	if o.EfConstruction == 0 {
		o.EfConstruction = 100
	}
	if o.Ef == 0 {
		o.Ef = 64
	}
	if o.ExpandHops == 0 {
		o.ExpandHops = DefaultExpandHops
	}
	if o.ExpandBudget == 0 {
		o.ExpandBudget = DefaultExpandBudget
	}
	if o.FeedbackPerDay == 0 {
		o.FeedbackPerDay = DefaultFeedbackPerDay
	}
	if o.FeedbackPerSource == 0 {
		o.FeedbackPerSource = DefaultFeedbackPerSource
	}
	return o
}

// embedders are the names CollectionOptions.Embedder takes.
var embedders = []string{"", "hashing", "hashing-words", "openai", "ollama"}

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
	u, err := url.Parse(r.BaseURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%w: CollectionOptions.Remote.BaseURL = %q, want an http or https URL", ErrOptions, r.BaseURL)
	case u.User != nil || u.RawQuery != "":
		return fmt.Errorf("%w: CollectionOptions.Remote.BaseURL must hold no credentials or query (use APIKeyEnv)", ErrOptions)
	case r.Model == "" || len(r.Model) > 256:
		return fmt.Errorf("%w: CollectionOptions.Remote.Model is required (at most 256 bytes)", ErrOptions)
	case len(r.BaseURL) > 2048:
		return fmt.Errorf("%w: CollectionOptions.Remote.BaseURL is longer than 2048 bytes", ErrOptions)
	case len(r.APIKeyEnv) > 256 || strings.ContainsAny(r.APIKeyEnv, "= \t\n\x00"):
		return fmt.Errorf("%w: CollectionOptions.Remote.APIKeyEnv = %q is not an environment variable name", ErrOptions, r.APIKeyEnv)
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
