package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/internal/evalengine"
)

// Quality benchmark names, in the order RunQuality runs them.
const (
	QualityPolicy   = "policy"   // SmartVector §9–10: versioned policies
	QualitySweep    = "sweep"    // SmartVector §10.4: contradiction-rate sweep
	QualityEvolving = "evolving" // MemStrata App. B: marker-free evolving facts
	QualityVDD      = "vdd"      // VDD §4.7: real version facts (React, Python, Node.js)
	QualityDrift    = "drift"    // VDD §4.2–4.6: drift scenarios
	QualitySplit    = "split"    // All-Mem Split: multi-fact memories, one fact updated
)

// QualityBenchmarks lists every quality benchmark.
var QualityBenchmarks = []string{QualityPolicy, QualitySweep, QualityEvolving, QualitySplit, QualityVDD, QualityDrift}

// QualityConfig configures RunQuality.
type QualityConfig struct {
	// Out, when set, receives every dataset as the eval contract's JSON
	// Lines (NAME.corpus.jsonl and NAME.queries.jsonl, so that `tidemark
	// eval` reproduces each number) and the report (report.md and
	// report.json). It is created if missing.
	Out string
	// Seed of the generated benchmarks (default 7, SmartVector's).
	Seed uint64
	// Only restricts the run to these benchmarks (default all of
	// QualityBenchmarks).
	Only []string
	// VDDData is the directory of the VDD fact sets (react_facts_v2.json,
	// python_facts.json, nodejs_facts.json, embeddings.json); default
	// ../shared/data/vdd. The vdd benchmark is skipped, with a note, when
	// it is missing.
	VDDData string
	// SplitData is the directory of the Split sets (dev/ and final/, each
	// with multifact.jsonl and narrative.jsonl); default
	// internal/heldout/split. The split benchmark is skipped, with a note,
	// when none is there.
	SplitData string
	// Progress, when set, receives a line per phase.
	Progress io.Writer
	// Subwords embeds every text-only dataset with character n-grams
	// beside the words (the engine's offline default), to compare with
	// the published runs, which use words alone.
	Subwords bool
}

// QualityReport is RunQuality's result: one section per benchmark run.
type QualityReport struct {
	Seed uint64 `json:"seed"`
	// Subwords says the text-only datasets were embedded with character
	// n-grams beside the words (QualityConfig.Subwords).
	Subwords bool            `json:"subwords,omitempty"`
	Policy   *PolicyReport   `json:"policy,omitempty"`
	Sweep    []SweepRow      `json:"sweep,omitempty"`
	Evolving *EvolvingReport `json:"evolving,omitempty"`
	Split    *SplitReport    `json:"split,omitempty"`
	VDD      *VDDReport      `json:"vdd,omitempty"`
	Drift    *DriftReport    `json:"drift,omitempty"`
	// Files are the datasets written under Out.
	Files []string `json:"files,omitempty"`
	// Notes say what was skipped and why.
	Notes []string `json:"notes,omitempty"`
}

// RunQuality runs the quality benchmarks: it generates each dataset, writes
// it out, evaluates every method on it through the engine (the same code
// path as `tidemark eval`), and reports our numbers beside the sources'.
func RunQuality(ctx context.Context, cfg QualityConfig) (QualityReport, error) {
	if cfg.Seed == 0 {
		cfg.Seed = 7
	}
	if len(cfg.Only) == 0 {
		cfg.Only = QualityBenchmarks
	}
	for _, b := range cfg.Only {
		if !slices.Contains(QualityBenchmarks, b) {
			return QualityReport{}, fmt.Errorf("bench: unknown quality benchmark %q (want some of %s)", b, strings.Join(QualityBenchmarks, ", "))
		}
	}
	if cfg.SplitData == "" {
		cfg.SplitData = filepath.Join("internal", "heldout", "split")
	}
	if cfg.VDDData == "" {
		cfg.VDDData = filepath.Join("..", "shared", "data", "vdd")
	}
	if cfg.Out != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return QualityReport{}, err
		}
	}
	q := &qualityRun{cfg: cfg, say: lines(cfg.Progress)}
	rep := QualityReport{Seed: cfg.Seed, Subwords: cfg.Subwords}
	var err error
	for _, b := range QualityBenchmarks {
		if !slices.Contains(cfg.Only, b) {
			continue
		}
		q.say("quality: %s", b)
		switch b {
		case QualityPolicy:
			var p PolicyReport
			if p, err = q.policy(ctx); err == nil {
				rep.Policy = &p
			}
		case QualitySweep:
			rep.Sweep, err = q.sweep(ctx)
		case QualityEvolving:
			var e EvolvingReport
			if e, err = q.evolving(ctx); err == nil {
				rep.Evolving = &e
			}
		case QualitySplit:
			var s SplitReport
			var skipped string
			if s, skipped, err = q.split(ctx); err == nil {
				if skipped != "" {
					rep.Notes = append(rep.Notes, skipped)
				} else {
					rep.Split = &s
				}
			}
		case QualityVDD:
			var v VDDReport
			var skipped string
			if v, skipped, err = q.vdd(ctx); err == nil {
				if skipped != "" {
					rep.Notes = append(rep.Notes, skipped)
				} else {
					rep.VDD = &v
				}
			}
		case QualityDrift:
			var d DriftReport
			if d, err = q.drift(ctx); err == nil {
				rep.Drift = &d
			}
		}
		if err != nil {
			return rep, fmt.Errorf("bench: quality %s: %w", b, err)
		}
	}
	rep.Files = q.files
	if cfg.Out != "" {
		if err := writeReportFiles(cfg.Out, &rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// qualityRun carries one RunQuality's configuration and what it wrote.
type qualityRun struct {
	cfg   QualityConfig
	say   func(format string, args ...any)
	files []string
}

// write saves a dataset under Out (when set) as NAME.corpus.jsonl and
// NAME.queries.jsonl.
func (q *qualityRun) write(ds Dataset) error {
	if q.cfg.Out == "" {
		return nil
	}
	base := filepath.Join(q.cfg.Out, ds.Name)
	if err := writeJSONL(base+".corpus.jsonl", ds.Corpus); err != nil {
		return err
	}
	if err := writeJSONL(base+".queries.jsonl", ds.Queries); err != nil {
		return err
	}
	q.files = append(q.files, base+".corpus.jsonl", base+".queries.jsonl")
	return nil
}

func writeJSONL[T any](path string, recs []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// evaluate runs the engine over a dataset exactly as `tidemark eval
// --corpus … --queries … --method M [--weights …] [--first-stage N]` does.
// evaluate is the package's evaluate with the run's embedding.
func (q *qualityRun) evaluate(ctx context.Context, ds Dataset, queries []eval.QueryLine, o evalengine.Options) (eval.Report, error) {
	o.Subwords = q.cfg.Subwords
	return evaluate(ctx, ds, queries, o)
}

func evaluate(ctx context.Context, ds Dataset, queries []eval.QueryLine, o evalengine.Options) (eval.Report, error) {
	o.NoSync = true
	s := evalengine.New(&o)
	defer s.Close()
	return eval.Run(ctx, s, ds.Corpus, queries, o.Method.String())
}

// writeReportFiles writes report.md and report.json under dir.
func writeReportFiles(dir string, rep *QualityReport) error {
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	var js strings.Builder
	if err := rep.WriteJSON(&js); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.json"), []byte(js.String()), 0o644)
}

// WriteJSON writes the report as one indented JSON object.
func (r *QualityReport) WriteJSON(w io.Writer) error {
	return writeIndented(w, r)
}

// WriteMarkdown writes one markdown table per benchmark, the sources'
// published numbers beside ours.
func (r *QualityReport) WriteMarkdown(w io.Writer) error {
	b := &mdWriter{w: w}
	b.printf("# tidemark quality benchmarks (seed %d)\n\n", r.Seed)
	if r.Subwords {
		b.printf("Text embedded with words and character n-grams (`--subwords`, the engine's offline default); the published runs use words alone.\n\n")
	}
	if r.Policy != nil {
		r.Policy.markdown(b)
	}
	if r.Sweep != nil {
		sweepMarkdown(b, r.Sweep)
	}
	if r.Evolving != nil {
		r.Evolving.markdown(b)
	}
	if r.Split != nil {
		r.Split.markdown(b)
	}
	if r.VDD != nil {
		r.VDD.markdown(b)
	}
	if r.Drift != nil {
		r.Drift.markdown(b)
	}
	for _, n := range r.Notes {
		b.printf("- note: %s\n", n)
	}
	return b.err
}

// mdWriter keeps the first write error.
type mdWriter struct {
	w   io.Writer
	err error
}

func (b *mdWriter) printf(format string, args ...any) {
	if b.err == nil {
		_, b.err = fmt.Fprintf(b.w, format, args...)
	}
}

// row prints one markdown table row.
func (b *mdWriter) row(cells ...string) {
	b.printf("| %s |\n", strings.Join(cells, " | "))
}

// header prints a table header and its rule.
func (b *mdWriter) header(cells ...string) {
	b.row(cells...)
	rule := make([]string, len(cells))
	for i := range rule {
		rule[i] = "---"
	}
	b.row(rule...)
}

// pct formats a fraction as a percentage with one decimal; NaN (no paper
// number) is "—".
func pct(x float64) string {
	if x != x {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// num formats x with three decimals; NaN is "—".
func num(x float64) string {
	if x != x {
		return "—"
	}
	return fmt.Sprintf("%.3f", x)
}
