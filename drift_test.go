package tidemark

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// A group whose embeddings change regime gets a higher λ(t) than a
// stable one; the VDD method then decays its memories faster than their
// profile (and StaticDecay turns that off); the detectors come back the
// same after a crash.
func TestDriftAdaptiveDecay(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, dir, &Options{Clock: func() time.Time { return clock }})
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8, Method: temporal.MethodVDD})
	rng := rand.New(rand.NewPCG(3, 3))
	around := func(axis int) []float32 {
		v := make([]float32, 8)
		for i := range v {
			v[i] = float32(0.15 * rng.NormFloat64())
		}
		v[axis] += 1
		return v
	}
	put := func(group string, i, axis int) {
		t.Helper()
		if _, err := c.Put(ctx, []Memory{{ID: fmt.Sprintf("%s-%d", group, i), Text: fmt.Sprintf("%s note %d", group, i), Vector: around(axis),
			Subject: group, Relation: fmt.Sprintf("note %d", i), Object: "x", Created: clock.AddDate(0, 0, -10)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 150 {
		put("lib", i, 2)
		axis := 0
		if i >= 120 {
			axis = 5 // svc changes regime
		}
		put("svc", i, axis)
	}
	factor := map[string]float64{}
	for _, d := range c.Drift() {
		factor[d.Group] = d.Factor
		if d.Group != "" && (!d.Warm || !d.Calibrated || len(d.History) == 0) {
			t.Fatalf("group %q not warm: %+v", d.Group, d)
		}
	}
	t.Logf("factors %v", factor)
	if !(factor["svc"] > factor["lib"]) || !(factor["svc"] > 1) {
		t.Fatalf("after the regime change svc's factor %v, lib's %v", factor["svc"], factor["lib"])
	}
	score := func(static bool) float64 {
		p := temporal.Preset(temporal.MethodVDD)
		p.AdaptiveDecay = !static
		res, err := c.Search(ctx, &SearchRequest{Vector: around(5), K: 1, Params: &p, Kinds: temporal.KindsOf(temporal.Static)})
		if err != nil || len(res.Hits) == 0 {
			t.Fatal(err)
		}
		return res.Hits[0].Score
	}
	if adaptive, static := score(false), score(true); !(adaptive < static) {
		t.Fatalf("VDD score with drift %v, static %v: the volatile group should decay faster", adaptive, static)
	}
	before := c.Drift()
	db.wal.Close()
	db = openTest(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("c")
	after := c.Drift()
	if len(after) != len(before) {
		t.Fatalf("%d groups after a crash, %d before", len(after), len(before))
	}
	for i := range before {
		if before[i].Lambda != after[i].Lambda || before[i].Observations != after[i].Observations {
			t.Fatalf("group %q: %+v before, %+v after", before[i].Group, before[i], after[i])
		}
	}
}

// driftBatches returns batches of memories that exercise every part of the
// drift state: two subject groups past the detector's ring (one changing
// regime), small subject groups below and just past warming up,
// superseded facts (a row with several beliefs), and subject-less
// memories of several profiles falling into the coarse clusters (so a
// drift group has several kernel groups).
func driftBatches(dim int) [][]Memory {
	rng := rand.New(rand.NewPCG(8, 9))
	around := func(axis int, noise float64) []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(noise * rng.NormFloat64())
		}
		v[axis%dim] += 1
		return v
	}
	profiles := []string{"", "news", "policy", "research"}
	created := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	var out [][]Memory
	var b []Memory
	flush := func() {
		if len(b) >= 40 {
			out = append(out, b)
			b = nil
		}
	}
	for i := range 600 {
		axis := 0
		if i >= 400 {
			axis = 5
		}
		b = append(b, Memory{ID: fmt.Sprintf("svc-%d", i), Text: fmt.Sprintf("svc note %d", i), Vector: around(axis, 0.2),
			Subject: "svc", Relation: fmt.Sprintf("note %d", i), Object: "x", Created: created})
		if i < 450 {
			// Learnt later, a restatement with another value supersedes
			// and gives the row it supersedes a second belief.
			b = append(b, Memory{ID: fmt.Sprintf("lib-%d", i), Text: fmt.Sprintf("lib note %d", i), Vector: around(2, 0.15),
				Subject: "lib", Relation: fmt.Sprintf("note %d", i%200), Object: fmt.Sprintf("v%d", i/200), Created: created,
				RecordedAt: created.AddDate(0, 0, i/200)})
		}
		if i%3 == 0 {
			b = append(b, Memory{ID: fmt.Sprintf("free-%d", i), Text: fmt.Sprintf("free note %d", i), Vector: around(rng.IntN(dim), 0.5),
				Profile: profiles[i%len(profiles)], Created: created})
		}
		if g := i % 7; i < 70 && g < 5 && i/7 < 3*g {
			b = append(b, Memory{ID: fmt.Sprintf("small%d-%d", g, i), Text: fmt.Sprintf("small %d note %d", g, i), Vector: around(g, 0.3),
				Subject: fmt.Sprintf("small %d", g), Relation: fmt.Sprintf("note %d", i), Object: "x", Created: created})
		}
		flush()
	}
	if len(b) > 0 {
		out = append(out, b)
	}
	return out
}

// driftPrint is everything of a ledger's drift state.
type driftPrint struct {
	Drift   []DriftState
	KGroups []kernelGroup
	Anchors []int
	RowKG   []uint32          // each row's kernel group
	Group   [][]uint32        // each row's beliefs' (in the column store)
	Det     map[string][]byte // each detector's binary state, its ring included
}

func driftPrintOf(t *testing.T, c *Collection) driftPrint {
	t.Helper()
	p := driftPrint{Drift: c.Drift(), Det: map[string][]byte{}}
	c.mu.RLock()
	defer c.mu.RUnlock()
	p.KGroups, p.Anchors = slices.Clone(c.kgroups), slices.Clone(c.anchors)
	for j := range c.rows.len() {
		p.RowKG = append(p.RowKG, c.rows.at(j).kgroup)
		var gs []uint32
		for _, b := range c.rows.at(j).beliefList() {
			gs = append(gs, c.batch.Group[b])
		}
		p.Group = append(p.Group, gs)
	}
	for name, g := range c.drift {
		b, err := g.det.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		p.Det[name] = b
	}
	return p
}

func sameDrift(t *testing.T, what string, got, want driftPrint) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		for i := range min(len(got.Drift), len(want.Drift)) {
			if !reflect.DeepEqual(got.Drift[i], want.Drift[i]) {
				t.Errorf("%s: group %q\n%+v, want\n%+v", what, got.Drift[i].Group, got.Drift[i], want.Drift[i])
				break
			}
		}
		for name, b := range want.Det {
			if !bytes.Equal(got.Det[name], b) {
				t.Errorf("%s: detector %q differs", what, name)
				break
			}
		}
		for j := range min(len(got.Group), len(want.Group)) {
			if !slices.Equal(got.Group[j], want.Group[j]) {
				t.Errorf("%s: row %d's beliefs in kernel groups %d, want %d", what, j, got.Group[j], want.Group[j])
				break
			}
		}
		if !reflect.DeepEqual(got.KGroups, want.KGroups) || !slices.Equal(got.RowKG, want.RowKG) {
			t.Errorf("%s: the kernel groups or the rows' kernel groups differ", what)
		}
		t.Fatalf("%s: the drift state differs (groups %d/%d, kernel groups %d/%d, anchors %v/%v, rows %d/%d)", what,
			len(got.Drift), len(want.Drift), len(got.KGroups), len(want.KGroups), got.Anchors, want.Anchors,
			len(got.RowKG), len(want.RowKG))
	}
}

// The drift state — Drift's output, the detectors themselves and every
// row's and belief's kernel group — is the same before Close, after Open
// from the log alone, after Open from the snapshot (which stores it since
// format 5 instead of replaying the rows through the detectors), and it
// goes on the same: writes after an Open from the snapshot give the
// state of a database that was never closed.
func TestDriftStateSurvivesSnapshot(t *testing.T) {
	ctx := context.Background()
	const dim = 16
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	opts := &Options{Clock: func() time.Time { return clock }}
	batches := driftBatches(dim)
	half := len(batches) * 2 / 3
	put := func(c *Collection, bs [][]Memory) {
		t.Helper()
		for _, b := range bs {
			if _, err := c.Put(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	collection := func(db *DB) *Collection {
		t.Helper()
		c, err := db.Collection("c")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	dir := t.TempDir()
	db := openTest(t, dir, opts)
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: dim, Method: temporal.MethodVDD})
	if err != nil {
		t.Fatal(err)
	}
	put(c, batches[:half])
	before := driftPrintOf(t, c)
	warm, full, multi := 0, false, false
	for _, d := range before.Drift {
		if d.Warm {
			warm++
		}
		full = full || d.Observations > 205
	}
	perGroup := map[string]int{}
	for _, k := range before.KGroups {
		perGroup[k.drift]++
		multi = multi || perGroup[k.drift] > 1
	}
	beliefs := 0
	for _, gs := range before.Group {
		beliefs += len(gs)
	}
	if warm < 4 || warm == len(before.Drift) || !full || !multi || len(before.Anchors) != driftClusters || beliefs <= len(before.RowKG) {
		t.Fatalf("the data does not exercise the drift state: %d of %d groups warm, a full ring %v, a group with several kernel groups %v, %d anchors, %d beliefs of %d rows",
			warm, len(before.Drift), full, multi, len(before.Anchors), beliefs, len(before.RowKG))
	}

	// A crash: Open replays the log.
	db.wal.Close()
	db = openTest(t, dir, opts)
	if ri := db.Recovery(); ri.SnapshotSeq != 0 || ri.Replayed == 0 {
		t.Fatalf("open after a crash: %+v, want a log replay", ri)
	}
	sameDrift(t, "after log replay", driftPrintOf(t, collection(db)), before)

	// Close writes a snapshot; Open reads it and replays nothing.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir, opts)
	if ri := db.Recovery(); ri.SnapshotSeq == 0 || ri.Replayed != 0 {
		t.Fatalf("open after Close: %+v, want the snapshot alone", ri)
	}
	c = collection(db)
	sameDrift(t, "after Open from the snapshot", driftPrintOf(t, c), before)

	// More writes on the restored detectors.
	put(c, batches[half:])
	after := driftPrintOf(t, c)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := openTest(t, t.TempDir(), opts)
	defer db2.Close()
	c2, err := db2.CreateCollection(ctx, "c", &CollectionOptions{Dim: dim, Method: temporal.MethodVDD})
	if err != nil {
		t.Fatal(err)
	}
	put(c2, batches)
	sameDrift(t, "written after a snapshot Open, against never closed", after, driftPrintOf(t, c2))
}

// driftSnapshotSeed is the snapshot body of a small collection with a
// warm drift group, for the snapshot fuzzer.
func driftSnapshotSeed(t testing.TB) []byte {
	ctx := context.Background()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	const dim = 3
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var ms []Memory
	for i := range 24 {
		v := []float32{1, float32(rng.NormFloat64()), float32(rng.NormFloat64())}
		m := Memory{ID: fmt.Sprint(i), Text: fmt.Sprintf("note %d", i), Vector: v}
		if i%8 != 0 {
			m.Subject, m.Relation, m.Object = "s", fmt.Sprint(i), "x"
		}
		ms = append(ms, m)
	}
	if _, err := c.Put(ctx, ms); err != nil {
		t.Fatal(err)
	}
	return snapshotBody(t, db)
}

// A snapshot with warm drift groups reads back to the same bytes.
func TestDriftSnapshotBodyRoundTrip(t *testing.T) {
	b := driftSnapshotSeed(t)
	db := &DB{opts: (*Options)(nil).WithDefaults(), colls: map[string]*Collection{}}
	if err := db.readState(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	c := db.colls["c"]
	if g := c.drift["s"]; g == nil || !g.last.Warm || g.n != 21 {
		t.Fatalf("group s: %+v", g)
	}
	var again bytes.Buffer
	if err := db.writeState(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), b) {
		t.Fatalf("the snapshot re-encodes to other bytes (%d, was %d)", again.Len(), len(b))
	}
}
