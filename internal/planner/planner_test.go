package planner

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func answer(w http.ResponseWriter, content string) {
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"role": "assistant", "content": content}}}})
}

func TestDecodePlan(t *testing.T) {
	for _, tc := range []struct {
		content string
		ok      bool
	}{
		{`{"do_split":true,"segments":[{"segment_text":"a"},{"segment_text":"b"}]}`, true},
		{"```json\n{\"do_split\":false,\"segments\":[]}\n```", true},
		{"```\n{\"do_split\":false}\n```", true},
		{`{"do_split":"yes"}`, false},
		{`{"do_split":true} and more`, false},
		{`Here you go: {"do_split":true}`, false},
		{``, false},
		{`[1,2]`, false},
	} {
		var p SplitPlan
		err := decodePlan(tc.content, &p)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrPlanner) {
			t.Errorf("decodePlan(%q) = %v, want ok %v", tc.content, err, tc.ok)
		}
	}
}

// A request carries the model, temperature 0, JSON mode and the key from
// the environment; the key never reaches an error; 429 is retried after
// Retry-After; a slow answer times out; a bad status is an error.
func TestClient(t *testing.T) {
	t.Setenv("PLANNER_TEST_KEY", "sk-secret-123")
	var calls atomic.Int64
	var mode atomic.Value
	mode.Store("ok")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req chatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m" || req.Temperature != 0 ||
			req.ResponseFormat["type"] != "json_object" || len(req.Messages) != 2 || r.Header.Get("Authorization") != "Bearer sk-secret-123" {
			http.Error(w, "bad request", 400)
			return
		}
		switch mode.Load() {
		case "busy":
			if calls.Load() == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(429)
				return
			}
		case "slow":
			time.Sleep(300 * time.Millisecond)
		case "500":
			w.WriteHeader(500)
			return
		case "403":
			http.Error(w, "key sk-secret-123 refused", http.StatusForbidden)
			return
		}
		answer(w, `{"split_tasks":[{"node_id":"n1","reason":"two topics","confidence":0.93}],"merge_tasks":[],"update_tasks":[]}`)
	}))
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL + "/v1/", Model: "m", APIKeyEnv: "PLANNER_TEST_KEY", Timeout: 100 * time.Millisecond, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := c.Diagnose(ctx, Node{ID: "n1", Text: "A is 1 and B is 2."}, nil)
	if err != nil || len(d.Split) != 1 || d.Split[0].Confidence != 0.93 {
		t.Fatalf("diagnose: %+v %v", d, err)
	}
	calls.Store(0)
	mode.Store("busy")
	if _, err := c.Diagnose(ctx, Node{ID: "n1"}, nil); err != nil || calls.Load() != 2 {
		t.Fatalf("429 then 200: %v after %d calls", err, calls.Load())
	}
	for _, m := range []string{"slow", "500", "403"} {
		mode.Store(m)
		_, err := c.Diagnose(ctx, Node{ID: "n1"}, nil)
		if err == nil || !errors.Is(err, ErrPlanner) || strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("%s: %v", m, err)
		}
	}
	t.Setenv("PLANNER_TEST_KEY", "")
	if _, err := c.Diagnose(ctx, Node{ID: "n1"}, nil); err == nil || !strings.Contains(err.Error(), "PLANNER_TEST_KEY") {
		t.Errorf("no key: %v", err)
	}
	for _, o := range []Options{{BaseURL: "ftp://x", Model: "m"}, {BaseURL: "http://u:p@x", Model: "m"}, {BaseURL: "http://x"}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}
