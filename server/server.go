package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
)

// Config configures a Server. Zero fields take their defaults.
type Config struct {
	// Tokens are the accepted bearer tokens (at least one).
	Tokens []Token
	// MaxBodyBytes caps a request body (default 32 MiB).
	MaxBodyBytes int64
	// MaxResponseBytes caps an answer's JSON (default 32 MiB): a search
	// past it (a large k with explain) is answered 413, not built into a
	// body of any size.
	MaxResponseBytes int
	// MaxK caps a search's k over HTTP (default 1000).
	MaxK int
	// MaxCollections caps the collections a client may create (default
	// 1000); past it, creating one is answered 403 quota_exceeded.
	MaxCollections int
	// RequestTimeout bounds each request's work (default 30 s).
	RequestTimeout time.Duration
	// HeaderTimeout, BodyTimeout and IdleTimeout bound a connection that
	// stalls: see HTTPServer (defaults DefaultHeaderTimeout,
	// DefaultBodyTimeout, DefaultIdleTimeout).
	HeaderTimeout, BodyTimeout, IdleTimeout time.Duration
	// MaxConns and MaxClientConns cap the open connections, in all and
	// per client address: see Listener (defaults DefaultMaxConns,
	// DefaultMaxClientConns).
	MaxConns, MaxClientConns int
	// AuthFailureRate is how many failed authentications per second a
	// client address may make after a burst of ten (default 1); past it
	// the server answers 429 without checking the token.
	AuthFailureRate float64
	// TLS, when set, makes Serve answer HTTPS only (HTTP/1.1).
	TLS *tls.Config
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
	digests [][sha256.Size]byte // the SHA-256 of each token's secret
	buckets []bucket            // one per token
	fails   failLimiter
	// createMu makes the collection quota's check and the creation one step.
	createMu sync.Mutex
	metrics  *metrics
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
	s := &Server{db: db, mux: http.NewServeMux(), tokens: slices.Clone(cfg.Tokens)}
	for i := range s.tokens {
		t := &s.tokens[i]
		d, err := digestOf(t)
		if err != nil {
			return nil, fmt.Errorf("server: token %d (%q) %w", i, t.Name, err)
		}
		if len(t.Collections) == 0 && !t.Metrics {
			return nil, fmt.Errorf("server: token %d (%q) names no collections (\"*\" for all)", i, t.Name)
		}
		if slices.Contains(s.digests, d) {
			return nil, fmt.Errorf("server: token %d (%q) has the secret of an earlier token", i, t.Name)
		}
		s.digests = append(s.digests, d)
		t.Token = "" // the secret is not kept
	}
	setDefault(&cfg.MaxBodyBytes, 32<<20)
	setDefault(&cfg.MaxResponseBytes, 32<<20)
	setDefault(&cfg.MaxK, 1000)
	setDefault(&cfg.MaxCollections, 1000)
	setDefault(&cfg.RequestTimeout, 30*time.Second)
	setDefault(&cfg.HeaderTimeout, DefaultHeaderTimeout)
	setDefault(&cfg.BodyTimeout, DefaultBodyTimeout)
	setDefault(&cfg.IdleTimeout, DefaultIdleTimeout)
	setDefault(&cfg.MaxConns, DefaultMaxConns)
	setDefault(&cfg.MaxClientConns, DefaultMaxClientConns)
	setDefault(&cfg.AuthFailureRate, 1)
	setDefault(&cfg.Rate, 500)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s.cfg = cfg
	s.fails = failLimiter{rate: cfg.AuthFailureRate, burst: 10, clients: map[string]*bucket{}}
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

// setDefault sets *p to def when it is zero or negative.
func setDefault[T int | int64 | float64 | time.Duration](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}

// Handler returns the HTTP handler: the routes, and for everything else
// (an unknown path, a method a path does not take, a path that is not in
// canonical form) the same JSON error shape as every other error.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case !utf8.ValidString(p):
		s.refuse(w, r, errf(http.StatusBadRequest, api.CodeInvalidArgument, "the path is not valid UTF-8"))
		return
	case p == "" || p[0] != '/' || path.Clean(p) != p:
		// ServeMux would redirect to the cleaned path, another resource
		// (a collection named "." or "..", an empty id).
		s.refuse(w, r, errf(http.StatusNotFound, api.CodeNotFound, "no such resource: the path %q is not in canonical form (an empty, \".\" or \"..\" segment)", p))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// noRoute answers what no route takes (the mux's catch-all "/", so that a
// routed request is matched once): 405 with Allow when the path takes
// other methods, else 404.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{"DELETE", "GET", "HEAD", "POST", "PUT"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "" && p != "/" {
			allow = append(allow, m)
		}
	}
	if allow != nil {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.refuse(w, r, errf(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
		return
	}
	s.refuse(w, r, errf(http.StatusNotFound, api.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
}

// refuse answers a request no route took, closing a connection whose body
// was not read.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if r.ContentLength != 0 {
		dropBody(w)
	}
	s.writeError(w, r, err)
}

// dropBody makes an answer close its connection without reading the
// request body: "Connection: close", and a read deadline of now, since
// net/http would otherwise read (to discard) up to 256 KiB of an unread
// body before closing, which a client that never sends it makes last
// until the connection's read timeout.
func dropBody(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// apiError is an error with its HTTP status and machine-readable code.
type apiError struct {
	status int
	code   string
	msg    string
	// retryAfter is sent as Retry-After (rounded up to whole seconds).
	retryAfter time.Duration
}

func (e *apiError) Error() string { return e.msg }

func errf(status int, code, format string, a ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, a...)}
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
	case errors.Is(err, tidemark.ErrConflict):
		return http.StatusConflict, api.CodeConflict
	case errors.Is(err, tidemark.ErrRateLimited):
		return http.StatusTooManyRequests, api.CodeRateLimited
	case errors.Is(err, tidemark.ErrClosed), errors.Is(err, tidemark.ErrFailed), errors.Is(err, tidemark.ErrUnavailable):
		return http.StatusServiceUnavailable, api.CodeUnavailable
	case errors.Is(err, tidemark.ErrEmbedder):
		return http.StatusServiceUnavailable, api.CodeEmbedderUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, api.CodeTimeout
	}
	return http.StatusInternalServerError, api.CodeInternal
}

// The engine's error messages in the wire's terms: without the sentinel
// prefixes the code already says ("tidemark: invalid input: "), fields as
// their JSON names (CollectionOptions.HalfLife → half_life), memories of a
// batch by their place in the body (memory 3 → memories[3]).
var (
	sentinelPrefix = regexp.MustCompile(`(tidemark|temporal|index|kernels|extract): (invalid input|invalid options|dimension mismatch|value is not finite|too large|not found|already exists|conflict|rate limited|invalid|not unit length): `)
	optionsField   = regexp.MustCompile(`(?:CollectionOptions|PlannerOptions|RemoteEmbedder|Options|DriftOptions)\.([A-Z][A-Za-z0-9]*)(?:\.([A-Z][A-Za-z0-9]*))?`)
	batchMemory    = regexp.MustCompile(`\bmemory (\d+)\b`)
	camelBoundary  = regexp.MustCompile(`([a-z0-9])([A-Z])`)
)

func wireMessage(msg string) string {
	msg = sentinelPrefix.ReplaceAllString(msg, "")
	msg = strings.TrimPrefix(msg, "temporal: ")
	msg = optionsField.ReplaceAllStringFunc(msg, func(m string) string {
		parts := optionsField.FindStringSubmatch(m)
		out := snake(parts[1])
		if parts[2] != "" {
			out += "." + snake(parts[2])
		}
		return out
	})
	return batchMemory.ReplaceAllString(msg, "memories[$1]")
}

// snake is a Go field name as its JSON name: HalfLife → half_life, APIKeyEnv → api_key_env.
func snake(s string) string {
	s = regexp.MustCompile(`([A-Z]+)([A-Z][a-z])`).ReplaceAllString(s, "${1}_${2}")
	return strings.ToLower(camelBoundary.ReplaceAllString(s, "${1}_${2}"))
}

// publicMessage is what a client reads of a server-side failure: the
// engine's message can name files and hosts (the log's path, an
// embedder's URL), so it goes to the server's log, not to the client.
func (s *Server) publicMessage(code string) string {
	switch code {
	case api.CodeUnavailable:
		return "the database is closed or has failed; the server's log says why"
	case api.CodeEmbedderUnavailable:
		return "the collection's embedder failed; nothing was stored; the server's log says why"
	case api.CodeTimeout:
		return fmt.Sprintf("the request ran past the server's deadline of %s", s.cfg.RequestTimeout)
	}
	return "internal error; the server's log says why"
}

// writeJSON answers v with status, encoded in full before anything is
// sent: a value that cannot be encoded (a non-finite score) or whose JSON
// is over MaxResponseBytes returns an error for the caller to answer
// instead, never a 200 with a broken or endless body.
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) error {
	return s.answer(w, status, v, s.cfg.MaxResponseBytes)
}

// writeDone is writeJSON for the answer to a write that is already
// stored: without the size cap, so that a client is never told to retry
// what happened (the answer is bounded by the request anyway).
func (s *Server) writeDone(w http.ResponseWriter, status int, v any) error {
	return s.answer(w, status, v, math.MaxInt)
}

func (s *Server) answer(w http.ResponseWriter, status int, v any, limit int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return errf(http.StatusInternalServerError, api.CodeInternal, "the answer could not be encoded: %v", err)
	}
	if len(b) > limit {
		return errf(http.StatusRequestEntityTooLarge, api.CodeTooLarge,
			"the answer is %d bytes, over this server's limit of %d: ask for fewer hits (k), without explain, or page through", len(b), s.cfg.MaxResponseBytes)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}

// writeError answers err in the one error shape. Server-side failures
// are logged in full and answered with a message that names no file or
// host.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code := errorStatus(err)
	msg := err.Error()
	var ae *apiError
	if errors.As(err, &ae) && ae.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(ae.retryAfter.Seconds()))))
	}
	if status >= 500 && ae == nil {
		s.cfg.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "error", msg)
		msg = s.publicMessage(code)
	} else if ae == nil {
		msg = wireMessage(msg)
	}
	b, _ := json.Marshal(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg}}) // strings only: cannot fail
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
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

// decodeBytes decodes exactly one JSON value from body into v, strictly:
// the body must be UTF-8 with no lone surrogate escapes (encoding/json
// would quietly turn either into U+FFFD, so that different invalid ids
// became one), hold no unknown field, and give no time as the zero time
// (which the engine reads as absent).
func decodeBytes(body []byte, v any) error {
	if i := invalidUTF8(body); i >= 0 {
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "the body is not valid UTF-8 (at byte %d)", i)
	}
	if i := loneSurrogate(body); i >= 0 {
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "the body escapes a lone UTF-16 surrogate at byte %d (not a character)", i)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if te, ok := errors.AsType[*api.TimeError](err); ok {
			// Name the field: the key before the bad value in the body.
			field := "a time"
			if m := regexp.MustCompile(`"([A-Za-z_]+)"\s*:\s*` + regexp.QuoteMeta(strconv.Quote(te.Value))).FindSubmatch(body); m != nil {
				field = string(m[1])
			}
			return errf(http.StatusBadRequest, api.CodeInvalidArgument, "%s: %v", field, te)
		}
		return decodeError(err, v)
	}
	if dec.More() {
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "trailing data after the JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "trailing data after the JSON value")
	}
	if field := zeroTime(reflect.ValueOf(v), ""); field != "" {
		return errf(http.StatusBadRequest, api.CodeInvalidArgument,
			"field %q: 0001-01-01T00:00:00Z is the zero time, which means absent: omit the field instead", field)
	}
	return nil
}

// decodeError words a decoding error in the request's terms: the field
// and the JSON it wanted, never a Go type.
func decodeError(err error, v any) error {
	var ute *json.UnmarshalTypeError
	var se *json.SyntaxError
	var te *time.ParseError
	switch {
	case errors.Is(err, io.EOF):
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "empty request body")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "the JSON value ends early")
	case errors.As(err, &se):
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "%v (at byte %d)", err, se.Offset)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return errf(http.StatusBadRequest, api.CodeUnknownField, "%s", strings.TrimPrefix(err.Error(), "json: "))
	case errors.As(err, &ute):
		if ute.Field == "" {
			return errf(http.StatusBadRequest, api.CodeInvalidArgument, "the body must be %s, not a JSON %s", jsonKind(reflect.TypeOf(v)), ute.Value)
		}
		return errf(http.StatusBadRequest, api.CodeInvalidArgument, "field %q must be %s, not a JSON %s", ute.Field, jsonKind(ute.Type), ute.Value)
	case errors.As(err, &te):
		return errf(http.StatusBadRequest, api.CodeInvalidArgument, "a time must be RFC 3339, like 2025-03-01T00:00:00Z: %q", te.Value)
	}
	// An enumeration's UnmarshalText (kind, status, source, …) refused
	// the value: its message names the value and the ones it takes.
	return errf(http.StatusBadRequest, api.CodeInvalidArgument, "%s", strings.TrimPrefix(err.Error(), "temporal: "))
}

// jsonKind describes the JSON a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a JSON value"
	}
	if t == reflect.TypeFor[time.Time]() {
		return "an RFC 3339 time string"
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// zeroTime returns the JSON path of the first *time.Time in v that is set
// to the zero time, or "".
func zeroTime(v reflect.Value, at string) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		if t, ok := v.Interface().(*api.Time); ok {
			if t.IsZero() {
				return at
			}
			return ""
		}
		if t, ok := v.Interface().(*time.Time); ok {
			if t.IsZero() {
				return at
			}
			return ""
		}
		return zeroTime(v.Elem(), at)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if f.Anonymous && f.Tag.Get("json") == "" {
				p = at
			} else if at != "" {
				p = at + "." + name
			}
			if z := zeroTime(v.Field(i), p); z != "" {
				return z
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() != reflect.Struct && v.Type().Elem().Kind() != reflect.Pointer {
			return ""
		}
		for i := range v.Len() {
			if z := zeroTime(v.Index(i), fmt.Sprintf("%s[%d]", at, i)); z != "" {
				return z
			}
		}
	}
	return ""
}

// invalidUTF8 returns the offset of the first byte of b that is not valid
// UTF-8, or −1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// loneSurrogate returns the offset of the first \u escape inside a JSON
// string of b that is a UTF-16 surrogate without its pair, or −1. It
// reads only strings and escapes; malformed JSON is the decoder's to
// report.
func loneSurrogate(b []byte) int {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\':
			r, ok := hex4(i)
			switch {
			case !ok:
				i++ // an escaped character (or a malformed escape)
			case r >= 0xD800 && r < 0xDC00:
				if lo, ok := hex4(i + 6); !ok || lo < 0xDC00 || lo > 0xDFFF {
					return i
				}
				i += 11
			case r >= 0xDC00 && r <= 0xDFFF:
				return i
			default:
				i += 5
			}
		}
	}
	return -1
}

// statusWriter remembers the status a handler wrote, for the log.
type statusWriter struct {
	http.ResponseWriter
	status int
	// seq, once the request is authorized, gives the Tidemark-Seq header.
	seq   func() uint64
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		if w.seq != nil {
			w.Header().Set(api.HeaderSeq, strconv.FormatUint(w.seq(), 10))
		}
	}
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// trackedBody notes when its reader saw the end of the body.
type trackedBody struct {
	io.ReadCloser
	eof bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// handle wraps an endpoint: body limit, deadline, auth (from the headers,
// before any of the body is read), logging, errors. An error answered
// before the body was read closes the connection: the server would
// otherwise wait for that body to drain it.
func (s *Server) handle(pattern string, a access, fn func(w http.ResponseWriter, r *http.Request, t *Token) error) {
	s.patterns = append(s.patterns, pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		body := &trackedBody{ReadCloser: http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)}
		r.Body = body
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		t, err := s.authorize(r, r.PathValue("c"), a)
		if err == nil {
			sw.seq = s.db.Seq
			err = s.waitMinSeq(r)
		}
		if err == nil {
			err = fn(sw, r, t)
		}
		if err != nil {
			if r.ContentLength != 0 && !body.eof {
				dropBody(sw)
			}
			s.writeError(sw, r, err)
		}
		status := sw.status
		s.metrics.latency.WithLabelValues(pattern, strconv.Itoa(status)).Observe(time.Since(start).Seconds())
		name := ""
		if t != nil {
			name = t.Name
		}
		s.cfg.Logger.Info("request", "method", r.Method, "route", pattern, "status", status, "token", name,
			"client", hostOf(r.RemoteAddr), "ms", float64(time.Since(start).Microseconds())/1000)
	})
}

// waitMinSeq waits until the node has applied the change the request's
// min_seq names (api.MinSeqParam), if it names one.
func (s *Server) waitMinSeq(r *http.Request) error {
	v := r.URL.Query().Get(api.MinSeqParam)
	if v == "" {
		return nil
	}
	seq, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return errf(http.StatusBadRequest, api.CodeInvalidArgument, "%s=%q: want a change sequence number (a non-negative integer)", api.MinSeqParam, v)
	}
	ctx, cancel := context.WithTimeout(r.Context(), api.MaxMinSeqWait*time.Second)
	defer cancel()
	return s.db.WaitApplied(ctx, seq)
}
