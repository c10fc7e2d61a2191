package tidemark

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The filter language: what each operator matches, and that a malformed
// filter is refused naming what is wrong.
func TestFilter(t *testing.T) {
	md := Metadata{"team": "red", "n": 5.0, "tags": []any{"a", "b"}, "due": "2025-03-01", "at": "2025-03-01T12:00:00Z", "ok": true, "none": nil}
	for _, tc := range []struct {
		f    string
		want bool
	}{
		{`{}`, true},
		{`{"team":"red"}`, true},
		{`{"team":"blue"}`, false},
		{`{"tags":"b"}`, true},
		{`{"none":null}`, true},
		{`{"ok":true,"team":"red"}`, true},
		{`{"ok":true,"team":"blue"}`, false},
		{`{"n":{"$gte":5,"$lt":6}}`, true},
		{`{"n":{"$gt":5}}`, false},
		{`{"n":{"$lte":4}}`, false},
		{`{"n":{"$ne":4}}`, true},
		{`{"missing":{"$ne":4}}`, true},
		{`{"missing":{"$gt":4}}`, false},
		{`{"team":{"$gt":4}}`, false},
		{`{"team":{"$in":["blue","red"]}}`, true},
		{`{"team":{"$nin":["blue","red"]}}`, false},
		{`{"missing":{"$nin":["x"]}}`, true},
		{`{"tags":{"$in":["c","a"]}}`, true},
		{`{"team":{"$exists":true}}`, true},
		{`{"missing":{"$exists":false}}`, true},
		{`{"due":{"$gte":"2025-02-28T23:00:00Z"}}`, true},
		{`{"at":{"$lt":"2025-03-02"}}`, true},
		{`{"at":{"$lt":"2025-03-01"}}`, false},
		{`{"$or":[{"team":"blue"},{"n":5}]}`, true},
		{`{"$and":[{"team":"red"},{"n":6}]}`, false},
		{`{"$not":{"team":"red"}}`, false},
		{`{"$not":{"$or":[{"team":"blue"},{"ok":false}]}}`, true},
	} {
		f, err := ParseFilter([]byte(tc.f))
		if err != nil {
			t.Fatalf("%s: %v", tc.f, err)
		}
		if got := f.Match(md); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.f, got, tc.want)
		}
	}
	for _, tc := range []struct{ f, says string }{
		{`[]`, "want a JSON object"},
		{`{"team":`, "unexpected EOF"},
		{`{"team":{"$regex":"r"}}`, `unknown operator "$regex"`},
		{`{"$xor":[]}`, `unknown operator "$xor"`},
		{`{"$and":[]}`, "non-empty array"},
		{`{"$and":[1]}`, "$and[0]: want an object"},
		{`{"n":{"$gt":true}}`, "want a number, a time or a string"},
		{`{"n":{"$in":"x"}}`, "want an array"},
		{`{"n":{"$in":[[1]]}}`, "$in[0]"},
		{`{"n":{"$exists":1}}`, "want true or false"},
		{`{"n":[1,2]}`, "or an object of operators"},
		{`{"n":{}}`, "an empty object of operators"},
		{`{} {}`, "trailing data"},
		{strings.Repeat(`{"$not":`, 20) + `{}` + strings.Repeat(`}`, 20), "nested deeper"},
	} {
		_, err := ParseFilter([]byte(tc.f))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want ErrInvalid saying %q", tc.f, err, tc.says)
		}
	}
	var nilFilter *Filter
	if !nilFilter.Match(nil) {
		t.Error("a nil filter matches nothing")
	}
}

// Metadata is stored, returned, part of a memory's content (other
// metadata is a new version), survives a replay and a snapshot, and is
// checked on the way in.
func TestMetadataStoredAndFiltered(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 8, ExactThreshold: 10})
	var ms []Memory
	for i := range 40 {
		ms = append(ms, Memory{ID: fmt.Sprintf("m%02d", i), Vector: unit(8, i%8),
			Metadata: Metadata{"team": []string{"red", "blue"}[i%2], "page": i, "tags": []any{"x", fmt.Sprint(i % 3)}}})
	}
	if _, err := c.Put(ctx, ms); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Metadata{
		{"$team": "red"},
		{"": 1},
		{"n": math.NaN()},
		{"deep": map[string]any{"a": map[string]any{"b": map[string]any{"c": 1}}}},
		{"big": strings.Repeat("x", MaxMetadataBytes)},
		{"ch": make(chan int)},
	} {
		if _, err := c.Put(ctx, []Memory{{ID: "bad", Vector: unit(8, 0), Metadata: bad}}); !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("metadata %v: %v", bad, err)
		}
	}
	// Other metadata, same vector: the id's next version.
	res, err := c.Put(ctx, []Memory{{ID: "m00", Vector: unit(8, 0), Metadata: Metadata{"team": "green", "page": 0}}})
	if err != nil || res[0].Outcome != Stored {
		t.Fatalf("new metadata: %+v %v", res, err)
	}
	red, _ := ParseFilter([]byte(`{"team":"red","page":{"$gte":10}}`))
	green, _ := ParseFilter([]byte(`{"team":{"$in":["green"]}}`))
	check := func(c *Collection, how string) {
		t.Helper()
		m, err := c.Get(ctx, "m01")
		if err != nil || m.Metadata["team"] != "blue" || m.Metadata["page"] != 1.0 || !slices.Equal(m.Metadata["tags"].([]any), []any{"x", "1"}) {
			t.Fatalf("%s: Get: %+v %v", how, m.Metadata, err)
		}
		for _, plan := range []Plan{PlanExact, PlanANN} {
			sr, err := c.Search(ctx, &SearchRequest{Vector: unit(8, 2), K: 5, Filter: red, Plan: plan})
			if err != nil || len(sr.Hits) != 5 {
				t.Fatalf("%s, plan %v: %+v %v", how, plan, sr, err)
			}
			for _, h := range sr.Hits {
				if h.Memory.Metadata["team"] != "red" || h.Memory.Metadata["page"].(float64) < 10 {
					t.Fatalf("%s, plan %v: a hit outside the filter: %s %v", how, plan, h.ID, h.Memory.Metadata)
				}
			}
			sr, err = c.Search(ctx, &SearchRequest{Vector: unit(8, 5), K: 5, Filter: green, Plan: plan})
			if err != nil || len(sr.Hits) != 1 || sr.Hits[0].ID != "m00" {
				t.Fatalf("%s, plan %v: green: %+v %v", how, plan, sr, err)
			}
		}
		if n, err := c.Count(ctx, &ListRequest{Filter: red}); err != nil || n != 15 {
			t.Fatalf("%s: count of red from page 10: %d %v", how, n, err)
		}
		if n, err := c.Count(ctx, &ListRequest{Filter: green, All: true}); err != nil || n != 1 {
			t.Fatalf("%s: count of green versions: %d %v", how, n, err)
		}
		checkConsistent(t, c.db)
	}
	check(c, "live")
	afterReopening(t, db, dir, nil, "kb", check)
}

// The ANN plan with a filter finds what the exact plan finds, at every
// selectivity: the exact scan of the matching memories below
// FilterExactLimit, the filtered walk above it. (The recall table of the
// closing note is `tidemark bench filter` on real data.)
func TestFilteredSearchRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 12,000 vectors")
	}
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	ctx := context.Background()
	const n, dim = 12000, 24
	c := createTest(t, db, "kb", &CollectionOptions{Dim: dim})
	rng := rand.New(rand.NewPCG(1, 2))
	centers := make([][]float32, 40)
	for i := range centers {
		centers[i] = make([]float32, dim)
		for j := range centers[i] {
			centers[i][j] = float32(rng.NormFloat64())
		}
	}
	vec := func() []float32 {
		v := slices.Clone(centers[rng.IntN(len(centers))])
		for j := range v {
			v[j] += float32(0.4 * rng.NormFloat64())
		}
		return v
	}
	batch := make([]Memory, 0, 1000)
	for i := range n {
		// bucket: 0 for 1% of memories, 1–10 for 10%, the rest above.
		batch = append(batch, Memory{ID: fmt.Sprint(i), Vector: vec(), Metadata: Metadata{"bucket": i % 100}})
		if len(batch) == cap(batch) {
			if _, err := c.Put(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	for _, tc := range []struct {
		name, f string
	}{
		{"1%", `{"bucket":0}`},
		{"10%", `{"bucket":{"$lt":10}}`},
		{"50%", `{"bucket":{"$lt":50}}`},
	} {
		f, err := ParseFilter([]byte(tc.f))
		if err != nil {
			t.Fatal(err)
		}
		found, total := 0, 0
		for range 50 {
			q := vec()
			ids := func(plan Plan) []string {
				sr, err := c.Search(ctx, &SearchRequest{Vector: q, K: 10, Filter: f, Plan: plan})
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, h := range sr.Hits {
					if !f.Match(h.Memory.Metadata) {
						t.Fatalf("%s: hit %s outside the filter", tc.name, h.ID)
					}
					out = append(out, h.ID)
				}
				return out
			}
			exact, ann := ids(PlanExact), ids(PlanANN)
			total += len(exact)
			for _, id := range ann {
				if slices.Contains(exact, id) {
					found++
				}
			}
		}
		recall := float64(found) / float64(total)
		t.Logf("selectivity %s: recall@10 %.3f", tc.name, recall)
		if recall < 0.95 {
			t.Errorf("selectivity %s: recall@10 %.3f against the exact plan, want ≥ 0.95", tc.name, recall)
		}
	}
}

// The metadata columns evaluate every filter exactly as Filter.Match does
// on each row, for random metadata (numbers, strings, times, booleans,
// nulls, arrays, objects, absent keys) and random filters.
func TestMetaIndexAgreesWithMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	scalar := func() any {
		switch rng.IntN(6) {
		case 0:
			return float64(rng.IntN(5))
		case 1:
			return []string{"red", "blue", "2025-03-01", "2025-03-01T12:00:00Z", "zeta"}[rng.IntN(5)]
		case 2:
			return rng.IntN(2) == 0
		case 3:
			return nil
		case 4:
			return []any{"red", float64(rng.IntN(3))}
		}
		return map[string]any{"a": 1.0}
	}
	var x metaIndex
	var rows []Metadata
	for j := range 400 {
		md := Metadata{}
		for _, k := range []string{"a", "b", "c"} {
			if rng.IntN(3) > 0 {
				md[k] = scalar()
			}
		}
		if len(md) == 0 {
			md = nil
		}
		rows = append(rows, md)
		if md != nil {
			x.set(j, md)
		}
	}
	var leaf func() string
	leaf = func() string {
		k := []string{"a", "b", "c", "d"}[rng.IntN(4)]
		v := func() string {
			return []string{`1`, `2`, `"red"`, `"blue"`, `"2025-03-01"`, `"2025-03-02"`, `true`, `null`}[rng.IntN(8)]
		}
		switch rng.IntN(6) {
		case 0:
			return fmt.Sprintf(`{"%s":%s}`, k, v())
		case 1:
			op := []string{"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"}[rng.IntN(6)]
			w := v()
			if op[1] != 'e' && op != "$eq" && (w == "true" || w == "null") {
				w = "1"
			}
			if (op == "$gt" || op == "$gte" || op == "$lt" || op == "$lte") && (w == "true" || w == "null") {
				w = "1"
			}
			return fmt.Sprintf(`{"%s":{"%s":%s}}`, k, op, w)
		case 2:
			return fmt.Sprintf(`{"%s":{"%s":[%s,%s]}}`, k, []string{"$in", "$nin"}[rng.IntN(2)], v(), v())
		case 3:
			return fmt.Sprintf(`{"%s":{"$exists":%v}}`, k, rng.IntN(2) == 0)
		case 4:
			return fmt.Sprintf(`{"$not":%s}`, leaf())
		}
		return fmt.Sprintf(`{"%s":[%s,%s]}`, []string{"$and", "$or"}[rng.IntN(2)], leaf(), leaf())
	}
	for range 500 {
		src := leaf()
		f, err := ParseFilter([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got := x.eval(f, len(rows), func(j int) Metadata { return rows[j] })
		for j, md := range rows {
			if got.has(j) != f.Match(md) {
				t.Fatalf("%s on %v: columns say %v, Match %v", src, md, got.has(j), f.Match(md))
			}
		}
	}
}

// What Get returns of a memory's metadata is the caller's: changing it
// changes nothing stored.
func TestMetadataReturnedIsACopy(t *testing.T) {
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 4})
	in := Metadata{"team": "red", "tags": []any{"a"}, "nested": map[string]any{"k": 1}}
	if _, err := c.Put(ctx, []Memory{{ID: "a", Vector: unit(4, 0), Metadata: in}}); err != nil {
		t.Fatal(err)
	}
	in["team"] = "changed by the caller after Put"
	m, err := c.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	m.Metadata["team"] = "blue"
	m.Metadata["tags"].([]any)[0] = "z"
	m.Metadata["nested"].(map[string]any)["k"] = 2.0
	again, _ := c.Get(ctx, "a")
	if again.Metadata["team"] != "red" || again.Metadata["tags"].([]any)[0] != "a" || again.Metadata["nested"].(map[string]any)["k"] != 1.0 {
		t.Fatalf("the stored metadata changed: %v", again.Metadata)
	}
}
