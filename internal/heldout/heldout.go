// Package heldout measures how plain-text supersession behaves on pairs
// of statements written apart from the code (testdata/README.md): update
// pairs, whose newer statement must retire the older, and pairs of
// different facts that share most of their wording, neither of which may
// be superseded or penalised (a wrong supersession hides a true fact).
//
// Each pair runs through the engine as a user's writes would: a fresh
// collection with the defaults (keys at ingest, the offline hashing
// embedder), the older statement written a day before the newer, then one
// consolidation run, whose topic conflicts penalise the losing side.
package heldout

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tidemark/tidemark"
)

// Pair is one line of a pair file: Old and New for update files, A and B
// for different-fact files.
type Pair struct {
	ID        string `json:"id"`
	Domain    string `json:"domain"`
	Old       string `json:"old,omitempty"`
	New       string `json:"new,omitempty"`
	A         string `json:"a,omitempty"`
	B         string `json:"b,omitempty"`
	DiffersIn string `json:"differs_in,omitempty"`
}

// Load reads a JSON Lines pair file, strictly.
func Load(path string) ([]Pair, error) {
	pairs, err := loadJSONL[Pair](path)
	if err != nil {
		return nil, err
	}
	for n, p := range pairs {
		first, second := p.Old, p.New
		if first == "" {
			first, second = p.A, p.B
		}
		if p.ID == "" || first == "" || second == "" {
			return nil, fmt.Errorf("%s:%d: a pair needs an id and two statements", path, n+1)
		}
	}
	return pairs, nil
}

// Outcome is what the engine did with one pair.
type Outcome struct {
	Pair Pair
	// Superseded: the first statement was superseded by the second (or
	// the other way round); Penalised: consolidation penalised one of them
	// for a contradiction.
	Superseded, Penalised bool
	// Rules are the key rules of the two memories (Memory.KeyRule).
	Rules [2]string
}

// Hit reports an update caught or a different-fact pair harmed: either
// memory superseded or penalised.
func (o Outcome) Hit() bool { return o.Superseded || o.Penalised }

// openDB opens a database in a temporary directory, without fsync or
// checkpoints, whose clock moves only when tick moves it; done closes it
// and removes the directory.
func openDB() (db *tidemark.DB, tick func(time.Duration), done func(), err error) {
	dir, err := os.MkdirTemp("", "tidemark-heldout-")
	if err != nil {
		return nil, nil, nil, err
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err = tidemark.Open(dir, &tidemark.Options{NoSync: true, CheckpointRecords: -1, CheckpointBytes: -1,
		Clock: func() time.Time { return clock }})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, nil, err
	}
	return db, func(d time.Duration) { clock = clock.Add(d) }, func() { db.Close(); os.RemoveAll(dir) }, nil
}

// Run writes every pair into its own collection of one database (the
// first statement a day before the second) and consolidates.
func Run(ctx context.Context, pairs []Pair) ([]Outcome, error) {
	db, tick, done, err := openDB()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]Outcome, 0, len(pairs))
	for i, p := range pairs {
		first, second := p.Old, p.New
		if first == "" {
			first, second = p.A, p.B
		}
		c, err := db.CreateCollection(ctx, fmt.Sprintf("p%d", i), &tidemark.CollectionOptions{Dim: 256, Embedder: "hashing"})
		if err != nil {
			return nil, err
		}
		for j, text := range []string{first, second} {
			tick(24 * time.Hour)
			if _, err := c.Put(ctx, []tidemark.Memory{{ID: fmt.Sprint(j), Text: text}}); err != nil {
				return nil, fmt.Errorf("pair %s: %w", p.ID, err)
			}
		}
		if _, err := c.Consolidate(ctx, nil); err != nil {
			return nil, err
		}
		o := Outcome{Pair: p}
		for j := range 2 {
			m, err := c.Get(ctx, fmt.Sprint(j))
			if err != nil {
				return nil, err
			}
			o.Superseded = o.Superseded || m.SupersededBy != ""
			o.Penalised = o.Penalised || len(m.ContradictedBy) > 0
			o.Rules[j] = m.KeyRule
		}
		out = append(out, o)
		if err := db.DropCollection(ctx, c.Name()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Rate is the fraction of outcomes that Hit.
func Rate(os []Outcome) (hits int, rate float64) {
	for _, o := range os {
		if o.Hit() {
			hits++
		}
	}
	if len(os) == 0 {
		return 0, 0
	}
	return hits, float64(hits) / float64(len(os))
}

// Shared is what one collection holding every pair at once did: the first
// statements of all pairs written, then the second statements, then one
// consolidation run — a store where unrelated facts sit side by side.
type Shared struct {
	// Caught counts update pairs whose older statement was superseded by
	// its own newer one (or penalised in its favour).
	Caught, Updates int
	// Wrong lists the memories superseded or penalised by a memory other
	// than their own update partner: every one hides a true fact.
	Wrong []string
	// Memories is the number of statements written.
	Memories int
}

// RunShared writes every pair of updates and different into one
// collection and reports what it caught and what it harmed.
func RunShared(ctx context.Context, updates, different []Pair) (Shared, error) {
	var res Shared
	db, tick, done, err := openDB()
	if err != nil {
		return res, err
	}
	defer done()
	c, err := db.CreateCollection(ctx, "shared", &tidemark.CollectionOptions{Dim: 256, Embedder: "hashing"})
	if err != nil {
		return res, err
	}
	partner := map[string]string{} // newer id → the older id it may supersede
	var first, second []tidemark.Memory
	for _, p := range updates {
		first = append(first, tidemark.Memory{ID: p.ID + "/old", Text: p.Old})
		second = append(second, tidemark.Memory{ID: p.ID + "/new", Text: p.New})
		partner[p.ID+"/new"] = p.ID + "/old"
	}
	for _, p := range different {
		first = append(first, tidemark.Memory{ID: p.ID + "/a", Text: p.A})
		second = append(second, tidemark.Memory{ID: p.ID + "/b", Text: p.B})
	}
	for _, ms := range [][]tidemark.Memory{first, second} {
		for _, m := range ms { // one write at a time, a minute apart, as a stream of facts arrives
			tick(time.Minute)
			if _, err := c.Put(ctx, []tidemark.Memory{m}); err != nil {
				return res, fmt.Errorf("%s: %w", m.ID, err)
			}
		}
	}
	if _, err := c.Consolidate(ctx, nil); err != nil {
		return res, err
	}
	res.Memories, res.Updates = len(first)+len(second), len(updates)
	for _, ms := range [][]tidemark.Memory{first, second} {
		for _, w := range ms {
			m, err := c.Get(ctx, w.ID)
			if err != nil {
				return res, err
			}
			by := append([]string{}, m.ContradictedBy...)
			if m.SupersededBy != "" {
				by = append(by, m.SupersededBy)
			}
			for _, o := range by {
				if partner[o] == w.ID {
					res.Caught++
				} else {
					res.Wrong = append(res.Wrong, w.ID+" by "+o)
				}
			}
		}
	}
	return res, nil
}
