package server

import (
	"slices"
	"strings"
	"testing"
)

// Issue 22's example over HTTP: a memory stating two facts is split at
// put; an update of one fact supersedes only its sibling; search returns
// the new value and the untouched fact; history shows the split and the
// lineage back to the original evidence; a planner is configured only by
// an admin, to a listed URL.
func TestSplitHTTP(t *testing.T) {
	ts, _ := newTestServer(t)
	if r := call(t, ts, "POST", "/v1/collections/notes", admin, `{"dim":256,"embedder":"hashing"}`); r.status != 201 || r.body["split"] != "auto" {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	r := call(t, ts, "POST", "/v1/collections/notes/memories", admin,
		`{"memories":[{"id":"m1","text":"The API rate limit is 100 requests per minute and requests time out after 30 seconds.","valid_from":"2025-01-01T00:00:00Z"}]}`)
	if r.status != 200 || !strings.Contains(r.raw, `"split":["m1#1","m1#2"]`) {
		t.Fatalf("put: %d %s", r.status, r.raw)
	}
	r = call(t, ts, "POST", "/v1/collections/notes/memories", admin,
		`{"memories":[{"id":"m2","text":"The API rate limit is 250 requests per minute.","valid_from":"2025-06-01T00:00:00Z"}]}`)
	if r.status != 200 || !strings.Contains(r.raw, `"superseded":["m1#1"]`) {
		t.Fatalf("update: %d %s", r.status, r.raw)
	}
	for q, want := range map[string][]string{"What is the API rate limit?": {"m2", "m1#2"}, "When do requests time out?": {"m1#2", "m2"}} {
		r := call(t, ts, "POST", "/v1/collections/notes/search", admin, `{"text":"`+q+`","k":5}`)
		var got []string
		hits, _ := r.body["hits"].([]any)
		for _, h := range hits {
			got = append(got, h.(map[string]any)["id"].(string))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q → %v, want %v", q, got, want)
		}
	}
	r = call(t, ts, "GET", "/v1/collections/notes/memories/m1%232/history", admin, "")
	if r.status != 200 {
		t.Fatalf("history: %d %s", r.status, r.raw)
	}
	byID := map[string]map[string]any{}
	versions, _ := r.body["versions"].([]any)
	for _, v := range versions {
		m := v.(map[string]any)
		byID[m["id"].(string)] = m
	}
	orig, s1, s2 := byID["m1"], byID["m1#1"], byID["m1#2"]
	if orig == nil || s1 == nil || s2 == nil || byID["m2"] == nil || orig["visible"] != false || orig["split_rule"] != "rules" ||
		s2["split_from"] != "m1" || s1["superseded_by"] != "m2" || s2["visible"] != true {
		t.Fatalf("history: %s", r.raw)
	}
	// A planner sends texts to a URL: admin only, listed URLs only.
	const planner = `{"dim":8,"embedder":"hashing","planner":{"base_url":"http://169.254.169.254/v1","model":"m"}}`
	if r := call(t, ts, "POST", "/v1/collections/p", admin, planner); r.status != 403 {
		t.Fatalf("planner to an unlisted URL: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "POST", "/v1/collections/p", admin, `{"dim":8,"split":"sometimes"}`); r.status != 400 || !strings.Contains(r.raw, "split policy") {
		t.Fatalf("bad split policy: %d %s", r.status, r.raw)
	}
}
