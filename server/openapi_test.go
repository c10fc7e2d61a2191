package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// The OpenAPI document is valid OpenAPI, and real requests to the real
// handlers — and their answers, errors included — validate against it.
func TestOpenAPIValidatesRealTraffic(t *testing.T) {
	ctx := context.Background()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openAPI)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	ts, _, _ := newTestServerS(t)
	doc.Servers = openapi3.Servers{{URL: ts.URL}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/collections/facts", `{"dim":3}`, 201},
		{"POST", "/v1/collections/facts/memories", `{"memories":[{"id":"v1","text":"limit 100","vector":[1,0,0],"kind":"versioned","subject":"api","relation":"limit","object":"100","valid_from":"2025-01-01T00:00:00Z"}]}`, 200},
		{"POST", "/v1/collections/facts/memories", `{"memories":[{"id":"v2","text":"limit 250","vector":[1,0.1,0],"kind":"versioned","subject":"api","relation":"limit","object":"250","valid_from":"2025-06-01T00:00:00Z"}]}`, 200},
		{"GET", "/v1/collections", "", 200},
		{"GET", "/v1/collections/facts", "", 200},
		{"POST", "/v1/collections/facts/search", `{"vector":[1,0,0],"k":3,"explain":true}`, 200},
		{"POST", "/v1/collections/facts/search", `{"vector":[1,0,0],"as_of":"2025-03-01T00:00:00Z","plan":"exact"}`, 200},
		{"POST", "/v1/collections/facts/search", `{"vector":[1,0,0],"weights":{"sim":1,"temporal":0,"confidence":0,"relational":0},"statuses":["unconsolidated"],"range":{"from":"2020-01-01T00:00:00Z"}}`, 200},
		{"GET", "/v1/collections/facts/consolidate", "", 200},
		{"GET", "/v1/collections/facts/facts?subject=api&relation=limit", "", 200},
		{"POST", "/v1/collections/facts/search", `{"vector":[1,0,0],"sources":["wiki","chat"]}`, 200},
		{"POST", "/v1/collections/facts/search", `{"vector":[1,0,0],"min_score":0.1,"method":"article"}`, 200},
		{"GET", "/v1/collections/facts/memories/v1", "", 200},
		{"GET", "/v1/collections/facts/memories/v2/history", "", 200},
		{"POST", "/v1/collections/facts/feedback", `{"id":"v2","positive":true}`, 200},
		{"POST", "/v1/collections/facts/consolidate", "", 200},
		{"GET", "/v1/collections/facts/audit?since=0", "", 200},
		{"POST", "/v1/collections/facts/context", `{"vector":[1,0,0],"token_budget":500,"min_score":0}`, 200},
		{"POST", "/v1/rescore", `{"candidates":[{"memory":{"id":"a"},"sim":0.5}]}`, 200},
		{"POST", "/v1/collections/facts/search", `{"vector":[1,0]}`, 400},
		{"GET", "/v1/collections/nope", "", 404},
		{"POST", "/v1/collections/facts/memories", `{"memories":[{"id":"v2","text":"limit 300","vector":[1,0.2,0],"kind":"versioned","subject":"api","relation":"limit","object":"300","valid_from":"2025-07-01T00:00:00Z","if_version":1}]}`, 200},
		{"POST", "/v1/collections/facts/memories", `{"memories":[{"id":"v2","text":"limit 350","vector":[1,0.2,0],"if_version":1}]}`, 409},
		{"GET", "/v1/collections/facts/memories?limit=1", "", 200},
		{"GET", "/v1/collections/facts/memories?all=true&as_of_tx=2030-01-01&kinds=versioned", "", 200},
		{"GET", "/v1/collections/facts/memories?limit=0", "", 400},
		{"GET", "/v1/collections/facts/count?statuses=unconsolidated,active", "", 200},
		{"GET", "/v1/collections/facts/count?limit=3", "", 400},
		{"DELETE", "/v1/collections/facts/memories/v2", "", 200},
		{"GET", "/v1/collections/facts/memories/v2", "", 200},
		{"DELETE", "/v1/collections/facts/memories/v1?purge=true", "", 200},
		{"DELETE", "/v1/collections/facts/memories/v1?purge=maybe", "", 400},
		{"DELETE", "/v1/collections/facts?confirm=facts", "", 200},
	} {
		req, _ := http.NewRequestWithContext(ctx, tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+admin)
		if tc.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("%s %s: not in the document: %v", tc.method, tc.path, err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		if tc.status < 400 {
			if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
				t.Fatalf("%s %s: the request does not match the document: %v", tc.method, tc.path, err)
			}
			req.Body = io.NopCloser(strings.NewReader(tc.body)) // validation read it
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Fatalf("%s %s: %d, want %d: %s", tc.method, tc.path, res.StatusCode, tc.status, body)
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.StatusCode, Header: res.Header,
			Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		out.SetBodyBytes(body)
		if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
			t.Fatalf("%s %s: the answer does not match the document: %v\n%s", tc.method, tc.path, err, bytes.TrimSpace(body))
		}
	}
}
