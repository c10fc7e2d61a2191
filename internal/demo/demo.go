// Package demo reproduces the Temporal RAG article's four before/after
// scenarios on its own corpus: naive cosine retrieval against temporal
// scoring, with every signal and the reason code of every removed document.
//
// The corpus and configuration are the article's, embedded from
// demo_corpus.json (a copy of ../shared/data/temporal-rag/demo_corpus.json);
// the scoring is temporal.ScorePool with the article preset, so the printed
// numbers are the reference math's, not a re-implementation's.
package demo

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/temporal"
)

//go:embed demo_corpus.json
var corpusJSON []byte

// Doc is one document of the article's corpus. Times are days before the
// query (negative is the future); nil is an open bound.
type Doc struct {
	ID                string   `json:"id"`
	Content           string   `json:"content"`
	AgeDays           float64  `json:"age_days"`
	ValidFromDaysAgo  *float64 `json:"valid_from_days_ago"`
	ValidUntilDaysAgo *float64 `json:"valid_until_days_ago"`
	DocType           string   `json:"doc_type"`
	Kind              string   `json:"kind"`
	SupersedesID      *string  `json:"supersedes_id"`
}

// Corpus is the article's corpus and its four queries.
type Corpus struct {
	Note    string   `json:"note"`
	Docs    []Doc    `json:"corpus"`
	Queries []string `json:"queries"`
}

// Load returns the embedded corpus.
func Load() (*Corpus, error) { return Parse(corpusJSON) }

// Parse decodes a corpus in demo_corpus.json's format and checks it.
func Parse(b []byte) (*Corpus, error) {
	var c Corpus
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("demo: corpus: %w", err)
	}
	if len(c.Docs) == 0 || len(c.Queries) == 0 {
		return nil, fmt.Errorf("demo: corpus has %d documents and %d queries", len(c.Docs), len(c.Queries))
	}
	for i := range c.Docs {
		if _, err := temporal.ParseKind(c.Docs[i].Kind); err != nil {
			return nil, fmt.Errorf("demo: document %q: %w", c.Docs[i].ID, err)
		}
	}
	return &c, nil
}

// Config is the demo's configuration; [ArticleConfig] is the article's.
type Config struct {
	// HalfLife in days for every document (the article's demo uses one).
	HalfLife float64
	// Pool is the number of cosine candidates handed to the temporal stage.
	Pool int
	// TopK is the number of results shown.
	TopK int
	// Params are the scoring parameters.
	Params temporal.Params
}

// ArticleConfig is demo.py's: half_life=60, temporal_weight=0.40,
// validity_boost=1.2, min_vector_score=0.15, event floor 0.20, a pool of
// 20 and top 3.
func ArticleConfig() Config {
	return Config{HalfLife: 60, Pool: 20, TopK: 3, Params: temporal.Preset(temporal.MethodArticle)}
}

// NaiveHit is one naive (cosine-only) result.
type NaiveHit struct {
	ID      string  `json:"id"`
	Sim     float64 `json:"sim"`
	AgeDays float64 `json:"age_days"`
	Expired bool    `json:"expired"`
}

// Hit is one temporally ranked result with its signals.
type Hit struct {
	ID      string           `json:"id"`
	Kind    string           `json:"kind"`
	Score   float64          `json:"score"`
	Signals temporal.Signals `json:"signals"`
	// Window and Why are the article's window label and reasoning trace.
	Window string `json:"window"`
	Why    string `json:"why"`
}

// RemovedDoc is a document masked before ranking.
type RemovedDoc struct {
	ID     string          `json:"id"`
	Reason temporal.Reason `json:"reason"`
}

// Scenario is one query's before/after comparison.
type Scenario struct {
	Query    string       `json:"query"`
	Naive    []NaiveHit   `json:"naive"`
	Temporal []Hit        `json:"temporal"`
	Masked   []RemovedDoc `json:"masked"`
	// Removed are naive results absent from the temporal results, and
	// Surfaced temporal results absent from the naive ones (the article's
	// "WHAT THE TEMPORAL LAYER CHANGED").
	Removed  []string `json:"removed"`
	Surfaced []string `json:"surfaced"`
}

// Run scores every query of the corpus both ways.
func Run(c *Corpus, cfg Config) ([]Scenario, error) {
	if cfg.Pool <= 0 || cfg.TopK <= 0 {
		return nil, fmt.Errorf("demo: pool %d and top-k %d must be positive", cfg.Pool, cfg.TopK)
	}
	emb, err := embed.NewBagOfWords(embed.ArticleDim)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(c.Docs))
	for i := range c.Docs {
		texts[i] = c.Docs[i].Content
	}
	if err := emb.Fit(texts); err != nil {
		return nil, err
	}
	vecs := make([][]float64, len(c.Docs))
	for i, t := range texts {
		vecs[i] = emb.Embed64(t)
	}
	out := make([]Scenario, 0, len(c.Queries))
	for _, q := range c.Queries {
		s, err := runQuery(c, cfg, q, emb.Embed64(q), vecs)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func runQuery(c *Corpus, cfg Config, query string, qv []float64, vecs [][]float64) (Scenario, error) {
	s := Scenario{Query: query}
	// The article's store: every document by cosine, descending, stable.
	order := make([]int, len(c.Docs))
	sims := make([]float64, len(c.Docs))
	for i := range order {
		order[i] = i
		sims[i] = dot(qv, vecs[i])
	}
	sort.SliceStable(order, func(a, b int) bool { return sims[order[a]] > sims[order[b]] })
	for _, i := range order[:min(cfg.TopK, len(order))] {
		d := &c.Docs[i]
		s.Naive = append(s.Naive, NaiveHit{ID: d.ID, Sim: sims[i], AgeDays: d.AgeDays,
			Expired: d.ValidUntilDaysAgo != nil && *d.ValidUntilDaysAgo > 0})
	}
	pool := order[:min(cfg.Pool, len(order))]
	cands := make([]temporal.Candidate, len(pool))
	for j, i := range pool {
		cands[j] = candidate(&c.Docs[i], uint64(i), sims[i], cfg.HalfLife)
	}
	res, err := temporal.ScorePool(temporal.At(0), cfg.Params, cands)
	if err != nil {
		return s, err
	}
	for _, r := range res.Removed {
		s.Masked = append(s.Masked, RemovedDoc{ID: c.Docs[r.ID].ID, Reason: r.Reason})
	}
	for _, r := range res.TopK(cfg.TopK) {
		d := &c.Docs[r.ID]
		s.Temporal = append(s.Temporal, Hit{ID: d.ID, Kind: strings.ToUpper(d.Kind), Score: r.Score,
			Signals: r.Signals, Window: window(d, r.Signals.State), Why: why(d, cfg.Params, r.Signals)})
	}
	naive := map[string]bool{}
	for _, n := range s.Naive {
		naive[n.ID] = true
	}
	kept := map[string]bool{}
	for _, h := range s.Temporal {
		kept[h.ID] = true
		if !naive[h.ID] {
			s.Surfaced = append(s.Surfaced, h.ID)
		}
	}
	for _, n := range s.Naive {
		if !kept[n.ID] {
			s.Removed = append(s.Removed, n.ID)
		}
	}
	return s, nil
}

// candidate places d on a time axis whose origin is the query time.
func candidate(d *Doc, id uint64, sim, halfLife float64) temporal.Candidate {
	kind, _ := temporal.ParseKind(d.Kind)
	w := temporal.Always
	if d.ValidFromDaysAgo != nil {
		w.From = -*d.ValidFromDaysAgo
	}
	if d.ValidUntilDaysAgo != nil {
		w.To = -*d.ValidUntilDaysAgo
	}
	return temporal.Candidate{
		ID: id, Sim: sim, Kind: kind, Status: temporal.Active,
		CreatedAt: -d.AgeDays, Valid: w, Recorded: temporal.Always,
		HalfLife: halfLife, ConfidenceFrom: -d.AgeDays,
	}
}

// window is the article's window_label.
func window(d *Doc, st temporal.ValidityState) string {
	switch {
	case st == temporal.Temporal && d.ValidUntilDaysAgo != nil:
		return fmt.Sprintf("%.0fh remaining", -*d.ValidUntilDaysAgo*24)
	case st == temporal.Temporal:
		return "active"
	case strings.EqualFold(d.Kind, "versioned") && d.SupersedesID != nil:
		return "supersedes " + *d.SupersedesID
	}
	return "open-ended"
}

// why is the article's one-line reasoning trace (_build_reason).
func why(d *Doc, p temporal.Params, s temporal.Signals) string {
	switch {
	case s.Penalty != 1:
		return fmt.Sprintf("Penalized: normalized vector score %.3f below relevance threshold %v", s.SimNorm, p.RelevanceThreshold)
	case s.State == temporal.Temporal && s.EventGated:
		return fmt.Sprintf("EVENT signal present but low query relevance (raw sim %.3f < %v) — temporal boost halved", s.Sim, p.EventFloor)
	case s.State == temporal.Temporal:
		return fmt.Sprintf("Active EVENT signal (%s) — overrides static sources", window(d, s.State))
	case strings.EqualFold(d.Kind, "versioned") && d.SupersedesID != nil:
		return "Latest version — supersedes " + *d.SupersedesID
	case strings.EqualFold(d.Kind, "versioned"):
		return "Latest version in sequence"
	case s.Decay > 0.7:
		return "Fresh, open-ended fact — high confidence"
	case s.Decay > 0.3:
		return "Aging but valid — use alongside fresher sources"
	}
	return "Stale — semantically relevant but low freshness weight"
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	if math.IsNaN(s) {
		return 0
	}
	return s
}
