package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
)

// Token is one bearer token and what it may do.
type Token struct {
	// Token is the secret the client sends as "Authorization: Bearer …".
	Token string `json:"token"`
	// Name identifies the token in logs (never the secret).
	Name string `json:"name"`
	// Collections the token may use; "*" is every collection.
	Collections []string `json:"collections"`
	// Write allows writes (memories, feedback, consolidation, creating
	// and dropping collections); without it the token only reads.
	Write bool `json:"write"`
	// Rate is the token's request rate limit per second, with bursts of
	// twice that (default Config.Rate).
	Rate float64 `json:"rate,omitempty"`
}

// bucket is a token bucket.
type bucket struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// take spends one request; false when the bucket is empty.
func (b *bucket) take(rate float64, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	burst := 2 * rate
	if b.last.IsZero() {
		b.tokens = burst
	} else {
		b.tokens = min(burst, b.tokens+rate*now.Sub(b.last).Seconds())
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (t *Token) allows(coll string, write bool) bool {
	if write && !t.Write {
		return false
	}
	return slices.Contains(t.Collections, "*") || slices.Contains(t.Collections, coll)
}

// Config configures a Server. Zero fields take their defaults.
type Config struct {
	// Tokens are the accepted bearer tokens (at least one).
	Tokens []Token
	// MaxBodyBytes caps a request body (default 32 MiB).
	MaxBodyBytes int64
	// RequestTimeout bounds each request (default 30 s).
	RequestTimeout time.Duration
	// Logger receives one line per request (default slog.Default()).
	Logger *slog.Logger
	// Rate is each token's request limit per second when the token names
	// none (default 500; bursts of twice that).
	Rate float64
	// EmbedderURLs are the base URL prefixes a collection created over
	// HTTP may send its texts to ("openai" and "ollama" embedders), and
	// EmbedderKeyEnvs the environment variables it may read a bearer key
	// from. Both default to none: a remote embedder is then configured
	// through the Go API only. Even when listed, only a token for every
	// collection ("*") with write may configure one — otherwise any writer
	// could point the server at a host of its choice with the server's
	// secrets.
	EmbedderURLs, EmbedderKeyEnvs []string
}

// Server serves a tidemark.DB over HTTP. It is safe for concurrent use.
type Server struct {
	db      *tidemark.DB
	cfg     Config
	mux     *http.ServeMux
	tokens  []Token
	buckets []bucket // one per token
	metrics *metrics
	// patterns are the routes, in registration order.
	patterns []string
}

// Routes returns the server's route patterns ("METHOD /path").
func (s *Server) Routes() []string { return slices.Clone(s.patterns) }

// New returns a server for db.
func New(db *tidemark.DB, cfg Config) (*Server, error) {
	if db == nil {
		return nil, errors.New("server: nil DB")
	}
	if len(cfg.Tokens) == 0 {
		return nil, errors.New("server: no tokens: every request needs one")
	}
	for i, t := range cfg.Tokens {
		if len(t.Token) < 16 {
			return nil, fmt.Errorf("server: token %d (%q) is shorter than 16 characters", i, t.Name)
		}
		if len(t.Collections) == 0 {
			return nil, fmt.Errorf("server: token %d (%q) names no collections (\"*\" for all)", i, t.Name)
		}
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 32 << 20
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 500
	}
	s := &Server{db: db, cfg: cfg, mux: http.NewServeMux(), tokens: slices.Clone(cfg.Tokens)}
	s.buckets = make([]bucket, len(s.tokens))
	s.metrics = newMetrics(db)
	for i := range s.tokens {
		if s.tokens[i].Rate <= 0 {
			s.tokens[i].Rate = cfg.Rate
		}
	}
	s.routes()
	return s, nil
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// apiError is an error with its HTTP status and machine-readable code.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errf(status int, code, format string, a ...any) *apiError {
	return &apiError{status, code, fmt.Sprintf(format, a...)}
}

// errorStatus maps an engine error to a status and code: the one table.
func errorStatus(err error) (int, string) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae.status, ae.code
	case errors.Is(err, tidemark.ErrDimension):
		return http.StatusBadRequest, api.CodeDimensionMismatch
	case errors.Is(err, tidemark.ErrNotFinite):
		return http.StatusBadRequest, api.CodeNotFinite
	case errors.Is(err, tidemark.ErrInvalid), errors.Is(err, tidemark.ErrOptions):
		return http.StatusBadRequest, api.CodeInvalidArgument
	case errors.Is(err, tidemark.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, api.CodeTooLarge
	case errors.Is(err, tidemark.ErrNotFound):
		return http.StatusNotFound, api.CodeNotFound
	case errors.Is(err, tidemark.ErrExists):
		return http.StatusConflict, api.CodeAlreadyExists
	case errors.Is(err, tidemark.ErrRateLimited):
		return http.StatusTooManyRequests, api.CodeRateLimited
	case errors.Is(err, tidemark.ErrClosed), errors.Is(err, tidemark.ErrFailed):
		return http.StatusServiceUnavailable, api.CodeUnavailable
	case errors.Is(err, tidemark.ErrEmbedder):
		return http.StatusServiceUnavailable, api.CodeEmbedderUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, api.CodeTimeout
	}
	return http.StatusInternalServerError, api.CodeInternal
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	status, code := errorStatus(err)
	writeJSON(w, status, api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: err.Error()}})
}

// decode reads exactly one JSON value into v, strictly.
func decode(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeBytes(body, v)
}

// decodeSearch is decode for a search body, its vector parsed apart from
// encoding/json (liftVectors); a body liftVectors does not take is decoded
// by decode's rules alone, with the same result.
func decodeSearch(r *http.Request, req *api.SearchRequest) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeSearchBytes(body, req)
}

// decodePut is decodeSearch for a Put body: the memories' vectors.
func decodePut(r *http.Request, req *api.PutRequest) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodePutBytes(body, req)
}

func decodeSearchBytes(body []byte, req *api.SearchRequest) error {
	vecs, err := decodeLifting(body, req, "")
	if v, ok := vecs[0]; ok {
		req.Vector = v
	}
	return err
}

func decodePutBytes(body []byte, req *api.PutRequest) error {
	vecs, err := decodeLifting(body, req, "memories")
	for i, v := range vecs {
		req.Memories[i].Vector = v // liftVectors found element i
	}
	return err
}

// decodeLifting decodes body into v with the vectors liftVectors takes
// (the top-level one when list is "", else those of list's elements)
// parsed apart, and returns them for the caller to put back.
func decodeLifting(body []byte, v any, list string) (liftedVectors, error) {
	if out, vecs, ok := liftVectors(body, list); ok {
		if decodeBytes(out, v) == nil {
			return vecs, nil
		}
		// Refused without its vectors, so refused with them: encoding/json
		// words the error about the body as sent.
	}
	return nil, decodeBytes(body, v)
}

// readBody reads the request body (bounded by the handler's
// MaxBytesReader).
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, errf(http.StatusRequestEntityTooLarge, api.CodeTooLarge, "request body over %d bytes", mbe.Limit)
		}
		return nil, errf(http.StatusBadRequest, api.CodeMalformedJSON, "reading the body: %v", err)
	}
	return body, nil
}

// decodeBytes decodes exactly one JSON value from body into v, strictly.
func decodeBytes(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		switch {
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return errf(http.StatusBadRequest, api.CodeUnknownField, "%v", err)
		case errors.As(err, &ute):
			return errf(http.StatusBadRequest, api.CodeInvalidArgument, "field %q: %v", ute.Field, err)
		case errors.Is(err, io.EOF):
			return errf(http.StatusBadRequest, api.CodeMalformedJSON, "empty request body")
		}
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "%v", err)
	}
	if dec.More() {
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "trailing data after the JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "trailing data after the JSON value")
	}
	return nil
}

// authorize checks the bearer token against collection coll ("" for a
// request about no collection in particular) and write access.
func (s *Server) authorize(r *http.Request, coll string, write bool) (*Token, error) {
	h := r.Header.Get("Authorization")
	secret, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || secret == "" {
		return nil, errf(http.StatusUnauthorized, api.CodeUnauthenticated, "missing bearer token")
	}
	for i := range s.tokens {
		t := &s.tokens[i]
		if subtle.ConstantTimeCompare([]byte(t.Token), []byte(secret)) == 1 {
			if !s.buckets[i].take(t.Rate, time.Now()) {
				return nil, errf(http.StatusTooManyRequests, api.CodeRateLimited, "token %q is over its %g requests/s", t.Name, t.Rate)
			}
			if coll == "" && (!write || t.Write) {
				return t, nil
			}
			if coll != "" && t.allows(coll, write) {
				return t, nil
			}
			return nil, errf(http.StatusForbidden, api.CodeForbidden, "token %q may not %s collection %q", t.Name, verb(write), coll)
		}
	}
	return nil, errf(http.StatusUnauthorized, api.CodeUnauthenticated, "unknown bearer token")
}

func verb(write bool) string {
	if write {
		return "write"
	}
	return "read"
}

// statusWriter remembers the status a handler wrote, for the log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// handle wraps an endpoint: body limit, deadline, auth, logging, errors.
func (s *Server) handle(pattern string, write bool, fn func(w http.ResponseWriter, r *http.Request, t *Token) error) {
	s.patterns = append(s.patterns, pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		t, err := s.authorize(r, r.PathValue("c"), write)
		if err == nil {
			err = fn(sw, r, t)
		}
		if err != nil {
			writeError(sw, err)
		}
		status := sw.status
		s.metrics.latency.WithLabelValues(pattern, strconv.Itoa(status)).Observe(time.Since(start).Seconds())
		name := ""
		if t != nil {
			name = t.Name
		}
		s.cfg.Logger.Info("request", "method", r.Method, "route", pattern, "status", status, "token", name,
			"ms", float64(time.Since(start).Microseconds())/1000)
	})
}
