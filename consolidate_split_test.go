package tidemark

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const twoFacts = "The staging database runs on port 5433; the cache TTL is 60 seconds."

// putWhole writes memories as a build without Split would have.
func putWhole(t *testing.T, c *Collection, ms ...Memory) {
	t.Helper()
	c.opts.Split = SplitOff
	defer func() { c.opts.Split = SplitAuto }()
	if _, err := c.Put(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
}

// Memories written before Split are split by the next consolidation run;
// the split is logged with its siblings and replayed without an embedder
// call.
func TestConsolidationSplits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir, &Options{CheckpointRecords: -1})
	c := createTest(t, db, "notes", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	putWhole(t, c, Memory{ID: "old", Text: twoFacts}, Memory{ID: "story", Text: "Ana passed the ball to Marco, and Marco scored."})
	if m, _ := c.Get(ctx, "old"); !m.Visible || m.SplitInto != nil {
		t.Fatalf("written whole: %+v", m)
	}
	// An update of one fact arrives before the run, also from a build
	// without Split: it cannot supersede the whole memory's part yet.
	putWhole(t, c, Memory{ID: "upd", Text: "The cache TTL is 90 seconds."})
	rep, err := c.Consolidate(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Split != 1 || rep.PlannerAsked != 0 {
		t.Fatalf("report %+v: want one split by the rules", rep)
	}
	check := func(db *DB) {
		t.Helper()
		c, _ := db.Collection("notes")
		m, _ := c.Get(ctx, "old")
		if m.Visible || !slices.Equal(m.SplitInto, []string{"old#1", "old#2"}) || m.SplitRule != "rules" {
			t.Fatalf("original after the run: visible %v, split into %v by %q", m.Visible, m.SplitInto, m.SplitRule)
		}
		if m.Beliefs[0].RetiredAt.IsZero() || !m.Beliefs[0].RetiredAt.After(m.Beliefs[0].RecordedAt) {
			t.Fatalf("original's belief %+v: believed whole until the run", m.Beliefs[0])
		}
		s1, _ := c.Get(ctx, "old#1")
		s2, _ := c.Get(ctx, "old#2")
		if !s1.Visible || s2.Visible || s2.SupersededBy != "upd" {
			t.Fatalf("siblings: #1 visible %v; #2 visible %v superseded by %q (want the earlier update to supersede it)", s1.Visible, s2.Visible, s2.SupersededBy)
		}
		if st, _ := c.Get(ctx, "story"); !st.Visible || st.SplitInto != nil {
			t.Fatalf("the story was split: %+v", st.SplitInto)
		}
		if err := c.checkLinks(); err != nil {
			t.Fatal(err)
		}
		got := hitIDs(t, c, &SearchRequest{Text: "What is the cache TTL?", K: 10})
		if slices.Contains(got, "old#2") || slices.Contains(got, "old") || !slices.Contains(got, "upd") {
			t.Fatalf("cache TTL → %v: the stale value or the whole original is served", got)
		}
	}
	check(db)
	// A second run finds nothing more to split.
	if rep, err := c.Consolidate(ctx, nil); err != nil || rep.Split != 0 {
		t.Fatalf("second run: %+v %v", rep, err)
	}
	db.wal.Close()
	db = openTest(t, dir, nil)
	check(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir, nil)
	defer db.Close()
	check(db)
	c, _ = db.Collection("notes")
	// The original left its chain: restating the part it stated (no
	// longer current: upd superseded it) starts the fact afresh, never
	// folding into the archived evidence.
	if c.opts.Split = SplitOff; true {
		res, err := c.Put(ctx, []Memory{{ID: "again", Text: twoFacts}})
		c.opts.Split = SplitAuto
		if err != nil || res[0].Outcome != Stored || res[0].Into != "" {
			t.Fatalf("restating the original: %+v %v", res, err)
		}
		if err := c.checkLinks(); err != nil {
			t.Fatal(err)
		}
	}
}

// fakePlanner is an in-process chat-completions endpoint whose answers a
// test scripts: diagnose answers a diagnosis, split a Split plan (both as
// the message content, JSON or not); delay slows every answer.
type fakePlanner struct {
	diagnose, split func(target string) string
	delay           time.Duration
	status          int
	calls           atomic.Int64
}

func (f *fakePlanner) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	var req struct {
		Model    string
		Messages []struct{ Role, Content string }
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) != 2 || req.Model != "judge" {
		http.Error(w, "bad request", 400)
		return
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.status != 0 {
		w.WriteHeader(f.status)
		return
	}
	var user struct {
		Target   struct{ Text string } `json:"target_input"`
		Original string                `json:"original_text"`
	}
	_ = json.Unmarshal([]byte(req.Messages[1].Content), &user)
	content := ""
	if strings.Contains(req.Messages[0].Content, "Semantic Mitosis") {
		content = f.split(user.Original)
	} else {
		content = f.diagnose(user.Target.Text)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"role": "assistant", "content": content}}}})
}

func splitTask(id string, conf float64) string {
	return `{"split_tasks":[{"node_id":"` + id + `","reason":"two topics","confidence":` + jsonNum(conf) + `}],"merge_tasks":[],"update_tasks":[]}`
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

// The planner: good, malformed, low-confidence, hallucinated and slow
// answers, and merge and update proposals, each gated and checked.
func TestPlanner(t *testing.T) {
	ctx := context.Background()
	// A text the rules keep whole (nothing in it keys) but a judge may
	// split; and one the rules split.
	const judged = "Ana manages the Greenhill store and Ben runs the cafe."
	goodSplit := func(string) string {
		return `{"do_split":true,"segments":[{"segment_text":"Ana manages the Greenhill store"},{"segment_text":"Ben runs the cafe."}]}`
	}
	for _, tc := range []struct {
		name       string
		f          *fakePlanner
		text       string
		want       []string // the siblings, nil for none
		rule       string
		rejected   int
		failed     int
		noEndpoint bool
	}{
		{name: "good", f: &fakePlanner{diagnose: func(string) string { return splitTask("m", 0.95) }, split: goodSplit},
			text: judged, want: []string{"m#1", "m#2"}, rule: "planner"},
		{name: "fenced", f: &fakePlanner{diagnose: func(string) string { return "```json\n" + splitTask("m", 0.95) + "\n```" }, split: goodSplit},
			text: judged, want: []string{"m#1", "m#2"}, rule: "planner"},
		{name: "low confidence", f: &fakePlanner{diagnose: func(string) string { return splitTask("m", 0.89) }, split: goodSplit},
			text: judged, rejected: 1},
		{name: "low confidence over a rule split", f: &fakePlanner{diagnose: func(string) string { return splitTask("m", 0.2) }, split: goodSplit},
			text: twoFacts, rejected: 1},
		{name: "another node", f: &fakePlanner{diagnose: func(string) string { return splitTask("x", 0.99) }, split: goodSplit},
			text: judged, rejected: 1},
		{name: "hallucinated substring", f: &fakePlanner{diagnose: func(string) string { return splitTask("m", 0.99) }, split: func(string) string {
			return `{"do_split":true,"segments":[{"segment_text":"Ana manages the Greenhill shop"},{"segment_text":"Ben runs the cafe."}]}`
		}}, text: judged, rejected: 1},
		{name: "paraphrase that drops words", f: &fakePlanner{diagnose: func(string) string { return splitTask("m", 0.99) }, split: func(string) string {
			return `{"do_split":true,"segments":[{"segment_text":"Ana manages"},{"segment_text":"Ben runs the cafe."}]}`
		}}, text: judged, rejected: 1},
		{name: "declines", f: &fakePlanner{diagnose: func(string) string { return splitTask("m", 0.99) }, split: func(string) string {
			return `{"do_split":false,"segments":[{"segment_text":"` + judged + `"}]}`
		}}, text: judged},
		{name: "malformed: rules decide", f: &fakePlanner{diagnose: func(string) string { return `{"split_tasks": [` }, split: goodSplit},
			text: twoFacts, want: []string{"m#1", "m#2"}, rule: "rules", failed: 1},
		{name: "wrong types: rules decide", f: &fakePlanner{diagnose: func(string) string { return `{"split_tasks":"yes"}` }, split: goodSplit},
			text: judged, failed: 1},
		{name: "prose: rules decide", f: &fakePlanner{diagnose: func(string) string { return "Sure! Here is the JSON: {}" }, split: goodSplit},
			text: twoFacts, want: []string{"m#1", "m#2"}, rule: "rules", failed: 1},
		{name: "slow: rules decide", f: &fakePlanner{delay: 2 * time.Second, diagnose: func(string) string { return splitTask("m", 0.99) }, split: goodSplit},
			text: twoFacts, want: []string{"m#1", "m#2"}, rule: "rules", failed: 1},
		{name: "server error: rules decide", f: &fakePlanner{status: 500}, text: twoFacts, want: []string{"m#1", "m#2"}, rule: "rules", failed: 1},
		{name: "no endpoint: rules decide", noEndpoint: true, f: &fakePlanner{}, text: twoFacts, want: []string{"m#1", "m#2"}, rule: "rules", failed: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.f)
			base := srv.URL + "/v1"
			if tc.noEndpoint {
				srv.Close()
			} else {
				defer srv.Close()
			}
			db := openTest(t, t.TempDir(), nil)
			defer db.Close()
			c := createTest(t, db, "notes", &CollectionOptions{Dim: 64, Embedder: "hashing",
				Planner: PlannerOptions{BaseURL: base, Model: "judge", Timeout: 300 * time.Millisecond}})
			putWhole(t, c, Memory{ID: "m", Text: tc.text})
			rep, err := c.Consolidate(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := c.Get(ctx, "m")
			if !slices.Equal(m.SplitInto, tc.want) || m.SplitRule != tc.rule || m.Visible != (tc.want == nil) {
				t.Fatalf("split into %v by %q, visible %v; want %v by %q", m.SplitInto, m.SplitRule, m.Visible, tc.want, tc.rule)
			}
			if rep.PlannerAsked != 1 || rep.PlannerRejected != tc.rejected || rep.PlannerFailed != tc.failed || rep.Split != len(tc.want)/2 {
				t.Fatalf("report %+v: want asked 1, rejected %d, failed %d", rep, tc.rejected, tc.failed)
			}
			for i, id := range tc.want {
				s, err := c.Get(ctx, id)
				if err != nil || !s.Visible || s.SplitFrom != "m" || !strings.Contains(tc.text, s.Text) {
					t.Fatalf("sibling %d: %+v %v", i, s, err)
				}
			}
			if err := c.checkLinks(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The planner's Merge and Update proposals pass the executor's checks or
// do nothing.
func TestPlannerMergeUpdate(t *testing.T) {
	ctx := context.Background()
	f := &fakePlanner{split: func(string) string { return `{"do_split":false,"segments":[]}` }}
	var answer atomic.Value
	f.diagnose = func(target string) string {
		if target == "The audit trail is kept for seven years." {
			return answer.Load().(string)
		}
		return `{"split_tasks":[],"merge_tasks":[],"update_tasks":[]}`
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	for _, tc := range []struct {
		name      string
		answer    string
		merged    []string // ids folded into "a"
		updated   bool     // "b" superseded by "c"
		rejected  int
		unchanged bool
	}{
		{name: "merge", answer: `{"split_tasks":[],"merge_tasks":[{"node_ids":["b","a"],"reason":"same","confidence":0.97}],"update_tasks":[]}`, merged: []string{"b"}},
		{name: "merge of five", answer: `{"split_tasks":[],"merge_tasks":[{"node_ids":["a","b","c","d","e"],"reason":"same","confidence":0.97}],"update_tasks":[]}`, rejected: 1},
		{name: "merge with an unknown id", answer: `{"split_tasks":[],"merge_tasks":[{"node_ids":["a","zz"],"reason":"same","confidence":0.97}],"update_tasks":[]}`, rejected: 1},
		{name: "merge of one", answer: `{"split_tasks":[],"merge_tasks":[{"node_ids":["a","a"],"reason":"same","confidence":0.97}],"update_tasks":[]}`, rejected: 1},
		{name: "update", answer: `{"split_tasks":[],"merge_tasks":[],"update_tasks":[{"old_node_id":"b","new_node_id":"c","reason":"newer","confidence":0.93}]}`, updated: true},
		{name: "update backwards in time", answer: `{"split_tasks":[],"merge_tasks":[],"update_tasks":[{"old_node_id":"c","new_node_id":"b","reason":"newer","confidence":0.93}]}`, rejected: 1},
		{name: "update below θ", answer: `{"split_tasks":[],"merge_tasks":[],"update_tasks":[{"old_node_id":"b","new_node_id":"c","reason":"newer","confidence":0.5}]}`, rejected: 1},
		{name: "merge then a conflicting update", answer: `{"split_tasks":[],"merge_tasks":[{"node_ids":["a","b"],"reason":"same","confidence":0.97}],"update_tasks":[{"old_node_id":"b","new_node_id":"c","reason":"newer","confidence":0.93}]}`,
			merged: []string{"b"}, rejected: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer.Store(tc.answer)
			db := openTest(t, t.TempDir(), nil)
			defer db.Close()
			c := createTest(t, db, "notes", &CollectionOptions{Dim: 64, Embedder: "hashing",
				Planner: PlannerOptions{BaseURL: srv.URL + "/v1", Model: "judge"}})
			for _, m := range []Memory{
				{ID: "a", Text: "The audit trail is kept for seven years."},
				{ID: "b", Text: "Old invoices are shredded after seven years."},
				{ID: "c", Text: "Invoices get destroyed once ten years pass."},
				{ID: "d", Text: "The pantry is restocked on Mondays."},
				{ID: "e", Text: "The gym opens at six."},
			} {
				time.Sleep(time.Millisecond) // distinct transaction times: c is newer than b
				putWhole(t, c, m)
			}
			c.splitScan = 0
			rep, err := c.Consolidate(ctx, &ConsolidateOptions{MergeSim: 1, MergeWords: 1})
			if err != nil {
				t.Fatal(err)
			}
			if rep.PlannerRejected != tc.rejected {
				t.Fatalf("report %+v: want %d rejected", rep, tc.rejected)
			}
			a, _ := c.Get(ctx, "a")
			if !slices.Equal(a.Supersedes, tc.merged) {
				t.Fatalf("a absorbed %v, want %v", a.Supersedes, tc.merged)
			}
			b, _ := c.Get(ctx, "b")
			if tc.updated != (b.SupersededBy == "c") {
				t.Fatalf("b superseded by %q; want c: %v", b.SupersededBy, tc.updated)
			}
			audit, _ := c.Audit(ctx, 0)
			for _, e := range audit {
				switch e.Rule {
				case RuleMerge:
					if e.Reason != "MERGED_PLANNER" {
						t.Errorf("merge audited %q", e.Reason)
					}
				case RuleUpdate:
					if e.Reason != "UPDATED_PLANNER" || e.ID != "b" || e.Other != "c" {
						t.Errorf("update audited %+v", e)
					}
				}
			}
			if err := c.checkLinks(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
