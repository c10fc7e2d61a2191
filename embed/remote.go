package embed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RemoteAPI is the wire format a [Remote] speaks.
type RemoteAPI string

const (
	// APIOpenAI is the OpenAI embeddings API: POST {BaseURL}/embeddings with
	// {"model", "input": [...], "dimensions"?}, answered by
	// {"data": [{"index", "embedding"}, ...]}. OpenAI, Ollama's /v1, vLLM,
	// Hugging Face TEI, llama.cpp's server and LM Studio speak it.
	APIOpenAI RemoteAPI = "openai"
	// APIOllama is Ollama's native API: POST {BaseURL}/api/embed with
	// {"model", "input": [...]}, answered by {"embeddings": [[...], ...]}.
	APIOllama RemoteAPI = "ollama"
)

// Defaults and limits of [RemoteOptions].
const (
	DefaultRemoteBatchSize   = 64
	DefaultRemoteConcurrency = 4
	DefaultRemoteTimeout     = 30 * time.Second
	DefaultRemoteMaxRetries  = 4
	DefaultRemoteBackoffBase = 250 * time.Millisecond
	DefaultRemoteBackoffMax  = 30 * time.Second
	DefaultRemoteAnswerBytes = 64 << 20

	// MaxRemoteDim is the longest vector a Remote accepts.
	MaxRemoteDim = 1 << 16
	// MaxRemoteBatchSize is the largest BatchSize (OpenAI's limit on inputs
	// per request).
	MaxRemoteBatchSize = 2048
	// MaxRemoteConcurrency is the largest Concurrency.
	MaxRemoteConcurrency = 256
)

// RemoteOptions configures a [Remote]. BaseURL and Model are required;
// every other field has a default, stated with it, that its zero value
// selects.
type RemoteOptions struct {
	// API is the wire format: APIOpenAI (the default, for "") or APIOllama.
	API RemoteAPI

	// BaseURL is the root of the API, http or https, without credentials,
	// e.g. "http://localhost:11434/v1" (Ollama's OpenAI-compatible API),
	// "https://api.openai.com/v1" or, for APIOllama,
	// "http://localhost:11434". Requests go to BaseURL + "/embeddings"
	// (APIOpenAI) or BaseURL + "/api/embed" (APIOllama); a query string is
	// kept on requests but left out of errors. Required.
	BaseURL string

	// Model is the model name sent with every request. Required.
	Model string

	// Dimensions is the length every vector must have. Zero: learn it from
	// the first answer, after which it is fixed for the life of the Remote.
	// At most MaxRemoteDim.
	Dimensions int

	// SendDimensions sends Dimensions as "dimensions" in APIOpenAI requests,
	// asking a model that supports shortening (OpenAI's text-embedding-3-*)
	// for vectors of that length. Default false: Dimensions only checks
	// answers. Needs Dimensions > 0 and APIOpenAI.
	SendDimensions bool

	// APIKeyEnv is the NAME of the environment variable holding the bearer
	// key sent as "Authorization: Bearer <key>", e.g. "OPENAI_API_KEY".
	// Default "": no Authorization header. The variable is read at each
	// request (so a rotated key is picked up) and must then be set and not
	// empty. The key itself is never stored, logged, cached, or included in
	// an error or String; a server that echoes it back has it cut out of
	// the error message.
	APIKeyEnv string

	// BatchSize is the most texts sent in one request. Default
	// DefaultRemoteBatchSize (64); at most MaxRemoteBatchSize.
	BatchSize int

	// Concurrency is the most requests this Remote has in flight at once,
	// over all concurrent Embed calls; a request waiting to be retried keeps
	// its place. Default DefaultRemoteConcurrency (4); at most
	// MaxRemoteConcurrency.
	Concurrency int

	// Timeout bounds each request, from sending it to reading the whole
	// answer; a request that runs out of time is retried like a transport
	// error. Default DefaultRemoteTimeout (30 s).
	Timeout time.Duration

	// MaxRetries is how many times a request is repeated after a 429, a
	// 5xx, a timeout or a transport error (other 4xx answers and invalid
	// answers are not retried). Default DefaultRemoteMaxRetries (4); a
	// negative value means no retries.
	MaxRetries int

	// BackoffBase is the wait before the first retry; the wait doubles
	// with each retry, up to BackoffMax, and is then jittered to between
	// half and all of itself. A Retry-After header (seconds or an HTTP
	// date) lengthens the wait to what it asks, up to BackoffMax. Default
	// DefaultRemoteBackoffBase (250 ms).
	BackoffBase time.Duration

	// BackoffMax caps every wait between retries, Retry-After included.
	// Default DefaultRemoteBackoffMax (30 s).
	BackoffMax time.Duration

	// MaxAnswerBytes bounds the body of an answer; a longer one is an
	// ErrBadAnswer. Default DefaultRemoteAnswerBytes (64 MiB), enough for
	// 2048 vectors of 3072 dimensions.
	MaxAnswerBytes int64

	// HTTPClient sends the requests. Default: a client of its own with a
	// clone of http.DefaultTransport (30 s dial timeout, 10 s TLS
	// handshake) keeping Concurrency idle connections per host.
	HTTPClient *http.Client

	// Cache remembers vectors by model and text, so that a text embedded
	// once is not paid for again; only texts it misses are sent. Default:
	// NewMemoryCache(DefaultCacheEntries), private to this Remote. Use
	// OpenFileCache to keep vectors across restarts, or share one Cache
	// between Remotes (keys include the API, endpoint, model and
	// dimensions, so they do not mix).
	Cache Cache

	// NoCache turns the cache off: every text is sent every time. Default
	// false. Cache must be nil when it is set.
	NoCache bool
}

// envName is what APIKeyEnv must look like: a portable environment
// variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// Validate reports whether o is usable. The error wraps [ErrOptions] and
// names the field; it never quotes a value that could be a secret.
func (o *RemoteOptions) Validate() error {
	if o == nil {
		return fmt.Errorf("%w: nil RemoteOptions (BaseURL and Model are required)", ErrOptions)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: RemoteOptions."+format, append([]any{ErrOptions}, args...)...)
	}
	switch o.API {
	case "", APIOpenAI, APIOllama:
	default:
		return bad("API = %q, want %q or %q", o.API, APIOpenAI, APIOllama)
	}
	if _, err := parseBaseURL(o.BaseURL); err != nil {
		return bad("BaseURL: %v", err)
	}
	if strings.TrimSpace(o.Model) == "" {
		return bad("Model is required")
	}
	if o.Dimensions < 0 || o.Dimensions > MaxRemoteDim {
		return bad("Dimensions = %d, want 1…%d (or 0 to learn it from the first answer)", o.Dimensions, MaxRemoteDim)
	}
	if o.SendDimensions && o.Dimensions == 0 {
		return bad("SendDimensions needs Dimensions > 0")
	}
	if o.SendDimensions && o.API == APIOllama {
		return bad("SendDimensions is only for API %q", APIOpenAI)
	}
	if o.APIKeyEnv != "" && !envName.MatchString(o.APIKeyEnv) {
		// Do not quote it: a key pasted here by mistake must not leak.
		return bad("APIKeyEnv must be the name of an environment variable (letters, digits and _, up to 128), not the key itself")
	}
	if o.BatchSize < 0 || o.BatchSize > MaxRemoteBatchSize {
		return bad("BatchSize = %d, want 1…%d (or 0 for %d)", o.BatchSize, MaxRemoteBatchSize, DefaultRemoteBatchSize)
	}
	if o.Concurrency < 0 || o.Concurrency > MaxRemoteConcurrency {
		return bad("Concurrency = %d, want 1…%d (or 0 for %d)", o.Concurrency, MaxRemoteConcurrency, DefaultRemoteConcurrency)
	}
	if o.Timeout < 0 {
		return bad("Timeout = %v, want > 0 (or 0 for %v)", o.Timeout, DefaultRemoteTimeout)
	}
	if o.BackoffBase < 0 {
		return bad("BackoffBase = %v, want > 0 (or 0 for %v)", o.BackoffBase, DefaultRemoteBackoffBase)
	}
	if o.BackoffMax < 0 {
		return bad("BackoffMax = %v, want > 0 (or 0 for %v)", o.BackoffMax, DefaultRemoteBackoffMax)
	}
	if d := o.WithDefaults(); d.BackoffBase > d.BackoffMax {
		return bad("BackoffBase = %v is above BackoffMax = %v", d.BackoffBase, d.BackoffMax)
	}
	if o.MaxAnswerBytes < 0 {
		return bad("MaxAnswerBytes = %d, want > 0 (or 0 for %d)", o.MaxAnswerBytes, DefaultRemoteAnswerBytes)
	}
	if o.NoCache && o.Cache != nil {
		return bad("NoCache is set and Cache is not nil")
	}
	return nil
}

// WithDefaults returns a copy of o with every zero field that has a default
// filled in, except HTTPClient and Cache, which NewRemote makes; a nil o
// gives every default (BaseURL and Model, which have none, stay empty).
// It does not validate.
func (o *RemoteOptions) WithDefaults() RemoteOptions {
	var r RemoteOptions
	if o != nil {
		r = *o
	}
	if r.API == "" {
		r.API = APIOpenAI
	}
	if r.BatchSize == 0 {
		r.BatchSize = DefaultRemoteBatchSize
	}
	if r.Concurrency == 0 {
		r.Concurrency = DefaultRemoteConcurrency
	}
	if r.Timeout == 0 {
		r.Timeout = DefaultRemoteTimeout
	}
	switch {
	case r.MaxRetries == 0:
		r.MaxRetries = DefaultRemoteMaxRetries
	case r.MaxRetries < 0:
		r.MaxRetries = -1
	}
	if r.BackoffBase == 0 {
		r.BackoffBase = DefaultRemoteBackoffBase
	}
	if r.BackoffMax == 0 {
		r.BackoffMax = DefaultRemoteBackoffMax
	}
	if r.MaxAnswerBytes == 0 {
		r.MaxAnswerBytes = DefaultRemoteAnswerBytes
	}
	return r
}

// parseBaseURL checks a BaseURL and returns it parsed, without a trailing
// slash. Its errors never quote the URL, whose query may hold a secret.
func parseBaseURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, fmt.Errorf("is required (e.g. %q)", "http://localhost:11434/v1")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scheme must be http or https")
	}
	if u.Host == "" {
		return nil, fmt.Errorf("has no host")
	}
	if u.User != nil {
		return nil, fmt.Errorf("must not hold credentials (use APIKeyEnv)")
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("must not have a fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Remote is an [Embedder] that CALLS THE NETWORK: it sends texts to an
// embedding model behind an HTTP API (see [RemoteAPI]) and returns its
// vectors. Create one with [NewRemote].
//
// Embed is all or nothing: it returns a vector for every text, or an error
// and no vectors, so that a caller can refuse a write with nothing half
// stored. Texts found in the cache are not sent; the others are sent once
// each (duplicates within a call are merged), in batches of BatchSize, at
// most Concurrency requests at a time. Every answer is checked — the number
// of vectors, their indexes, their length against Dimensions or the length
// learnt from the first answer, finite values, the size of the body —
// before anything of it is used or cached.
//
// Errors are *[RemoteError] values that name the endpoint (without query)
// and the status or cause, e.g.
//
//	embed: POST http://gpu:8000/v1/embeddings: 503 Service Unavailable: model is loading (after 5 attempts)
//
// and match [ErrRemote] (no usable answer: down, timed out, error status),
// [ErrBadAnswer] (an invalid 2xx answer; also [ErrDimension] for a wrong
// length), or the caller's context error.
//
// A Remote is safe for concurrent use.
type Remote struct {
	opts     RemoteOptions // defaults filled in
	url      string        // where requests go (with the query, if any)
	endpoint string        // url without the query, for errors and String
	ns       [32]byte      // cache namespace: see cacheNamespace
	client   *http.Client
	cache    Cache         // nil with NoCache
	sem      chan struct{} // one token per request in flight
	dim      atomic.Int64  // Dimensions, or the learnt length; 0 while unknown
}

var _ Embedder = (*Remote)(nil)

// NewRemote returns a client for the embedding endpoint opts describes. It
// validates opts (the error wraps [ErrOptions] and names the field) but
// does not contact the endpoint: the first Embed does. The Remote copies
// opts.
func NewRemote(opts *RemoteOptions) (*Remote, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.WithDefaults()
	base, _ := parseBaseURL(o.BaseURL) // validated above
	o.BaseURL = base.String()
	u := base.JoinPath(o.API.format().path)
	show := *u
	show.RawQuery, show.ForceQuery = "", false
	r := &Remote{
		opts:     o,
		url:      u.String(),
		endpoint: show.String(),
		client:   o.HTTPClient,
		cache:    o.Cache,
		sem:      make(chan struct{}, o.Concurrency),
	}
	if r.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = o.Concurrency
		r.client = &http.Client{Transport: t}
		r.opts.HTTPClient = r.client
	}
	if r.cache == nil && !o.NoCache {
		r.cache = NewMemoryCache(DefaultCacheEntries)
		r.opts.Cache = r.cache
	}
	r.ns = cacheNamespace(o.API, r.endpoint, o.Model, o.Dimensions, o.SendDimensions)
	r.dim.Store(int64(o.Dimensions))
	return r, nil
}

// cacheNamespace is the SHA-256 of everything besides the text that
// decides a vector: API, endpoint (without query), model, and the
// dimensions asked for. A cache key is SHA-256(namespace ‖ text).
func cacheNamespace(api RemoteAPI, endpoint, model string, dims int, send bool) [32]byte {
	h := sha256.New()
	field := func(s string) {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	field("tidemark/embed.Remote cache v1")
	field(string(api))
	field(endpoint)
	field(model)
	field(fmt.Sprint(dims, send))
	var ns [32]byte
	h.Sum(ns[:0])
	return ns
}

// CacheKey returns the key under which r caches the vector of text:
// SHA-256 over a namespace (API, endpoint without query, model,
// Dimensions and SendDimensions) followed by the text.
func (r *Remote) CacheKey(text string) [32]byte {
	h := sha256.New()
	h.Write(r.ns[:])
	h.Write([]byte(text))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// Dim is the length of every vector Embed returns: Dimensions, or the
// length learnt from the first answer (or cache hit), or 0 before that.
func (r *Remote) Dim() int { return int(r.dim.Load()) }

// Options returns the options in effect, with defaults filled in
// (HTTPClient and Cache included, and BaseURL without a trailing slash).
func (r *Remote) Options() RemoteOptions { return r.opts }

// String describes r for logs: API, endpoint (without query), model,
// dimension and the name of the key variable, never the key.
func (r *Remote) String() string {
	key := "none"
	if r.opts.APIKeyEnv != "" {
		key = "$" + r.opts.APIKeyEnv
	}
	return fmt.Sprintf("embed.Remote(%s %s model=%q dim=%d key=%s)", r.opts.API, r.endpoint, r.opts.Model, r.Dim(), key)
}

// Embed returns one vector per text, in order, or an error and no vectors.
// Empty input gives empty output without a request. It returns ctx's error
// (possibly inside a *RemoteError) if ctx ends first; requests and retry
// waits stop when it does.
func (r *Remote) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))

	// Look everything up in the cache; send each missing text once.
	type miss struct {
		text string
		key  [32]byte
		at   []int // indexes of texts that are this text
	}
	var (
		misses []miss
		byText = make(map[string]int)
	)
	for i, text := range texts {
		if j, ok := byText[text]; ok {
			misses[j].at = append(misses[j].at, i)
			continue
		}
		key := r.CacheKey(text)
		if r.cache != nil {
			if v, ok := r.cache.Get(key); ok && r.checkDim(len(v)) == nil {
				out[i] = cloneVec(v)
				continue
			}
		}
		byText[text] = len(misses)
		misses = append(misses, miss{text: text, key: key, at: []int{i}})
	}
	if len(misses) == 0 {
		return out, nil
	}

	batch := r.opts.BatchSize
	nb := (len(misses) + batch - 1) / batch
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next    atomic.Int64 // the next batch to send
		done    atomic.Int64 // batches answered
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error // the first failure; the others follow from it
	)
	fail := func(err error) {
		errOnce.Do(func() { first = err; cancel() })
	}
	for range min(nb, r.opts.Concurrency) {
		wg.Go(func() {
			batchTexts := make([]string, 0, batch)
			for {
				b := int(next.Add(1)) - 1
				if b >= nb || ctx.Err() != nil {
					return
				}
				ms := misses[b*batch : min((b+1)*batch, len(misses))]
				batchTexts = batchTexts[:0]
				for _, m := range ms {
					batchTexts = append(batchTexts, m.text)
				}
				vecs, err := r.send(ctx, batchTexts)
				if err != nil {
					fail(err)
					return
				}
				for k, m := range ms {
					if r.cache != nil {
						r.cache.Put(m.key, cloneVec(vecs[k]))
					}
					for n, i := range m.at {
						if n == 0 {
							out[i] = vecs[k]
						} else {
							out[i] = cloneVec(vecs[k])
						}
					}
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if int(done.Load()) < nb {
		// The workers saw ctx end between batches and stopped quietly.
		return nil, ctx.Err()
	}
	return out, nil
}

// send acquires a place among the requests in flight and posts texts,
// retrying as RemoteOptions says. The vectors it returns are checked.
func (r *Remote) send(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.sem }()
	return r.post(ctx, texts)
}

// checkDim checks that a vector of length n fits: n equals Dimensions, or
// the length learnt so far, or — when none is known yet — becomes it.
func (r *Remote) checkDim(n int) error {
	if n <= 0 || n > MaxRemoteDim {
		return fmt.Errorf("vectors of %d dimensions, want 1…%d", n, MaxRemoteDim)
	}
	if r.dim.CompareAndSwap(0, int64(n)) {
		return nil
	}
	if d := int(r.dim.Load()); d != n {
		if r.opts.Dimensions != 0 {
			return fmt.Errorf("vectors of %d dimensions, want %d (RemoteOptions.Dimensions)", n, d)
		}
		return fmt.Errorf("vectors of %d dimensions, want %d (learnt from the first answer)", n, d)
	}
	return nil
}

// cloneVec returns a copy of v.
func cloneVec(v []float32) []float32 { return append([]float32(nil), v...) }

// finite reports whether every value of v is finite.
func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}
