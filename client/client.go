// Package client is a Go client for `tidemark serve`. It speaks the JSON of
// package server and returns its types; errors from the server come back as
// *Error with the HTTP status and the machine-readable code.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/server"
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
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("tidemark server: %d %s: %s", e.Status, e.Code, e.Message)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
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
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
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
func (c *Client) CreateCollection(ctx context.Context, name string, o server.CreateCollectionJSON) (server.CollectionJSON, error) {
	var out server.CollectionJSON
	err := c.do(ctx, "POST", coll(name), o, &out)
	return out, err
}

// Collections lists the collections the token may read.
func (c *Client) Collections(ctx context.Context) ([]server.CollectionJSON, error) {
	var out struct {
		Collections []server.CollectionJSON `json:"collections"`
	}
	err := c.do(ctx, "GET", "/v1/collections", nil, &out)
	return out.Collections, err
}

// Put writes a batch of memories.
func (c *Client) Put(ctx context.Context, collection string, ms []server.MemoryJSON) ([]tidemark.PutResult, error) {
	var out struct {
		Results []tidemark.PutResult `json:"results"`
	}
	err := c.do(ctx, "POST", coll(collection)+"/memories", map[string]any{"memories": ms}, &out)
	return out.Results, err
}

// Search runs a query.
func (c *Client) Search(ctx context.Context, collection string, q server.SearchJSON) (server.ResultJSON, error) {
	var out server.ResultJSON
	err := c.do(ctx, "POST", coll(collection)+"/search", q, &out)
	return out, err
}

// Get returns one memory.
func (c *Client) Get(ctx context.Context, collection, id string) (server.MemoryJSON, error) {
	var out server.MemoryJSON
	err := c.do(ctx, "GET", coll(collection)+"/memories/"+url.PathEscape(id), nil, &out)
	return out, err
}

// History returns every version linked to a memory, oldest first.
func (c *Client) History(ctx context.Context, collection, id string) ([]server.MemoryJSON, error) {
	var out struct {
		Versions []server.MemoryJSON `json:"versions"`
	}
	err := c.do(ctx, "GET", coll(collection)+"/memories/"+url.PathEscape(id)+"/history", nil, &out)
	return out.Versions, err
}

// Feedback records a judgement of a memory (counted for the token).
func (c *Client) Feedback(ctx context.Context, collection, id string, positive bool) error {
	return c.do(ctx, "POST", coll(collection)+"/feedback", map[string]any{"id": id, "positive": positive}, nil)
}

// Consolidate runs one consolidation cycle.
func (c *Client) Consolidate(ctx context.Context, collection string) (tidemark.ConsolidationReport, error) {
	var out tidemark.ConsolidationReport
	err := c.do(ctx, "POST", coll(collection)+"/consolidate", nil, &out)
	return out, err
}
