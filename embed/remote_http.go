package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// wireFormat is one [RemoteAPI]: where to post, and how to write a request
// and read an answer. decode returns exactly n vectors in input order, or
// an error saying what is wrong with the answer (the caller wraps it).
type wireFormat struct {
	path   string
	encode func(o *RemoteOptions, texts []string) ([]byte, error)
	decode func(body []byte, n int) ([][]float32, error)
}

func (api RemoteAPI) format() wireFormat {
	if api == APIOllama {
		return ollamaFormat
	}
	return openaiFormat
}

// RemoteError is the error of a [Remote] request that failed. It names the
// endpoint and says what went wrong; errors.Is matches it against Err.
type RemoteError struct {
	// Endpoint is the URL posted to, without its query.
	Endpoint string
	// StatusCode is the HTTP status of the last answer, or 0 if there was
	// none (a transport error or timeout).
	StatusCode int
	// Attempts is the number of requests made, retries included.
	Attempts int
	// Detail says what went wrong: a status and an excerpt of the answer
	// ("503 Service Unavailable: model is loading"), a transport error, a
	// timeout, or what is wrong with an answer. It never holds the key.
	Detail string
	// Err is what the error matches: ErrRemote, ErrBadAnswer (possibly
	// with ErrDimension), or the caller's context error.
	Err error

	retry      bool   // worth retrying
	retryAfter string // the answer's Retry-After header
}

// Error returns "embed: POST <endpoint>: <detail>", followed by the number
// of attempts if there was more than one.
func (e *RemoteError) Error() string {
	s := "embed: POST " + e.Endpoint + ": " + e.Detail
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

// Unwrap returns Err.
func (e *RemoteError) Unwrap() error { return e.Err }

// errBadDimension matches both ErrBadAnswer and ErrDimension.
var errBadDimension = fmt.Errorf("%w: %w", ErrBadAnswer, ErrDimension)

// post sends texts, retrying as the options say, and returns their checked
// vectors in order.
func (r *Remote) post(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := r.opts.API.format().encode(&r.opts, texts)
	if err != nil {
		return nil, &RemoteError{Endpoint: r.endpoint, Detail: "encoding the request: " + err.Error(), Err: ErrRemote}
	}
	for attempt := 1; ; attempt++ {
		vecs, rerr := r.try(ctx, body, len(texts))
		if rerr == nil {
			return vecs, nil
		}
		rerr.Attempts = attempt
		if !rerr.retry || attempt > r.opts.MaxRetries {
			return nil, rerr
		}
		t := time.NewTimer(r.retryDelay(attempt-1, rerr.retryAfter, time.Now()))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, &RemoteError{
				Endpoint:   r.endpoint,
				StatusCode: rerr.StatusCode,
				Attempts:   attempt,
				Detail:     ctx.Err().Error() + " while waiting to retry; last: " + rerr.Detail,
				Err:        ctx.Err(),
			}
		}
	}
}

// try makes one request.
func (r *Remote) try(ctx context.Context, body []byte, n int) ([][]float32, *RemoteError) {
	fail := func(err error, status int, retry bool, detail string) *RemoteError {
		return &RemoteError{Endpoint: r.endpoint, StatusCode: status, Detail: detail, Err: err, retry: retry}
	}
	var key string
	if name := r.opts.APIKeyEnv; name != "" {
		if key = os.Getenv(name); key == "" {
			return nil, fail(ErrRemote, 0, false, "environment variable "+name+" (RemoteOptions.APIKeyEnv) is not set")
		}
	}
	actx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, fail(ErrRemote, 0, false, "building the request: "+r.scrub(err.Error(), key))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "tidemark-embed")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}

	resp, err := r.client.Do(req)
	if err != nil {
		return nil, r.transportError(ctx, actx, err, key)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
		detail := resp.Status
		if detail == "" {
			detail = strconv.Itoa(resp.StatusCode)
		}
		if ex := excerpt(data); ex != "" {
			detail += ": " + ex
		}
		e := fail(ErrRemote, resp.StatusCode, resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500,
			r.scrub(detail, key))
		e.retryAfter = resp.Header.Get("Retry-After")
		return nil, e
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.opts.MaxAnswerBytes+1))
	if err != nil {
		return nil, r.transportError(ctx, actx, fmt.Errorf("reading the answer: %w", err), key)
	}
	if int64(len(data)) > r.opts.MaxAnswerBytes {
		return nil, fail(ErrBadAnswer, resp.StatusCode, false,
			fmt.Sprintf("bad answer: longer than %d bytes (RemoteOptions.MaxAnswerBytes)", r.opts.MaxAnswerBytes))
	}
	vecs, err := r.opts.API.format().decode(data, n)
	if err != nil {
		return nil, fail(ErrBadAnswer, resp.StatusCode, false, "bad answer: "+r.scrub(err.Error(), key))
	}
	for i, v := range vecs {
		if len(v) != len(vecs[0]) {
			return nil, fail(errBadDimension, resp.StatusCode, false,
				fmt.Sprintf("bad answer: vector %d has %d dimensions, vector 0 has %d", i, len(v), len(vecs[0])))
		}
		// encoding/json refuses NaN, ±Inf and float32 overflow already;
		// this keeps the promise whatever decodes the answer.
		if !finite(v) {
			return nil, fail(ErrBadAnswer, resp.StatusCode, false, fmt.Sprintf("bad answer: vector %d has a non-finite value", i))
		}
	}
	if err := r.checkDim(len(vecs[0])); err != nil {
		return nil, fail(errBadDimension, resp.StatusCode, false, "bad answer: "+err.Error())
	}
	return vecs, nil
}

// errorBodyBytes is how much of an error answer is read for its excerpt.
const errorBodyBytes = 64 << 10

// transportError describes a request that got no (complete) answer: the
// caller's context ended (not retried), the request timed out, or the
// transport failed (both retried).
func (r *Remote) transportError(ctx, actx context.Context, err error, key string) *RemoteError {
	e := &RemoteError{Endpoint: r.endpoint, Err: ErrRemote, retry: true}
	switch {
	case ctx.Err() != nil:
		e.Detail, e.Err, e.retry = ctx.Err().Error(), ctx.Err(), false
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		e.Detail = fmt.Sprintf("timeout: no answer within %v (RemoteOptions.Timeout)", r.opts.Timeout)
	default:
		// A *url.Error repeats the method and the whole URL, query
		// included; keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		e.Detail = r.scrub(err.Error(), key)
	}
	return e
}

// scrub removes from s the key and the request URL's query, which may hold
// secrets, so that s can go into an error.
func (r *Remote) scrub(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[REDACTED]")
	}
	if r.url != r.endpoint {
		s = strings.ReplaceAll(s, r.url, r.endpoint)
		if i := strings.IndexByte(r.url, '?'); i >= 0 && i+1 < len(r.url) {
			s = strings.ReplaceAll(s, r.url[i+1:], "[REDACTED]")
		}
	}
	return s
}

// excerptRunes is the longest excerpt of an error answer kept in an error.
const excerptRunes = 200

// excerpt returns a short, printable summary of an error answer: the
// message of a JSON error body in the usual shapes ({"error": "…"},
// {"error": {"message": "…"}}, {"message": "…"}, {"detail": "…"}), else
// the body itself, with control characters and runs of space collapsed and
// cut to excerptRunes.
func excerpt(body []byte) string {
	var j struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	s := string(body)
	if json.Unmarshal(body, &j) == nil {
		var e struct {
			Message string `json:"message"`
		}
		var str string
		switch {
		case json.Unmarshal(j.Error, &str) == nil && str != "":
			s = str
		case json.Unmarshal(j.Error, &e) == nil && e.Message != "":
			s = e.Message
		case j.Message != "":
			s = j.Message
		case json.Unmarshal(j.Detail, &str) == nil && str != "":
			s = str
		}
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	space, n := false, 0
	for _, c := range s {
		if unicode.IsSpace(c) || unicode.IsControl(c) {
			space = b.Len() > 0
			continue
		}
		if n == excerptRunes {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(c)
		n++
	}
	return b.String()
}

// jsonError describes an answer encoding/json refused, saying so plainly
// for the NaN and Infinity that some servers write although JSON has no
// such numbers.
func jsonError(body []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 && se.Offset <= int64(len(body)) {
		at := int(se.Offset) - 1 // the byte the scanner refused
		if at > 0 && body[at-1] == '-' {
			at--
		}
		for _, lit := range []string{"NaN", "Infinity", "-Infinity", "nan", "inf", "-inf"} {
			if bytes.HasPrefix(body[at:], []byte(lit)) {
				return fmt.Errorf("non-finite value %s (not a JSON number) at byte %d", lit, at)
			}
		}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
		return fmt.Errorf("%s out of float32 range (non-finite) at byte %d", te.Value, te.Offset)
	}
	return fmt.Errorf("bad JSON: %v", err)
}

// retryDelay is the wait before retry number retry+1 (retry counts from
// 0): BackoffBase·2^retry capped at BackoffMax, jittered to between half
// and all of itself, then raised to what retryAfter (a Retry-After header:
// seconds or an HTTP date, relative to now) asks, and capped at BackoffMax
// again.
func (r *Remote) retryDelay(retry int, retryAfter string, now time.Time) time.Duration {
	base, ceil := r.opts.BackoffBase, r.opts.BackoffMax
	d := ceil
	if retry < 62 && base <= ceil>>retry {
		d = base << retry
	}
	if half := d / 2; half > 0 {
		d = half + rand.N(d-half+1)
	}
	if ra, ok := parseRetryAfter(retryAfter, now); ok && ra > d {
		d = ra
	}
	return min(d, ceil)
}

// parseRetryAfter reads a Retry-After header (RFC 9110 §10.2.3): a number
// of seconds or an HTTP date. It reports false for an absent or malformed
// header; a date in the past is a wait of 0.
func parseRetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	secs, err := strconv.ParseUint(h, 10, 64)
	if err == nil && secs <= uint64(math.MaxInt64/time.Second) {
		return time.Duration(secs) * time.Second, true
	}
	if err == nil || errors.Is(err, strconv.ErrRange) {
		return math.MaxInt64, true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
