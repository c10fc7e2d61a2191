package heldout

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidemark/tidemark"
)

// The Split sets (split/README.md): multi-fact memories, one fact of each
// later updated, and narrative texts that must stay whole. They measure
// All-Mem's Split (tidemark.CollectionOptions.Split) end to end, as a
// user's plain-text writes and questions would.

// MultiFact is one line of multifact.jsonl: a memory stating several
// facts, an update of one of them, and a question about the updated fact
// and about one that stays true.
type MultiFact struct {
	ID           string   `json:"id"`
	Domain       string   `json:"domain"`
	Memory       string   `json:"memory"`
	Facts        []string `json:"facts"`
	Update       string   `json:"update"`
	Updated      int      `json:"updated"`
	OldValue     string   `json:"old_value"`
	NewValue     string   `json:"new_value"`
	QueryUpdated string   `json:"query_updated"`
	Kept         int      `json:"kept"`
	KeptValue    string   `json:"kept_value"`
	QueryKept    string   `json:"query_kept"`
}

// Narrative is one line of narrative.jsonl: a text that must not be split.
type Narrative struct {
	ID     string `json:"id"`
	Domain string `json:"domain"`
	Kind   string `json:"kind"`
	Text   string `json:"text"`
}

// loadJSONL reads a JSON Lines file strictly (unknown fields refused).
func loadJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var v T
		d := json.NewDecoder(strings.NewReader(sc.Text()))
		d.DisallowUnknownFields()
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// LoadSplitSet reads a Split set's multifact.jsonl and narrative.jsonl
// from dir and checks what the measurement relies on: the values are
// where the lines say.
func LoadSplitSet(dir string) ([]MultiFact, []Narrative, error) {
	mf, err := loadJSONL[MultiFact](filepath.Join(dir, "multifact.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	for _, m := range mf {
		switch {
		case m.ID == "" || m.Memory == "" || m.Update == "" || m.QueryUpdated == "" || m.QueryKept == "":
			return nil, nil, fmt.Errorf("%s: a line needs id, memory, update and both queries", m.ID)
		case !strings.Contains(m.Memory, m.OldValue) || !strings.Contains(m.Update, m.NewValue) || !strings.Contains(m.Memory, m.KeptValue):
			return nil, nil, fmt.Errorf("%s: old_value and kept_value must be in the memory, new_value in the update", m.ID)
		case m.OldValue == "" || m.NewValue == "" || m.KeptValue == "":
			return nil, nil, fmt.Errorf("%s: empty value", m.ID)
		}
	}
	nr, err := loadJSONL[Narrative](filepath.Join(dir, "narrative.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	for _, n := range nr {
		if n.ID == "" || n.Text == "" {
			return nil, nil, fmt.Errorf("%s: a narrative line needs an id and a text", n.ID)
		}
	}
	return mf, nr, nil
}

// SplitOutcome is what the engine did with one multi-fact memory.
type SplitOutcome struct {
	Item MultiFact
	// Split: the memory was split at Put; Siblings how many siblings.
	Split    bool
	Siblings int
	// Fresh: the first answer to the updated fact's question holds the
	// new value. Stale: an answer to it — any current memory returned —
	// states the old value without the new one: a superseded fact served.
	Fresh, Stale bool
	// Kept: the first answer to the untouched fact's question holds its
	// value; KeptCurrent: some current memory still states it (it was not
	// superseded along with the updated fact).
	Kept, KeptCurrent bool
}

// SplitReport sums a Split set's measurement.
type SplitReport struct {
	Memories, Split, Fresh, Stale, Kept, KeptCurrent int
	Narratives, NarrativesSplit                      int
	// SplitNarratives lists the narrative texts that were split (ids).
	SplitNarratives []string
	Outcomes        []SplitOutcome
}

// Ratio returns n / d (0 for d = 0).
func Ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// RunSplit measures a Split set, each multi-fact memory in its own
// collection with the defaults (keys at ingest, split, the offline
// hashing embedder): the memory written, a day later its update, then a
// consolidation run; then the two questions, k = 10 (every current memory
// of the collection). Each narrative text is written into one shared
// collection and counted when it splits.
func RunSplit(ctx context.Context, mf []MultiFact, nr []Narrative) (SplitReport, error) {
	var rep SplitReport
	db, tick, done, err := openDB()
	if err != nil {
		return rep, err
	}
	defer done()
	for i, item := range mf {
		c, err := db.CreateCollection(ctx, fmt.Sprintf("m%d", i), &tidemark.CollectionOptions{Dim: 256, Embedder: "hashing"})
		if err != nil {
			return rep, err
		}
		o := SplitOutcome{Item: item}
		tick(24 * time.Hour)
		res, err := c.Put(ctx, []tidemark.Memory{{ID: "memory", Text: item.Memory}})
		if err != nil {
			return rep, fmt.Errorf("%s: %w", item.ID, err)
		}
		o.Siblings = len(res[0].Split)
		o.Split = o.Siblings > 0
		tick(24 * time.Hour)
		if _, err := c.Put(ctx, []tidemark.Memory{{ID: "update", Text: item.Update}}); err != nil {
			return rep, fmt.Errorf("%s: %w", item.ID, err)
		}
		if _, err := c.Consolidate(ctx, nil); err != nil {
			return rep, err
		}
		hits, err := c.Search(ctx, &tidemark.SearchRequest{Text: item.QueryUpdated, K: 10})
		if err != nil {
			return rep, err
		}
		for k, h := range hits.Hits {
			old := strings.Contains(h.Memory.Text, item.OldValue) && !strings.Contains(h.Memory.Text, item.NewValue)
			if k == 0 {
				o.Fresh = strings.Contains(h.Memory.Text, item.NewValue)
			}
			o.Stale = o.Stale || old
		}
		hits, err = c.Search(ctx, &tidemark.SearchRequest{Text: item.QueryKept, K: 10})
		if err != nil {
			return rep, err
		}
		for k, h := range hits.Hits {
			has := strings.Contains(h.Memory.Text, item.KeptValue)
			if k == 0 {
				o.Kept = has
			}
			o.KeptCurrent = o.KeptCurrent || has
		}
		rep.Outcomes = append(rep.Outcomes, o)
		rep.Memories++
		rep.Split += b2i(o.Split)
		rep.Fresh += b2i(o.Fresh)
		rep.Stale += b2i(o.Stale)
		rep.Kept += b2i(o.Kept)
		rep.KeptCurrent += b2i(o.KeptCurrent)
		if err := db.DropCollection(ctx, c.Name()); err != nil {
			return rep, err
		}
	}
	if len(nr) > 0 {
		c, err := db.CreateCollection(ctx, "narrative", &tidemark.CollectionOptions{Dim: 256, Embedder: "hashing"})
		if err != nil {
			return rep, err
		}
		for _, n := range nr {
			tick(time.Minute)
			res, err := c.Put(ctx, []tidemark.Memory{{ID: n.ID, Text: n.Text}})
			if err != nil {
				return rep, fmt.Errorf("%s: %w", n.ID, err)
			}
			rep.Narratives++
			if len(res[0].Split) > 0 {
				rep.NarrativesSplit++
				rep.SplitNarratives = append(rep.SplitNarratives, n.ID)
			}
		}
	}
	return rep, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
