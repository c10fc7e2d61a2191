package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidemark/tidemark/api"
)

// Token is one bearer token and what it may do.
type Token struct {
	// Hash is the SHA-256 of the secret, "sha256:" and 64 hex digits, as
	// "tidemark token" writes it: the tokens file then holds no secret.
	Hash string `json:"hash,omitempty"`
	// Token is the secret itself, for a tokens file written by hand; Hash
	// is the safer choice (exactly one of the two is set).
	Token string `json:"token,omitempty"`
	// Name identifies the token in logs (never the secret).
	Name string `json:"name"`
	// Collections the token may use; "*" is every collection.
	Collections []string `json:"collections"`
	// Write allows writes (memories, feedback, consolidation, creating
	// and dropping collections); without it the token only reads.
	Write bool `json:"write"`
	// Metrics allows reading GET /metrics (and nothing else by itself).
	Metrics bool `json:"metrics,omitempty"`
	// Rate is the token's request rate limit per second, with bursts of
	// twice that (default Config.Rate).
	Rate float64 `json:"rate,omitempty"`
}

// access is what a route needs of a token.
type access uint8

const (
	readAccess access = iota
	writeAccess
	metricsAccess
)

func (a access) String() string {
	switch a {
	case writeAccess:
		return "write"
	case metricsAccess:
		return "read the metrics of"
	}
	return "read"
}

func (t *Token) allows(coll string, a access) bool {
	switch a {
	case metricsAccess:
		return t.Metrics
	case writeAccess:
		if !t.Write {
			return false
		}
	}
	if len(t.Collections) == 0 {
		return false // a metrics-only token
	}
	return coll == "" || slices.Contains(t.Collections, "*") || slices.Contains(t.Collections, coll)
}

// MinTokenBits is the least entropy a secret may have, estimated as its
// length times the Shannon entropy of its characters' frequencies: 16
// random hex digits give about 60, 16 identical characters 0, the 48 hex
// digits "tidemark token" mints about 190.
const MinTokenBits = 64

// CheckSecret returns an error when secret is too short or too
// predictable to be a bearer token.
func CheckSecret(secret string) error {
	if len(secret) < 16 {
		return fmt.Errorf("a token must be at least 16 characters, got %d", len(secret))
	}
	if strings.ContainsAny(secret, " \t\r\n") {
		return fmt.Errorf("a token may not contain white space")
	}
	if b := secretBits(secret); b < MinTokenBits {
		return fmt.Errorf("the token is too predictable (about %.0f bits, want at least %d): use \"tidemark token\" to mint one", b, MinTokenBits)
	}
	return nil
}

// secretBits estimates the entropy of s in bits.
func secretBits(s string) float64 {
	var count [256]int
	for i := 0; i < len(s); i++ {
		count[s[i]]++
	}
	h := 0.0
	for _, c := range count {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h * float64(len(s))
}

// NewSecret returns a fresh random secret (24 bytes, hex) and its Hash.
func NewSecret() (secret, hash string, err error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	secret = hex.EncodeToString(b[:])
	return secret, HashSecret(secret), nil
}

// HashSecret is the Hash of a secret.
func HashSecret(secret string) string {
	d := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(d[:])
}

// digestOf checks a token's Hash or Token and returns the SHA-256 the
// server compares requests against.
func digestOf(t *Token) ([sha256.Size]byte, error) {
	var d [sha256.Size]byte
	switch {
	case t.Hash != "" && t.Token != "":
		return d, fmt.Errorf("gives both token and hash (keep the hash)")
	case t.Hash != "":
		h, ok := strings.CutPrefix(t.Hash, "sha256:")
		b, err := hex.DecodeString(h)
		if !ok || err != nil || len(b) != sha256.Size {
			return d, fmt.Errorf("hash must be \"sha256:\" and 64 hex digits")
		}
		copy(d[:], b)
		return d, nil
	case t.Token != "":
		if err := CheckSecret(t.Token); err != nil {
			return d, err
		}
		return sha256.Sum256([]byte(t.Token)), nil
	}
	return d, fmt.Errorf("has neither token nor hash")
}

// bucket is a token bucket.
type bucket struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// take spends one unit of a bucket refilled at rate per second up to
// burst; when it is empty it spends nothing and returns how long until a
// unit is there.
func (b *bucket) take(rate, burst float64, now time.Time) (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(rate, burst, now)
	if b.tokens < 1 {
		return false, time.Duration((1 - b.tokens) / rate * float64(time.Second))
	}
	b.tokens--
	return true, 0
}

// empty reports whether the bucket has no unit now, and how long until it
// has one, spending nothing.
func (b *bucket) empty(rate, burst float64, now time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(rate, burst, now)
	if b.tokens < 1 {
		return true, time.Duration((1 - b.tokens) / rate * float64(time.Second))
	}
	return false, 0
}

func (b *bucket) refill(rate, burst float64, now time.Time) {
	if b.last.IsZero() {
		b.tokens = burst
	} else {
		b.tokens = min(burst, b.tokens+rate*now.Sub(b.last).Seconds())
	}
	b.last = now
}

// failLimiter counts failed authentications per client address: past a
// burst, a client that keeps guessing is answered 429 without its guess
// being checked, so guessing costs it time and costs the server nothing.
type failLimiter struct {
	rate, burst float64
	mu          sync.Mutex
	clients     map[string]*bucket
	// overflow is the bucket every new client shares while the map is
	// full of clients still failing (an attack from very many addresses).
	overflow bucket
	pruned   time.Time // the last scan for refilled clients (at most one a second)
}

// maxFailClients bounds the clients the limiter remembers; past it,
// clients whose bucket has refilled are forgotten.
const maxFailClients = 1 << 16

func (f *failLimiter) bucket(host string, now time.Time) *bucket {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.clients[host]
	if b == nil {
		if len(f.clients) >= maxFailClients && now.Sub(f.pruned) > time.Second {
			f.pruned = now
			full := time.Duration(f.burst / f.rate * float64(time.Second))
			for h, o := range f.clients {
				o.mu.Lock()
				idle := now.Sub(o.last) > full
				o.mu.Unlock()
				if idle {
					delete(f.clients, h)
				}
			}
		}
		if len(f.clients) >= maxFailClients {
			return &f.overflow
		}
		b = new(bucket)
		f.clients[host] = b
	}
	return b
}

// blocked reports whether client host has no failure left, and how long
// until it has one, spending nothing. A client that never failed has no
// bucket (none is made for it), unless the limiter is full.
func (f *failLimiter) blocked(host string, now time.Time) (bool, time.Duration) {
	f.mu.Lock()
	b := f.clients[host]
	if b == nil && len(f.clients) >= maxFailClients {
		b = &f.overflow
	}
	f.mu.Unlock()
	if b == nil {
		return false, 0
	}
	return b.empty(f.rate, f.burst, now)
}

// authorize checks the request's bearer token against collection coll (""
// for a request about no collection in particular) and the access the
// route needs. It returns the token it identified even with an error (a
// 403 or 429 names it in the log). The scheme is case-insensitive (RFC
// 9110 §11.1).
func (s *Server) authorize(r *http.Request, coll string, a access) (*Token, error) {
	now := time.Now()
	client := hostOf(r.RemoteAddr)
	if blocked, wait := s.fails.blocked(client, now); blocked {
		s.metrics.authFailures.WithLabelValues("throttled").Inc()
		return nil, &apiError{status: http.StatusTooManyRequests, code: api.CodeRateLimited, retryAfter: wait,
			msg: "too many failed authentications from this address: wait and retry"}
	}
	fail := func(why, msg string) error {
		s.fails.bucket(client, now).take(s.fails.rate, s.fails.burst, now)
		s.metrics.authFailures.WithLabelValues(why).Inc()
		return errf(http.StatusUnauthorized, api.CodeUnauthenticated, "%s", msg)
	}
	scheme, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	secret = strings.TrimSpace(secret)
	if !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return nil, fail("missing", "missing bearer token (Authorization: Bearer …)")
	}
	d := sha256.Sum256([]byte(secret))
	found := -1
	for i := range s.tokens {
		if subtle.ConstantTimeCompare(s.digests[i][:], d[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil, fail("unknown", "unknown bearer token")
	}
	t := &s.tokens[found]
	if ok, wait := s.buckets[found].take(t.Rate, 2*t.Rate, now); !ok {
		return t, &apiError{status: http.StatusTooManyRequests, code: api.CodeRateLimited, retryAfter: wait,
			msg: fmt.Sprintf("token %q is over its %g requests/s", t.Name, t.Rate)}
	}
	if !t.allows(coll, a) {
		if coll == "" || a == metricsAccess {
			return t, errf(http.StatusForbidden, api.CodeForbidden, "token %q may not %s this server", t.Name, a)
		}
		return t, errf(http.StatusForbidden, api.CodeForbidden, "token %q may not %s collection %q", t.Name, a, coll)
	}
	return t, nil
}
