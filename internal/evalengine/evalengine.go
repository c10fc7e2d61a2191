// Package evalengine runs the evaluation contract (package eval) on the
// engine: a Searcher that ingests a corpus into a tidemark database
// through Put and answers queries with Collection.Search, so that
// `tidemark eval --engine` and the quality benchmarks measure the product
// rather than the reference.
package evalengine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/temporal"
)

// Options configure a Searcher. The zero value is the engine's defaults.
type Options struct {
	// Method is the scoring preset (default temporal.MethodTidemark).
	Method temporal.Method
	// FirstStage, when > 0, scores only that many memories with the
	// highest cosine per query (SearchRequest.FirstStage; SmartVector
	// §9.2's K = 8).
	FirstStage int
	// Weights, when set, replace the method's signal weights (SmartVector
	// §10.3's tuned weights): every search passes the preset with these
	// weights as SearchRequest.Params.
	Weights *temporal.Weights
	// HalfLife is the half-life in days of memories without a profile
	// (default 30).
	HalfLife float64
	// Dir is the database directory; "" makes a temporary one that Close
	// removes.
	Dir string
	// Plan forces a search plan (default tidemark.PlanAuto).
	Plan tidemark.Plan
	// ExactThreshold and Overfetch are the collection's (default the
	// engine's).
	ExactThreshold, Overfetch int
	// NoSync turns fsync off (the evaluation does not need durability).
	NoSync bool
	// BatchSize is the number of corpus lines per Put (default 1000).
	BatchSize int
	// StaticDecay turns the drift detectors off (the reference memory has
	// none).
	StaticDecay bool
	// Subwords embeds the corpus and queries with character n-grams beside
	// the words (eval.EmbedCorpusWith).
	Subwords bool
	// Keys is the collection's key policy (default tidemark.KeysAuto: a
	// corpus without keys is keyed at ingest, as the engine does).
	Keys tidemark.KeyPolicy
	// Clock is the database's clock (default time.Now): the transaction
	// time of the writes, which decides what is on the visible surface.
	Clock func() time.Time
	// Postgres, when set, is the URL of a PostgreSQL database that keeps
	// the ledger (tidemark.OpenPostgres) instead of a local log in Dir.
	Postgres string
}

// Searcher is an eval.Searcher over a tidemark database.
type Searcher struct {
	opts Options
	dir  string
	temp bool
	db   *tidemark.DB
	coll *tidemark.Collection
	emb  *embed.Hashing
	dim  int
	view bool // a Reweighted copy: shares the database, does not own it
}

var _ eval.Searcher = (*Searcher)(nil)

// New returns a Searcher; Ingest opens its database.
func New(opts *Options) *Searcher {
	s := &Searcher{}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.BatchSize <= 0 {
		s.opts.BatchSize = 1000
	}
	return s
}

// Collection is the collection Ingest wrote (nil before).
func (s *Searcher) Collection() *tidemark.Collection { return s.coll }

// Ingest writes the corpus, in file order, into a new collection "eval".
// The vectors are eval.EmbedCorpus's, as for eval.Memory. A line without
// recorded_at is recorded at eval.FileOrderTime of its index, and its age
// runs from recorded_at, else valid_from, else that time — the reference
// memory's rules — so the engine and the reference see the same ledger.
func (s *Searcher) Ingest(ctx context.Context, corpus []eval.CorpusLine) error {
	if s.db != nil || s.view {
		return errors.New("evalengine: Ingest called twice")
	}
	if err := eval.ValidateCorpus(corpus); err != nil {
		return err
	}
	vecs, emb, dim, err := eval.EmbedCorpusWith(ctx, corpus, s.opts.Subwords)
	if err != nil {
		return err
	}
	s.emb, s.dim = emb, dim
	s.dir = s.opts.Dir
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "tidemark-eval-"); err != nil {
			return err
		}
		s.temp = true
	}
	if s.db, err = s.open(ctx); err != nil {
		return err
	}
	if s.coll, err = s.db.CreateCollection(ctx, "eval", &tidemark.CollectionOptions{Dim: dim, Method: s.opts.Method,
		HalfLife: s.opts.HalfLife, Epoch: time.Unix(0, 0), ExactThreshold: s.opts.ExactThreshold, Overfetch: s.opts.Overfetch, StaticDecay: s.opts.StaticDecay,
		Keys: s.opts.Keys}); err != nil {
		return err
	}
	batch := make([]tidemark.Memory, 0, s.opts.BatchSize)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := s.coll.Put(ctx, batch)
		batch = batch[:0]
		return err
	}
	for i := range corpus {
		batch = append(batch, MemoryOf(i, &corpus[i], vecs[i]))
		if len(batch) == s.opts.BatchSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

func (s *Searcher) open(ctx context.Context) (*tidemark.DB, error) {
	o := &tidemark.Options{NoSync: s.opts.NoSync, CheckpointRecords: -1, CheckpointBytes: -1, Clock: s.opts.Clock}
	if s.opts.Postgres != "" {
		return tidemark.OpenPostgres(ctx, s.opts.Postgres, s.dir, o)
	}
	return tidemark.Open(s.dir, o)
}

// Replica opens a second node of s's PostgreSQL database (Options.Postgres)
// and returns a Searcher over the ingested collection as that node sees it
// once it has applied everything s wrote. Close it before s.
func (s *Searcher) Replica(ctx context.Context) (*Searcher, error) {
	if s.opts.Postgres == "" || s.db == nil {
		return nil, errors.New("evalengine: Replica needs an ingested Searcher with Options.Postgres")
	}
	r := *s
	r.temp, r.view = false, false
	var err error
	if r.dir, err = os.MkdirTemp("", "tidemark-eval-replica-"); err != nil {
		return nil, err
	}
	r.temp = true
	if r.db, err = r.open(ctx); err != nil {
		os.RemoveAll(r.dir)
		return nil, err
	}
	if err := r.db.WaitApplied(ctx, s.db.Seq()); err != nil {
		r.Close()
		return nil, err
	}
	if r.coll, err = r.db.Collection("eval"); err != nil {
		r.Close()
		return nil, err
	}
	return &r, nil
}

// MemoryOf is the memory Ingest writes for corpus line i with vector vec:
// the reference memory's times (eval.FileOrderTime when the line has no
// recorded_at) and its dependencies without self-loops or repeats.
func MemoryOf(i int, l *eval.CorpusLine, vec []float32) tidemark.Memory {
	m := tidemark.Memory{ID: l.ID, Text: l.Text, Vector: vec, Kind: l.Kind, Source: l.Source, Profile: l.Profile,
		DocID: l.DocID, Version: l.Version, Chunk: l.Chunk, Subject: l.Subject, Relation: l.Relation, Object: l.Object,
		Access: int64(l.Access), Positive: int64(l.Positive), Negative: int64(l.Negative)}
	for _, d := range l.DependsOn {
		if d != l.ID && !slices.Contains(m.DependsOn, d) {
			m.DependsOn = append(m.DependsOn, d)
		}
	}
	at := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	}
	m.ValidFrom, m.ValidTo = at(l.ValidFrom), at(l.ValidTo)
	m.RecordedAt = eval.FileOrderTime(i)
	m.Created = m.RecordedAt
	switch {
	case l.RecordedAt != nil:
		m.RecordedAt, m.Created = *l.RecordedAt, *l.RecordedAt
	case l.ValidFrom != nil:
		m.Created = *l.ValidFrom
	}
	return m
}

// Search answers one query: the top k ids and the live confidence of the
// first.
func (s *Searcher) Search(ctx context.Context, q eval.QueryLine) (eval.Ranking, error) {
	if err := q.Validate(); err != nil {
		return eval.Ranking{}, err
	}
	if s.coll == nil {
		return eval.Ranking{}, eval.ErrNotIngested
	}
	qv, err := eval.EmbedQuery(ctx, s.emb, s.dim, &q)
	if err != nil {
		return eval.Ranking{}, err
	}
	req := &tidemark.SearchRequest{Vector: qv, K: q.TopK(), Now: q.Now, Plan: s.opts.Plan, FirstStage: s.opts.FirstStage}
	if s.opts.Weights != nil {
		p := temporal.Preset(s.opts.Method)
		p.Weights = *s.opts.Weights
		req.Params = &p
	}
	if q.AsOf != nil {
		req.AsOf = *q.AsOf
	}
	res, err := s.coll.Search(ctx, req)
	if err != nil {
		return eval.Ranking{}, fmt.Errorf("query %q: %w", q.ID, err)
	}
	var r eval.Ranking
	for _, h := range res.Hits {
		r.IDs = append(r.IDs, h.ID)
	}
	if len(res.Hits) > 0 {
		r.Confidence = res.Hits[0].Confidence
	}
	return r, nil
}

// Reweighted returns a Searcher over s's ingested collection whose searches
// use the weights w (as Options.Weights). It shares s's database: calling
// Ingest on it is an error, closing it does nothing, and it must not be
// used after s is closed.
func (s *Searcher) Reweighted(w temporal.Weights) *Searcher {
	v := *s
	v.opts.Weights = &w
	v.view = true
	return &v
}

// Close closes the database and removes a temporary directory.
func (s *Searcher) Close() error {
	if s.view {
		return nil
	}
	var err error
	if s.db != nil {
		err = s.db.Close()
	}
	if s.temp {
		err = errors.Join(err, os.RemoveAll(s.dir))
	}
	return err
}
