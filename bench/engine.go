package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/store"
	"github.com/tidemark/tidemark/temporal"
)

// EngineConfig configures RunEngine: write throughput of the engine
// (validation, log with fsync, supersession, HNSW insert) per batch size,
// against the bare write-ahead log writing the same bytes in the same run;
// then open and recovery times of a collection of N memories.
type EngineConfig struct {
	// Dir is where the databases go (default a temporary directory,
	// removed afterwards).
	Dir string
	// Data names the vectors (OpenVectorSet): the prefix of an ANN file
	// set (default DefaultData, GloVe-100, lifted to Dim), DataSynthetic
	// (clustered, for N past the file) or DataGaussian (the worst case).
	// The throughput rows take the set's first vectors again for each
	// batch size.
	Data string
	// Dim is the vector dimension (default 768); TextBytes the text of
	// each memory (default 512).
	Dim, TextBytes int
	// Batches are the Put batch sizes (default 1, 100, 1000); Writes the
	// memories written at each (default 2000).
	Batches []int
	Writes  int
	// Rounds splits each batch size's writes into rounds that alternate
	// the bare log and the engine (default 5).
	Rounds int
	// N is the collection size for the open and recovery times (default
	// 100000; negative skips them). Tail is the number of writes left in the log
	// after the last snapshot for the "snapshot + tail" recovery (default
	// 10000).
	N, Tail int
	// KeyShare is the fraction of memories carrying a fact key from a
	// pool of N/4 keys, so that some supersede others (default 0.3).
	KeyShare float64
	// Progress, when set, receives a line per phase.
	Progress io.Writer
}

// EngineRow is one measured write configuration.
type EngineRow struct {
	Batch int `json:"batch"`
	// Memories per second through tidemark's Put and through the bare
	// log (one store.WAL.Append of the same size per batch, fsynced),
	// medians over the rounds; and the ratio of the two per round, its
	// median and min. The rounds alternate the two on the same disk, so
	// the ratio holds when the shared disk's fsync time drifts.
	EnginePerSec float64 `json:"engine_per_s"`
	WALPerSec    float64 `json:"wal_per_s"`
	Ratio        float64 `json:"engine_over_wal"`
	RatioMin     float64 `json:"engine_over_wal_min"`
	Rounds       int     `json:"rounds"`
}

// EngineReport is RunEngine's result.
type EngineReport struct {
	Dataset   string      `json:"dataset"`
	Dim       int         `json:"dim"`
	TextBytes int         `json:"text_bytes"`
	Writes    int         `json:"writes"`
	Rows      []EngineRow `json:"rows"`
	N         int         `json:"n"`
	// LoadS is the time to write N memories in batches of 1000.
	LoadS float64 `json:"load_s"`
	// OpenSnapshotS is Open after Close (the snapshot holds everything,
	// indexes loaded, nothing replayed); OpenTailS Open of a crash image
	// with a snapshot and Tail records after it; OpenLogOnlyS Open of a
	// crash image with no snapshot (every record replayed, the indexes
	// built again) holding LogOnlyN = N − Tail memories.
	OpenSnapshotS float64 `json:"open_snapshot_s"`
	OpenTailS     float64 `json:"open_tail_s"`
	Tail          int     `json:"tail"`
	OpenLogOnlyS  float64 `json:"open_log_only_s"`
	LogOnlyN      int     `json:"log_only_n"`
	SnapshotMiB   float64 `json:"snapshot_mib"`
	note          string
}

func (c *EngineConfig) defaults() {
	if c.Dim == 0 {
		c.Dim = 768
	}
	if c.TextBytes == 0 {
		c.TextBytes = 512
	}
	if len(c.Batches) == 0 {
		c.Batches = []int{1, 100, 1000}
	}
	if c.Writes == 0 {
		c.Writes = 2000
	}
	if c.Rounds <= 0 {
		c.Rounds = 5
	}
	switch {
	case c.N == 0:
		c.N = 100000
	case c.N < 0:
		c.N = 0
	}
	if c.Tail == 0 {
		c.Tail = 10000
	}
	if c.KeyShare == 0 {
		c.KeyShare = 0.3
	}
}

type memGen struct {
	rng  *rand.Rand
	vecs *VectorSet
	text string
	keys int
	frac float64
	n    int
}

// next is the next memory: the set's next base vector (from the first
// again past the end of a file set), a text and, for a KeyShare of them,
// a fact key.
func (g *memGen) next() (tidemark.Memory, error) {
	v := make([]float32, g.vecs.Dim)
	i := g.n
	if !g.vecs.Unbounded {
		i %= g.vecs.N
	}
	if err := g.vecs.Base(i, v); err != nil {
		return tidemark.Memory{}, err
	}
	g.n++
	m := tidemark.Memory{ID: fmt.Sprintf("m%d", g.n), Text: fmt.Sprintf("%d %s", g.n, g.text), Vector: v, Source: temporal.SourceWiki}
	if g.rng.Float64() < g.frac {
		m.Kind, m.Subject, m.Relation, m.Object = temporal.Versioned, fmt.Sprintf("s%d", g.rng.IntN(g.keys)), "value", fmt.Sprint(g.rng.IntN(1000))
	}
	return m, nil
}

// RunEngine runs the engine benchmark.
func RunEngine(ctx context.Context, cfg EngineConfig) (EngineReport, error) {
	cfg.defaults()
	rep := EngineReport{Dim: cfg.Dim, TextBytes: cfg.TextBytes, Writes: cfg.Writes, N: cfg.N, Tail: cfg.Tail}
	vecs, err := OpenVectorSet(cfg.Data, cfg.Dim, max(cfg.N, cfg.Writes), 1)
	if err != nil {
		return rep, err
	}
	defer vecs.Close()
	rep.Dataset, rep.note = vecs.Name, vecs.Note
	if cfg.N > vecs.N {
		return rep, fmt.Errorf("bench: engine: %s has %d vectors, fewer than n = %d (use a generated set: %s or %s)", vecs.Name, vecs.N, cfg.N, DataSynthetic, DataGaussian)
	}
	root, cleanup, err := workDir(cfg.Dir, "engine")
	if err != nil {
		return rep, err
	}
	defer cleanup()
	say := lines(cfg.Progress)
	text := strings.Repeat("x", cfg.TextBytes)
	for _, b := range cfg.Batches {
		if b < 1 {
			return rep, fmt.Errorf("bench: batch size %d", b)
		}
		row, err := writeRounds(ctx, &cfg, vecs, root, b, text)
		if err != nil {
			return rep, err
		}
		rep.Rows = append(rep.Rows, row)
		say("batch %d: engine %.0f/s, bare log %.0f/s (medians), engine ÷ log min %.3f median %.3f",
			b, row.EnginePerSec, row.WALPerSec, row.RatioMin, row.Ratio)
	}
	if cfg.N == 0 {
		return rep, nil
	}
	// Open and recovery of N memories.
	dir := filepath.Join(root, "big")
	db, err := tidemark.Open(dir, &tidemark.Options{CheckpointRecords: -1, CheckpointBytes: -1})
	if err != nil {
		return rep, err
	}
	c, err := db.CreateCollection(ctx, "bench", &tidemark.CollectionOptions{Dim: cfg.Dim})
	if err != nil {
		db.Close()
		return rep, err
	}
	gen := &memGen{rng: rand.New(rand.NewPCG(2, 2)), vecs: vecs, text: text, keys: max(1, cfg.N/4), frac: cfg.KeyShare}
	start := time.Now()
	tail := min(cfg.Tail, cfg.N)
	logOnly := filepath.Join(root, "log-only")
	for w := 0; w < cfg.N; w += 1000 {
		if w == cfg.N-tail-(cfg.N-tail)%1000 && w > 0 {
			// A crash image with no snapshot: every record in the log.
			if err := copyDir(dir, logOnly); err != nil {
				db.Close()
				return rep, err
			}
			if err := db.Checkpoint(ctx); err != nil {
				db.Close()
				return rep, err
			}
			rep.Tail, rep.LogOnlyN = cfg.N-w, w
		}
		bt := make([]tidemark.Memory, min(1000, cfg.N-w))
		for i := range bt {
			if bt[i], err = gen.next(); err != nil {
				db.Close()
				return rep, err
			}
		}
		if _, err := c.Put(ctx, bt); err != nil {
			db.Close()
			return rep, err
		}
		if w%10000 == 0 {
			say("loaded %d", w)
		}
	}
	rep.LoadS = time.Since(start).Seconds()
	tailImg := filepath.Join(root, "tail")
	if err := copyDir(dir, tailImg); err != nil {
		db.Close()
		return rep, err
	}
	if err := db.Close(); err != nil {
		return rep, err
	}
	if fi, err := os.Stat(filepath.Join(dir, "snapshot")); err == nil {
		rep.SnapshotMiB = float64(fi.Size()) / (1 << 20)
	}
	for _, o := range []struct {
		dir string
		dst *float64
	}{{dir, &rep.OpenSnapshotS}, {tailImg, &rep.OpenTailS}, {logOnly, &rep.OpenLogOnlyS}} {
		if _, err := os.Stat(o.dir); errors.Is(err, os.ErrNotExist) {
			continue
		}
		start := time.Now()
		db, err := tidemark.Open(o.dir, nil)
		if err != nil {
			return rep, fmt.Errorf("open %s: %w", o.dir, err)
		}
		*o.dst = time.Since(start).Seconds()
		say("open %s: %.2f s (%+v)", filepath.Base(o.dir), *o.dst, db.Recovery())
		_ = db.Close()
		os.RemoveAll(o.dir)
	}
	return rep, nil
}

// writeRounds measures one batch size: Rounds rounds, each writing
// Writes/Rounds memories through the bare log and then through the engine
// (one database growing across the rounds).
func writeRounds(ctx context.Context, cfg *EngineConfig, vecs *VectorSet, root string, b int, text string) (EngineRow, error) {
	row := EngineRow{Batch: b, Rounds: cfg.Rounds}
	gen := &memGen{rng: rand.New(rand.NewPCG(1, uint64(b))), vecs: vecs, text: text, keys: max(1, cfg.Writes/4), frac: cfg.KeyShare}
	walDir, dir := filepath.Join(root, fmt.Sprintf("wal-%d", b)), filepath.Join(root, fmt.Sprintf("engine-%d", b))
	defer os.RemoveAll(walDir)
	defer os.RemoveAll(dir)
	w, err := store.Open(walDir, nil)
	if err != nil {
		return row, err
	}
	defer w.Close()
	db, err := tidemark.Open(dir, nil)
	if err != nil {
		return row, err
	}
	defer db.Close()
	c, err := db.CreateCollection(ctx, "bench", &tidemark.CollectionOptions{Dim: cfg.Dim})
	if err != nil {
		return row, err
	}
	perRecord := cfg.Dim*4 + cfg.TextBytes + 64 // a memory's encoded size, about
	payload := make([]byte, perRecord*b)
	per := max(b, cfg.Writes/cfg.Rounds)
	var eng, wal, ratio []float64
	for range cfg.Rounds {
		var batches [][]tidemark.Memory
		for done := 0; done < per; done += b {
			bt := make([]tidemark.Memory, min(b, per-done))
			for i := range bt {
				if bt[i], err = gen.next(); err != nil {
					return row, err
				}
			}
			batches = append(batches, bt)
		}
		start := time.Now()
		for _, bt := range batches {
			if _, err := w.Append(ctx, payload[:perRecord*len(bt)]); err != nil {
				return row, err
			}
		}
		walRate := float64(per) / time.Since(start).Seconds()
		start = time.Now()
		for _, bt := range batches {
			if _, err := c.Put(ctx, bt); err != nil {
				return row, err
			}
		}
		engRate := float64(per) / time.Since(start).Seconds()
		eng, wal, ratio = append(eng, engRate), append(wal, walRate), append(ratio, engRate/walRate)
	}
	sorted := func(x []float64) []float64 { return slices.Sorted(slices.Values(x)) }
	row.EnginePerSec, row.WALPerSec, row.Ratio = median(sorted(eng)), median(sorted(wal)), median(sorted(ratio))
	row.RatioMin = slices.Min(ratio)
	return row, nil
}

// copyDir copies the regular files of src into a new dst: a crash image
// of an open database (every acknowledged record is fsynced).
func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes the report as JSON.
func (r *EngineReport) WriteJSON(w io.Writer) error {
	return writeIndented(w, r)
}

// WriteTable writes the report as a table.
func (r *EngineReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\nwrites of %d memories, dim %d, text %d B, fsync on\n", r.note, r.Writes, r.Dim, r.TextBytes)
	fmt.Fprintln(tw, "batch\tengine/s\tbare log/s\tengine ÷ log (median)\t(min)\t")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.3f\t%.3f\t\n", row.Batch, row.EnginePerSec, row.WALPerSec, row.Ratio, row.RatioMin)
	}
	if r.N > 0 {
		fmt.Fprintf(tw, "\n%d memories: load %.1f s (batches of 1000); snapshot %.0f MiB\n", r.N, r.LoadS, r.SnapshotMiB)
		fmt.Fprintf(tw, "open after Close (snapshot)\t%.2f s\t\n", r.OpenSnapshotS)
		fmt.Fprintf(tw, "open after crash (snapshot + %d records)\t%.2f s\t\n", r.Tail, r.OpenTailS)
		fmt.Fprintf(tw, "open after crash (log only: %d records replayed, indexes built)\t%.2f s\t\n", r.LogOnlyN, r.OpenLogOnlyS)
	}
	return tw.Flush()
}
