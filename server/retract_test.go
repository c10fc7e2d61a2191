package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
	"github.com/tidemark/tidemark/client"
	"github.com/tidemark/tidemark/temporal"
)

// Over HTTP, as a user does it: put two versions of a fact, retract the
// newer (the older holds again, a search as of the transaction time
// before the retraction still finds the newer, history names the token),
// then purge a memory and check, after a checkpoint, that no file of the
// data directory holds its text. The Go client does the same calls.
func TestRetractAndPurgeOverHTTP(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := tidemark.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Config{Tokens: []Token{
		{Token: admin, Name: "admin", Collections: []string{"*"}, Write: true},
		{Token: reader, Name: "reader", Collections: []string{"facts"}},
	}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	ctx := context.Background()
	cl := client.New(ts.URL, admin)

	if r := call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	put := func(body string) {
		t.Helper()
		if r := call(t, ts, "POST", "/v1/collections/facts/memories", admin, body); r.status != 200 {
			t.Fatalf("put: %d %s", r.status, r.raw)
		}
	}
	put(`{"memories":[{"id":"v1","text":"The API rate limit is 100 requests per minute.","vector":[1,0,0],"kind":"versioned","subject":"api","relation":"limit","object":"100","valid_from":"2025-01-01T00:00:00Z"}]}`)
	put(`{"memories":[{"id":"v2","text":"The API rate limit is 250 requests per minute.","vector":[1,0.1,0],"kind":"versioned","subject":"api","relation":"limit","object":"250","valid_from":"2025-06-01T00:00:00Z"}]}`)
	put(`{"memories":[{"id":"secret","text":"The vault code is tangerine-4471.","vector":[0,0,1]}]}`)
	search := func(body string) []string {
		t.Helper()
		res, err := cl.Search(ctx, "facts", mustSearch(t, body))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	if got := search(`{"vector":[1,0,0],"k":1}`); len(got) != 1 || got[0] != "v2" {
		t.Fatalf("before: %v", got)
	}
	before := time.Now().UTC()
	time.Sleep(10 * time.Millisecond)

	// A reader may not retract; a bad purge value is a 400 in the one
	// error shape; an unknown id a 404.
	if r := call(t, ts, "DELETE", "/v1/collections/facts/memories/v2", reader, ""); r.status != 403 {
		t.Fatalf("reader's retraction: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "DELETE", "/v1/collections/facts/memories/v2?purge=yes", admin, ""); r.status != 400 || r.body["error"] == nil {
		t.Fatalf("purge=yes: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "DELETE", "/v1/collections/facts/memories/nobody", admin, ""); r.status != 404 {
		t.Fatalf("unknown id: %d %s", r.status, r.raw)
	}

	res, err := cl.Retract(ctx, "facts", "v2")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.IDs) != 1 || res.IDs[0] != "v2" || len(res.Restored) != 1 || res.Restored[0] != "v1" || res.Purged {
		t.Fatalf("retract: %+v", res)
	}
	if again, err := cl.Retract(ctx, "facts", "v2"); err != nil || !again.Unchanged {
		t.Fatalf("again: %+v %v", again, err)
	}
	if got := search(`{"vector":[1,0,0],"k":1}`); len(got) != 1 || got[0] != "v1" {
		t.Fatalf("after the retraction, current: %v, want v1", got)
	}
	asOfTx := `{"vector":[1,0,0],"k":1,"as_of_tx":"` + before.Format(time.RFC3339Nano) + `"}`
	if got := search(asOfTx); len(got) != 1 || got[0] != "v2" {
		t.Fatalf("as of the transaction time before the retraction: %v, want v2", got)
	}
	m, err := cl.Get(ctx, "facts", "v2")
	if err != nil {
		t.Fatal(err)
	}
	if m.RetractedBy != "admin" || m.RetractedAt == nil || *m.Visible {
		t.Fatalf("retracted memory: by %q at %v visible %v", m.RetractedBy, m.RetractedAt, *m.Visible)
	}
	audit := call(t, ts, "GET", "/v1/collections/facts/audit", admin, "")
	if !strings.Contains(audit.raw, `"rule":"retract"`) || !strings.Contains(audit.raw, `"by":"admin"`) {
		t.Fatalf("audit: %s", audit.raw)
	}

	scan := func() []string { return filesHolding(dir, "tangerine-4471") }
	if len(scan()) == 0 {
		t.Fatal("the secret is in no file before the purge: the scan sees nothing")
	}
	if r := call(t, ts, "DELETE", "/v1/collections/facts/memories/secret?purge=true", admin, ""); r.status != 200 || r.body["purged"] != true {
		t.Fatalf("purge: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "GET", "/v1/collections/facts/memories/secret", admin, ""); r.status != 404 {
		t.Fatalf("get after purge: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "POST", "/v1/collections/facts/memories", admin, `{"memories":[{"id":"secret","vector":[0,1,0]}]}`); r.status != 409 {
		t.Fatalf("re-using a purged id: %d %s", r.status, r.raw)
	}
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if found := scan(); len(found) > 0 {
		t.Fatalf("after the purge and a checkpoint the secret is still in %v", found)
	}
}

// filesHolding lists the files under dir whose bytes contain needle.
func filesHolding(dir, needle string) (found []string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(needle)) {
			found = append(found, d.Name())
		}
		return nil
	})
	return found
}

// listWhileWriting pages through a listing with the client's iterator
// while another goroutine keeps writing the memories next makes, and
// returns how many times each id was listed.
func listWhileWriting(t *testing.T, cl *client.Client, coll string, q api.ListQuery, next func(i int) api.Memory) map[string]int {
	t.Helper()
	ctx := context.Background()
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := cl.Put(ctx, coll, []api.Memory{next(i)}); err != nil {
				done <- err
				return
			}
		}
	}()
	seen := map[string]int{}
	for m, err := range cl.All(ctx, coll, q) {
		if err != nil {
			close(stop)
			<-done
			t.Fatal(err)
		}
		seen[m.ID]++
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return seen
}

// mustSearch decodes a search body as a client would have built it.
func mustSearch(t *testing.T, body string) api.SearchRequest {
	t.Helper()
	var q api.SearchRequest
	if err := decodeSearchBytes([]byte(body), &q); err != nil {
		t.Fatal(err)
	}
	return q
}

// A put of other content under an id is its next version; if_version
// guards against a write in between (409 conflict, the one error shape).
func TestUpsertOverHTTP(t *testing.T) {
	ts, _ := newTestServer(t)
	if r := call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	put := func(body string, status int) reply {
		t.Helper()
		r := call(t, ts, "POST", "/v1/collections/facts/memories", admin, body)
		if r.status != status {
			t.Fatalf("put %s: %d %s", body, r.status, r.raw)
		}
		return r
	}
	put(`{"memories":[{"id":"cfg","text":"Backups run nightly.","vector":[1,0,0]}]}`, 200)
	r := put(`{"memories":[{"id":"cfg","text":"Backups run every six hours.","vector":[0,1,0],"if_version":1}]}`, 200)
	if !strings.Contains(r.raw, `"outcome":"stored"`) {
		t.Fatalf("upsert: %s", r.raw)
	}
	r = put(`{"memories":[{"id":"cfg","text":"Backups run weekly.","vector":[0,1,0],"if_version":1}]}`, 409)
	if e, _ := r.body["error"].(map[string]any); e == nil || e["code"] != api.CodeConflict {
		t.Fatalf("a stale if_version: %s", r.raw)
	}
	g := call(t, ts, "GET", "/v1/collections/facts/memories/cfg", admin, "")
	if g.status != 200 || g.body["text"] != "Backups run every six hours." || g.body["revision"] != float64(2) {
		t.Fatalf("get: %s", g.raw)
	}
	h := call(t, ts, "GET", "/v1/collections/facts/memories/cfg/history", admin, "")
	if h.status != 200 || !strings.Contains(h.raw, `"revision":1`) || !strings.Contains(h.raw, `"revision":2`) {
		t.Fatalf("history: %s", h.raw)
	}
}

// Listing over HTTP: the client's iterator pages through every memory
// that was there when it began exactly once while another client writes;
// count agrees with a listing; dates are accepted as times; bad
// parameters are 400s in the one error shape.
func TestListOverHTTP(t *testing.T) {
	ts, _ := newTestServer(t)
	ctx := context.Background()
	cl := client.New(ts.URL, admin)
	if _, err := cl.CreateCollection(ctx, "facts", api.CreateCollection{Dim: 3}); err != nil {
		t.Fatal(err)
	}
	var ms []api.Memory
	for i := range 250 {
		ms = append(ms, api.Memory{ID: fmt.Sprintf("m%03d", i), Vector: []float32{1, float32(i), 0}, Kind: temporal.Kind(i % 2)})
	}
	for lo := 0; lo < len(ms); lo += 50 {
		if _, err := cl.Put(ctx, "facts", ms[lo:lo+50]); err != nil {
			t.Fatal(err)
		}
	}
	seen := listWhileWriting(t, cl, "facts", api.ListQuery{Limit: 17}, func(i int) api.Memory {
		return api.Memory{ID: fmt.Sprintf("new%04d", i), Vector: []float32{0, 1, float32(i)}}
	})
	for _, m := range ms {
		if seen[m.ID] != 1 {
			t.Fatalf("%s listed %d times", m.ID, seen[m.ID])
		}
	}
	n, err := cl.Count(ctx, "facts", api.ListQuery{Kinds: []temporal.Kind{temporal.Versioned}})
	if err != nil || n != 125 {
		t.Fatalf("count of versioned memories: %d %v, want 125", n, err)
	}
	if r := call(t, ts, "GET", "/v1/collections/facts/count?as_of_tx=2000-01-01", admin, ""); r.status != 200 || r.body["count"] != float64(0) {
		t.Fatalf("count as of a date before everything: %d %s", r.status, r.raw)
	}
	for _, q := range []string{"limit=5000", "cursor=nope", "as_of=yesterday", "kinds=rumour", "all=maybe", "colour=red", "limit=1&limit=2"} {
		r := call(t, ts, "GET", "/v1/collections/facts/memories?"+q, admin, "")
		if e, _ := r.body["error"].(map[string]any); r.status != 400 || e == nil || e["code"] != api.CodeInvalidArgument {
			t.Fatalf("%s: %d %s", q, r.status, r.raw)
		}
	}
	if r := call(t, ts, "GET", "/v1/collections/facts/memories", reader, ""); r.status != 200 {
		t.Fatalf("a reader lists: %d %s", r.status, r.raw)
	}
}

// The walk of issue 18, over HTTP against a real data directory: create,
// put with metadata, upsert a new version, filtered search, list with
// pagination across concurrent writes, retract, as-of-tx before the
// retraction still sees it, purge, and after a checkpoint no file of the
// data directory holds the purged text.
func TestRAGStoreWalk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := tidemark.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Config{Tokens: []Token{{Token: admin, Name: "admin", Collections: []string{"*"}, Write: true}}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	ctx := context.Background()
	cl := client.New(ts.URL, admin)

	// create
	if _, err := cl.CreateCollection(ctx, "kb", api.CreateCollection{Dim: 4}); err != nil {
		t.Fatal(err)
	}
	// put with metadata
	var ms []api.Memory
	for i := range 60 {
		ms = append(ms, api.Memory{ID: fmt.Sprintf("doc-%02d", i), Text: fmt.Sprintf("Chunk %d of the handbook.", i),
			Vector: []float32{1, float32(i%7) / 7, float32(i%3) / 3, 0.1}, Metadata: map[string]any{"team": []string{"red", "blue", "green"}[i%3], "page": i}})
	}
	ms = append(ms, api.Memory{ID: "secret", Text: "The vault code is tangerine-4471.", Vector: []float32{0, 0, 0, 1}, Metadata: map[string]any{"team": "red", "page": 99}})
	if _, err := cl.Put(ctx, "kb", ms); err != nil {
		t.Fatal(err)
	}
	// upsert a new version, guarded by the version read
	got, err := cl.Get(ctx, "kb", "doc-03")
	if err != nil || got.Revision != 1 {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := cl.Put(ctx, "kb", []api.Memory{{ID: "doc-03", Text: "Chunk 3, revised.", Vector: []float32{1, 0.5, 0, 0.1},
		Metadata: map[string]any{"team": "red", "page": 3, "revised": true}, IfVersion: got.Revision}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Put(ctx, "kb", []api.Memory{{ID: "doc-03", Text: "A lost update.", Vector: []float32{1, 0, 0, 0}, IfVersion: got.Revision}}); err == nil || !strings.Contains(err.Error(), api.CodeConflict) {
		t.Fatalf("a write from the stale version: %v", err)
	}
	// filtered search
	res, err := cl.Search(ctx, "kb", api.SearchRequest{Vector: []float32{1, 0.5, 0, 0.1}, K: 5, Filter: []byte(`{"team":"red","page":{"$lt":30}}`)})
	if err != nil || len(res.Hits) != 5 || res.Hits[0].ID != "doc-03" || res.Hits[0].Memory.Text != "Chunk 3, revised." {
		t.Fatalf("filtered search: %+v %v", res, err)
	}
	for _, h := range res.Hits {
		if h.Memory.Metadata["team"] != "red" || h.Memory.Metadata["page"].(float64) >= 30 {
			t.Fatalf("a hit outside the filter: %s %v", h.ID, h.Memory.Metadata)
		}
	}
	if r := call(t, ts, "POST", "/v1/collections/kb/search", admin, `{"vector":[1,0,0,0],"filter":{"page":{"$near":3}}}`); r.status != 400 || !strings.Contains(r.raw, "$near") {
		t.Fatalf("a bad filter: %d %s", r.status, r.raw)
	}
	// list with pagination across concurrent writes
	seen := listWhileWriting(t, cl, "kb", api.ListQuery{Limit: 7, Filter: `{"team":"red"}`}, func(i int) api.Memory {
		return api.Memory{ID: fmt.Sprintf("late-%d", i), Vector: []float32{0, 1, 0, 0}, Metadata: map[string]any{"team": "red"}}
	})
	for _, m := range ms {
		if want := map[bool]int{true: 1, false: 0}[m.Metadata["team"] == "red" || m.ID == "doc-03"]; seen[m.ID] != want {
			t.Fatalf("%s listed %d times, want %d", m.ID, seen[m.ID], want)
		}
	}
	// retract; as of the transaction time before it, still found
	before := time.Now().UTC()
	time.Sleep(5 * time.Millisecond)
	if _, err := cl.Retract(ctx, "kb", "doc-03"); err != nil {
		t.Fatal(err)
	}
	q := api.SearchRequest{Vector: []float32{1, 0.5, 0, 0.1}, K: 1, Filter: []byte(`{"revised":true}`)}
	if res, err := cl.Search(ctx, "kb", q); err != nil || len(res.Hits) != 0 {
		t.Fatalf("after the retraction: %+v %v", res, err)
	}
	q.AsOfTx = api.At(before)
	if res, err := cl.Search(ctx, "kb", q); err != nil || len(res.Hits) != 1 || res.Hits[0].ID != "doc-03" {
		t.Fatalf("as of before the retraction: %+v %v", res, err)
	}
	// purge; after a checkpoint no file holds the text
	holding := func() []string { return filesHolding(dir, "tangerine-4471") }
	if len(holding()) == 0 {
		t.Fatal("no file holds the text before the purge: the scan sees nothing")
	}
	if _, err := cl.Purge(ctx, "kb", "secret"); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if files := holding(); len(files) > 0 {
		t.Fatalf("after the purge and a checkpoint %v still hold the purged text", files)
	}
}

// Dates are times on the wire: as_of "2025-03-01" asks about that day's
// start; a bad time is a 400 naming the field.
func TestDatesOnTheWire(t *testing.T) {
	ts, _ := newTestServer(t)
	call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3}`)
	r := call(t, ts, "POST", "/v1/collections/facts/memories", admin, `{"memories":[
		{"id":"v1","vector":[1,0,0],"kind":"versioned","subject":"api","relation":"limit","object":"100","valid_from":"2025-01-01"},
		{"id":"v2","vector":[1,0.1,0],"kind":"versioned","subject":"api","relation":"limit","object":"250","valid_from":"2025-06-01"}]}`)
	if r.status != 200 {
		t.Fatalf("put with dates: %d %s", r.status, r.raw)
	}
	r = call(t, ts, "POST", "/v1/collections/facts/search", admin, `{"vector":[1,0,0],"as_of":"2025-03-01","k":1}`)
	if r.status != 200 || !strings.Contains(r.raw, `"id":"v1"`) {
		t.Fatalf("as_of a date: %d %s", r.status, r.raw)
	}
	r = call(t, ts, "POST", "/v1/collections/facts/search", admin, `{"vector":[1,0,0],"as_of":"March 1st"}`)
	if e, _ := r.body["error"].(map[string]any); r.status != 400 || e == nil || !strings.Contains(e["message"].(string), "as_of") {
		t.Fatalf("a bad time: %d %s", r.status, r.raw)
	}
}

// An explained search lists each memory once, with one verdict, and
// counts memories, not beliefs, as candidates (a superseded memory has two
// beliefs: the one retired by its successor, and its closed window).
func TestExplainListsEachMemoryOnce(t *testing.T) {
	ts, _ := newTestServer(t)
	call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3}`)
	call(t, ts, "POST", "/v1/collections/facts/memories", admin, `{"memories":[{"id":"v1","vector":[1,0,0],"kind":"versioned","subject":"api","relation":"limit","object":"100","valid_from":"2025-01-01"}]}`)
	call(t, ts, "POST", "/v1/collections/facts/memories", admin, `{"memories":[{"id":"v2","vector":[1,0.1,0],"kind":"versioned","subject":"api","relation":"limit","object":"250","valid_from":"2025-06-01"}]}`)
	// The exact plan scores both memories; the ANN plan's candidates are
	// the visible surface, where the superseded v1 is not.
	for _, tc := range []struct {
		plan       string
		removed    int
		candidates int
	}{{"exact", 1, 2}, {"ann", 0, 1}} {
		r := call(t, ts, "POST", "/v1/collections/facts/search", admin, `{"vector":[1,0,0],"explain":true,"plan":"`+tc.plan+`"}`)
		var res api.SearchResult
		if err := json.Unmarshal([]byte(r.raw), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 || res.Hits[0].ID != "v2" || len(res.Removed) != tc.removed || tc.removed == 1 && res.Removed[0].ID != "v1" || res.Candidates != tc.candidates {
			t.Fatalf("plan %s: hits %v, removed %v, candidates %d; want v2, %d removed (v1), %d", tc.plan, res.Hits, res.Removed, res.Candidates, tc.removed, tc.candidates)
		}
	}
}
