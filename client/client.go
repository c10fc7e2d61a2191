// Package client is a Go client for `tidemark serve`. It sends and
// returns the wire types of package api and imports nothing else of
// tidemark, so a program that only talks to a server links neither the
// engine nor the server. Errors from the server come back as *Error with
// the HTTP status and the machine-readable code (api.Code…).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidemark/tidemark/api"
)

// Client talks to one server with one token. It is safe for concurrent
// use.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client for the server at addr ("http://host:port" or
// "host:port") using token.
func New(addr, token string) *Client {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return &Client{base: strings.TrimRight(addr, "/"), token: token, http: &http.Client{Timeout: 60 * time.Second}}
}

// Error is an error answer of the server.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Code is the answer's machine-readable code (one of api's Code
	// constants), or "unknown" when the body was not an api.ErrorBody.
	Code string
	// Message is the answer's message.
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("tidemark server: %d %s: %s", e.Status, e.Code, e.Message)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		var e api.ErrorBody
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		if json.Unmarshal(b, &e) != nil || e.Error.Code == "" {
			return &Error{Status: res.StatusCode, Code: "unknown", Message: strings.TrimSpace(string(b))}
		}
		return &Error{Status: res.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(res.Body).Decode(out)
}

func coll(name string) string { return "/v1/collections/" + url.PathEscape(name) }

// CreateCollection creates a collection: its dimension, and optionally
// its method, embedder ("hashing", "hashing-words", "openai", "ollama"
// with Remote), half-life and key policy.
func (c *Client) CreateCollection(ctx context.Context, name string, o api.CreateCollection) (api.Collection, error) {
	var out api.Collection
	err := c.do(ctx, "POST", coll(name), o, &out)
	return out, err
}

// Collections lists the collections the token may read.
func (c *Client) Collections(ctx context.Context) ([]api.Collection, error) {
	var out api.CollectionList
	err := c.do(ctx, "GET", "/v1/collections", nil, &out)
	return out.Collections, err
}

// Collection describes one collection.
func (c *Client) Collection(ctx context.Context, name string) (api.Collection, error) {
	var out api.Collection
	err := c.do(ctx, "GET", coll(name), nil, &out)
	return out, err
}

// DropCollection drops a collection and every memory in it (the server's
// next checkpoint erases them from its files).
func (c *Client) DropCollection(ctx context.Context, name string) error {
	return c.do(ctx, "DELETE", coll(name)+"?confirm="+url.QueryEscape(name), nil, nil)
}

// Put writes a batch of memories.
func (c *Client) Put(ctx context.Context, collection string, ms []api.Memory) ([]api.PutResult, error) {
	var out api.PutResponse
	err := c.do(ctx, "POST", coll(collection)+"/memories", api.PutRequest{Memories: ms}, &out)
	return out.Results, err
}

// Search runs a query.
func (c *Client) Search(ctx context.Context, collection string, q api.SearchRequest) (api.SearchResult, error) {
	var out api.SearchResult
	err := c.do(ctx, "POST", coll(collection)+"/search", q, &out)
	return out, err
}

// Get returns one memory.
func (c *Client) Get(ctx context.Context, collection, id string) (api.Memory, error) {
	var out api.Memory
	err := c.do(ctx, "GET", coll(collection)+"/memories/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Retract withdraws a memory: current answers lose it, a search as of an
// earlier transaction time still finds it, and the version it had
// superseded holds again.
func (c *Client) Retract(ctx context.Context, collection, id string) (api.RetractResponse, error) {
	var out api.RetractResponse
	err := c.do(ctx, "DELETE", coll(collection)+"/memories/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Purge erases a memory's content, and that of its split family, for a
// privacy request; the data directory's files lose it at the server's
// next checkpoint.
func (c *Client) Purge(ctx context.Context, collection, id string) (api.RetractResponse, error) {
	var out api.RetractResponse
	err := c.do(ctx, "DELETE", coll(collection)+"/memories/"+url.PathEscape(id)+"?purge=true", nil, &out)
	return out, err
}

// List returns one page of a collection's memories (current ones by
// default; see api.ListQuery), without vectors.
func (c *Client) List(ctx context.Context, collection string, q api.ListQuery) (api.MemoryList, error) {
	var out api.MemoryList
	err := c.do(ctx, "GET", coll(collection)+"/memories?"+q.Encode(), nil, &out)
	return out, err
}

// All iterates over every memory a listing selects, page after page from
// q.Cursor on; it stops at the first error, which it yields.
func (c *Client) All(ctx context.Context, collection string, q api.ListQuery) iter.Seq2[api.Memory, error] {
	return func(yield func(api.Memory, error) bool) {
		for {
			page, err := c.List(ctx, collection, q)
			if err != nil {
				yield(api.Memory{}, err)
				return
			}
			for _, m := range page.Memories {
				if !yield(m, nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			q.Cursor = page.NextCursor
		}
	}
}

// Count returns how many memories a listing selects (q's Limit and Cursor
// are ignored).
func (c *Client) Count(ctx context.Context, collection string, q api.ListQuery) (int, error) {
	q.Limit, q.Cursor = 0, ""
	var out api.Count
	err := c.do(ctx, "GET", coll(collection)+"/count?"+q.Encode(), nil, &out)
	return out.Count, err
}

// History returns every version linked to a memory, oldest first.
func (c *Client) History(ctx context.Context, collection, id string) ([]api.Memory, error) {
	var out api.Versions
	err := c.do(ctx, "GET", coll(collection)+"/memories/"+url.PathEscape(id)+"/history", nil, &out)
	return out.Versions, err
}

// Feedback records a judgement of a memory (counted for the token).
func (c *Client) Feedback(ctx context.Context, collection, id string, positive bool) error {
	return c.do(ctx, "POST", coll(collection)+"/feedback", api.FeedbackRequest{ID: id, Positive: positive}, nil)
}

// Consolidate runs one consolidation cycle.
func (c *Client) Consolidate(ctx context.Context, collection string) (api.ConsolidationReport, error) {
	var out api.ConsolidationReport
	err := c.do(ctx, "POST", coll(collection)+"/consolidate", nil, &out)
	return out, err
}

// FactHistory returns every version of a fact key (subject, relation),
// oldest first, then the ones that left it (retracted or replaced).
func (c *Client) FactHistory(ctx context.Context, collection, subject, relation string) ([]api.Memory, error) {
	var out api.Versions
	q := url.Values{"subject": {subject}, "relation": {relation}}
	err := c.do(ctx, "GET", coll(collection)+"/facts?"+q.Encode(), nil, &out)
	return out.Versions, err
}

// Context runs a search and assembles its hits into an annotated context
// block for a generator (JSON: the block's structure and its text).
func (c *Client) Context(ctx context.Context, collection string, q api.ContextRequest) (api.ContextResponse, error) {
	var out api.ContextResponse
	q.TextOnly = false
	err := c.do(ctx, "POST", coll(collection)+"/context", q, &out)
	return out, err
}

// PutDocument stores a document's whole text as chunk memories, or, when
// the document exists, as an edit that re-embeds only the chunks it
// changed.
func (c *Client) PutDocument(ctx context.Context, collection, doc string, d api.DocumentRequest) (api.DocumentReport, error) {
	var out api.DocumentReport
	err := c.do(ctx, "PUT", coll(collection)+"/documents/"+url.PathEscape(doc), d, &out)
	return out, err
}

// Rescore ranks another store's candidates by tidemark's fused score
// without storing them.
func (c *Client) Rescore(ctx context.Context, r api.RescoreRequest) (api.SearchResult, error) {
	var out api.SearchResult
	err := c.do(ctx, "POST", "/v1/rescore", r, &out)
	return out, err
}

// LastConsolidation returns the collection's last background
// consolidation run.
func (c *Client) LastConsolidation(ctx context.Context, collection string) (api.LastConsolidation, error) {
	var out api.LastConsolidation
	err := c.do(ctx, "GET", coll(collection)+"/consolidate", nil, &out)
	return out, err
}

// Audit returns a page of the collection's audit log after sequence
// number since (limit 0: the server's default); its Next asks for the
// next page.
func (c *Client) Audit(ctx context.Context, collection string, since uint64, limit int) (api.AuditLog, error) {
	var out api.AuditLog
	q := url.Values{"since": {strconv.FormatUint(since, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	err := c.do(ctx, "GET", coll(collection)+"/audit?"+q.Encode(), nil, &out)
	return out, err
}
