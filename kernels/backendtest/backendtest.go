// Package backendtest is the test body every implementation of
// kernels.Backend runs, in the manner of testing/fstest: a backend's own
// test calls Run with it, and Run checks it against the float64 reference
// (temporal.ScorePool) and against the contract of kernels.Backend.
//
//	func TestBackend(t *testing.T) {
//		be := newMyBackend()
//		backendtest.Run(t, be, backendtest.Options{SimErr: 1e-6})
//	}
//
// Run checks every method and preset at odd and real embedding dimensions;
// reasons, stats and scores against the reference; that masked candidates
// are never returned; TopK against a full sort of Score (with ties);
// ScoreMany against the reference per query (independent and shared time
// contexts, gates, event gates); the sentinel errors for bad input; reads
// and writes confined to guard-padded buffers; cancellation; concurrent
// calls; and the held confidence of static memories.
package backendtest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tidemark/tidemark/internal/unitvec"
	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/kernels/internal/testgen"
	"github.com/tidemark/tidemark/temporal"
)

// Options adapt Run to a backend. The zero value runs every check at full
// size with the CPU backend's error bound.
type Options struct {
	// SimErr is the backend's documented bound on the absolute error of
	// the cosine similarity it computes for a unit query and a stored row,
	// against the similarity computed in float64 from the same float32
	// values. It bounds Hit.Sim, and through the score tolerance every
	// score (min–max normalised similarities divide it by the pool's
	// spread). 0 means the CPU backend's 5.5e-7, about twice the worst
	// error of package simd's float32 dot products measured at
	// d = 33…1536.
	SimErr float64
	// Dims, when non-empty, replaces the dimensions of every sweep over
	// dimensions (ScoreMatchesReference, TopKMatchesReference,
	// ScoreManyMatchesTopK, GuardPadding). Empty, ScoreMatchesReference
	// runs 1…33, 67, 384, 768, 777, 1024 and 1536, and the others their own
	// subsets chosen around the SIMD loop tails.
	Dims []int
	// Rows, when positive, caps the number of rows of every batch the
	// checks build, so that a slow backend (an emulated device, whose
	// every call costs milliseconds) runs the same checks on smaller
	// inputs; values below 64 count as 64. 0 builds batches of up to 4000
	// rows. The cancellation check's batch of 8192 rows is never capped: a
	// backend that honours cancellation does no work on it.
	Rows int
	// Concurrency is the number of goroutines ConcurrentCalls runs at once,
	// each making 20 calls; 0 means 8.
	Concurrency int
}

// cpuSimErr is Options.SimErr's default.
const cpuSimErr = 5.5e-7

// minRows is the least Options.Rows caps a batch to.
const minRows = 64

// suite is one Run: the backend and its resolved options.
type suite struct {
	be kernels.Backend
	o  Options
}

// Run runs the shared backend test body on be, each check a subtest named
// after what it checks. Every call uses a fresh context; be must be safe
// for concurrent use. A backend must check its context at least once per
// call on a batch of several thousand rows (the contract says "between
// chunks of work"); it may finish a call on a tiny batch under a
// cancelled context.
func Run(t *testing.T, be kernels.Backend, o Options) {
	if be == nil {
		t.Fatal("backendtest: nil backend")
	}
	if o.SimErr <= 0 {
		o.SimErr = cpuSimErr
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	s := &suite{be: be, o: o}
	t.Run("ScoreMatchesReference", s.scoreMatchesReference)
	t.Run("TopKMatchesReference", s.topKMatchesReference)
	t.Run("TopKEqualsFullSort", s.topKEqualsFullSort)
	t.Run("ScoreManyMatchesTopK", s.scoreManyMatchesTopK)
	t.Run("RejectsBadInput", s.rejectsBadInput)
	t.Run("Cancellation", s.cancellation)
	t.Run("GuardPadding", s.guardPadding)
	t.Run("ConcurrentCalls", s.concurrentCalls)
	t.Run("StaticConfidenceHeld", s.staticConfidenceHeld)
}

// dims is the sweep def unless Options.Dims replaces it.
func (s *suite) dims(def []int) []int {
	if len(s.o.Dims) > 0 {
		return s.o.Dims
	}
	return def
}

// rows is n capped by Options.Rows.
func (s *suite) rows(n int) int {
	if s.o.Rows <= 0 {
		return n
	}
	return min(n, max(s.o.Rows, minRows))
}

// RandomBatch builds a batch of n random candidates of dimension dim in
// groups drift groups, with metadata that exercises every mask and
// signal; about a quarter are near-copies of q so that scores spread.
func RandomBatch(t testing.TB, r *rand.Rand, n, dim, groups int, q []float32) *kernels.Batch {
	t.Helper()
	return testgen.Batch(t, r, n, dim, groups, q, kernels.NewBatch, (*kernels.Batch).Append)
}

// RandomQuery returns a random query of dimension dim: now, as of a past
// valid or transaction time, or over a time range, sometimes with kind and
// status filters, with a drift λ for each of groups groups.
func RandomQuery(r *rand.Rand, dim, groups int) kernels.Query {
	v, tm, lambdas := testgen.Query(r, dim, groups)
	return kernels.Query{Vector: v, Time: tm, GroupLambda: lambdas}
}

// reference scores the batch with temporal.ScorePool, the similarities
// computed in float64 from the stored float32 vectors, and returns the
// result and the score of every kept candidate by id.
func reference(t testing.TB, b *kernels.Batch, q *kernels.Query, p *temporal.Params) (temporal.Result, map[uint64]float64) {
	t.Helper()
	qn := make([]float32, b.Dim)
	if pr, _ := unitvec.Normalize(q.Vector, qn); pr != unitvec.OK {
		t.Fatalf("reference: query vector cannot be normalised (%v)", pr)
	}
	cands := make([]temporal.Candidate, b.Len())
	for i := range cands {
		var dot float64
		row := b.Vectors[i*b.Dim : (i+1)*b.Dim]
		for j, x := range row {
			dot += float64(x) * float64(qn[j])
		}
		lambda := 0.0
		if p.AdaptiveDecay {
			lambda = q.GroupLambda[b.Group[i]]
		}
		cands[i] = b.Candidate(i, dot, lambda)
	}
	res, err := temporal.ScorePool(q.Time, *p, cands)
	if err != nil {
		t.Fatal(err)
	}
	scores := map[uint64]float64{}
	for _, s := range res.Ranked {
		scores[s.ID] = s.Score
	}
	return res, scores
}

// scoreTol is the bound for one score. Min–max normalisation of the
// similarities (the article's vector_score) divides their error serr by
// the pool's spread, so a pool whose similarities span 0.004 turns a 2e-7
// cosine error into 5e-5: that term is added for NormalizeSim.
func scoreTol(want float64, p *temporal.Params, ref temporal.Result, serr float64) float64 {
	tol := 1e-5 * math.Max(math.Abs(want), 0.05)
	if p.NormalizeSim && len(ref.Ranked) > 1 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range ref.Ranked {
			lo, hi = math.Min(lo, s.Signals.Sim), math.Max(hi, s.Signals.Sim)
		}
		if hi > lo {
			tol += p.Weights.Sim * 2 * serr / (hi - lo)
		}
	}
	return tol
}

// less is the ranking order of hits, temporal.Less: higher score, then
// lower id.
func less(a, b kernels.Hit) bool {
	return temporal.Less(temporal.Scored{ID: a.ID, Score: a.Score}, temporal.Scored{ID: b.ID, Score: b.Score})
}

// checkTopK verifies hits against the reference: every hit was kept, has
// the reference's score and cosine, appears once and in order, and no kept
// candidate scoring clearly better was left out.
func (s *suite) checkTopK(t *testing.T, what string, hits []kernels.Hit, k int, p *temporal.Params, ref temporal.Result, want map[uint64]float64) {
	t.Helper()
	serr := s.o.SimErr
	wantN := min(k, len(ref.Ranked))
	if len(hits) != wantN {
		t.Fatalf("%s: %d hits, want %d", what, len(hits), wantN)
	}
	seen := map[uint64]bool{}
	refSim := map[uint64]float64{}
	for _, s := range ref.Ranked {
		refSim[s.ID] = s.Signals.Sim
	}
	for i, h := range hits {
		w, kept := want[h.ID]
		if !kept {
			t.Fatalf("%s: hit %d (id %d) was masked or unknown", what, i, h.ID)
		}
		if ws := refSim[h.ID]; math.Abs(h.Sim-ws) > serr {
			t.Errorf("%s: id %d cosine %.9f, reference %.9f", what, h.ID, h.Sim, ws)
		}
		if seen[h.ID] {
			t.Fatalf("%s: id %d twice", what, h.ID)
		}
		seen[h.ID] = true
		if math.Abs(h.Score-w) > scoreTol(w, p, ref, serr) {
			t.Errorf("%s: id %d score %.9f, reference %.9f", what, h.ID, h.Score, w)
		}
		if i > 0 && less(h, hits[i-1]) {
			t.Errorf("%s: hits out of order at %d", what, i)
		}
	}
	if wantN > 0 {
		worst := hits[wantN-1].Score
		for _, s := range ref.Ranked {
			if !seen[s.ID] && s.Score > worst+scoreTol(worst, p, ref, serr) {
				t.Errorf("%s: missed id %d with score %.9f > %.9f", what, s.ID, s.Score, worst)
			}
		}
	}
}

// topKParams are testgen.PresetsAndHolds, then the relevance-gated combine
// with the pool-normalised similarity and the semantic penalty, and with
// unmasked out-of-window candidates: the pruning bound must hold for each.
func topKParams() []temporal.Params {
	out := testgen.PresetsAndHolds()
	g := temporal.Preset(temporal.MethodTidemark)
	g.NormalizeSim, g.RelevanceThreshold, g.RelevancePenalty = true, 0.15, 0.3
	out = append(out, g)
	g = temporal.Preset(temporal.MethodTidemark)
	g.MaskExpired, g.OutOfWindow, g.Weights = false, 0.5, temporal.Weights{Sim: 0.2, Time: 0.5, Conf: 0.4, Rel: 0.3}
	return append(out, g)
}
