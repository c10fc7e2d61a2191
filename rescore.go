package tidemark

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/temporal"
)

// RescoreCandidate is one candidate that came from another vector store
// (Qdrant, Milvus, pgvector, …), with the metadata tidemark scores.
type RescoreCandidate struct {
	// Memory carries the candidate's id, kind, source, profile, windows,
	// times, counters and DependsOn (its degree); its Vector, when set, is
	// compared with the query. The engine-filled fields are ignored,
	// except Status.
	Memory Memory
	// Sim is the store's cosine similarity to the query, used when
	// Memory.Vector is nil (HasSim must then be true).
	Sim    float64
	HasSim bool
}

// RescoreRequest asks for tidemark's ranking of foreign candidates.
type RescoreRequest struct {
	// Vector is the query embedding; needed when a candidate has a vector.
	Vector     []float32
	Candidates []RescoreCandidate
	// K is the number of hits (0: every kept candidate, at most MaxK).
	K int
	// Params are the scoring parameters (default the tidemark preset).
	Params *temporal.Params
	// HalfLife is the half-life in days of a candidate without a profile
	// (default 30).
	HalfLife float64
	// Now, AsOf and AsOfTx are as in SearchRequest.
	Now, AsOf, AsOfTx time.Time
}

// MaxRescoreCandidates bounds one Rescore.
const MaxRescoreCandidates = kernels.MaxRescoreCandidates

// Rescore ranks candidates from another vector store by tidemark's fused
// score, without storing them: masks (a candidate outside its valid window
// at the query's time, or not recorded by its transaction time, is removed
// with a reason code), decay by profile, validity, confidence from the
// source's authority and the counters, the relational signal from
// DependsOn. Every hit carries its signals; its Score, Cosine and
// Confidence mean what they mean in a search (see Hit). Every input is
// validated first; nothing is scored if any is bad.
func Rescore(ctx context.Context, req *RescoreRequest) (*SearchResult, error) {
	in, err := prepareRescore(req)
	if err != nil {
		return nil, err
	}
	rr, err := kernels.Rescore(ctx, in.kernelRequest(req.Vector))
	if err != nil {
		return nil, mapKernelErr(err)
	}
	return in.result(req, &rr), nil
}

// RescoreMany is Rescore for many query embeddings over the same
// candidates, one result per vector, as if each were req.Vector (which
// must be nil). Every candidate needs a vector. The candidates are
// validated and packed once and every query's similarities come from one
// batched pass (kernels.RescoreMany), so a batch costs far less than its
// queries one by one: several phrasings of a question, or the questions
// of many users against one shortlist.
func RescoreMany(ctx context.Context, req *RescoreRequest, vectors [][]float32) ([]*SearchResult, error) {
	if req != nil && req.Vector != nil {
		return nil, fmt.Errorf("%w: RescoreMany takes its query vectors apart from RescoreRequest.Vector", ErrInvalid)
	}
	in, err := prepareRescore(req)
	if err != nil {
		return nil, err
	}
	rrs, err := kernels.RescoreMany(ctx, in.kernelRequest(nil), vectors)
	if err != nil {
		return nil, mapKernelErr(err)
	}
	out := make([]*SearchResult, len(rrs))
	for j := range rrs {
		out[j] = in.result(req, &rrs[j])
	}
	return out, nil
}

// rescoreInput is a validated RescoreRequest in the fused stage's terms.
type rescoreInput struct {
	cands  []kernels.RescoreCandidate
	tq     temporal.Query
	params temporal.Params
	k      int
}

func (in *rescoreInput) kernelRequest(query []float32) *kernels.RescoreRequest {
	return &kernels.RescoreRequest{Query: query, Candidates: in.cands, Time: in.tq, Params: in.params, K: in.k}
}

// prepareRescore validates req and converts its candidates and times.
func prepareRescore(req *RescoreRequest) (*rescoreInput, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: nil RescoreRequest", ErrInvalid)
	}
	n := len(req.Candidates)
	if n > MaxRescoreCandidates {
		return nil, fmt.Errorf("%w: %d candidates, at most %d", ErrTooLarge, n, MaxRescoreCandidates)
	}
	if req.K < 0 || req.K > MaxK {
		return nil, fmt.Errorf("%w: k = %d, want 0…%d", ErrInvalid, req.K, MaxK)
	}
	if !(req.HalfLife >= 0) || req.HalfLife > 1e9 {
		return nil, fmt.Errorf("%w: half-life %v", ErrInvalid, req.HalfLife)
	}
	halfLife := req.HalfLife
	if halfLife == 0 {
		halfLife = temporal.SmartVectorHalfLife
	}
	params := temporal.Preset(temporal.MethodTidemark)
	if req.Params != nil {
		params = *req.Params
	}
	params.AdaptiveDecay = false
	if err := params.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	now, at, tx, err := queryTimes(req.Now, req.AsOf, req.AsOfTx, time.Now)
	if err != nil {
		return nil, err
	}
	// The float32 clock of the fused stage starts at the query's day.
	epoch := days(now.UTC().Truncate(24*time.Hour), 0)
	rel := func(t time.Time, open float64) float64 {
		if t.IsZero() {
			return open
		}
		return float64(float32(days(t, 0) - epoch))
	}
	tq := temporal.Query{At: rel(at, 0), TxAt: rel(tx, 0)}
	cands := make([]kernels.RescoreCandidate, n)
	seen := make(map[string]bool, n)
	for i := range req.Candidates {
		rc := &req.Candidates[i]
		m := &rc.Memory
		if err := m.validate(DefaultMaxTextBytes); err != nil {
			return nil, fmt.Errorf("candidate %d (%q): %w", i, m.ID, err)
		}
		if seen[m.ID] {
			return nil, fmt.Errorf("%w: candidate %d: id %q appears twice", ErrInvalid, i, m.ID)
		}
		seen[m.ID] = true
		if _, err := m.Status.MarshalText(); err != nil {
			return nil, fmt.Errorf("%w: candidate %d: status %d is unknown", ErrInvalid, i, m.Status)
		}
		hl, floor := decayOf(m.Profile, m.Kind, halfLife)
		created := m.Created
		switch {
		case !created.IsZero():
		case !m.ValidFrom.IsZero():
			created = m.ValidFrom
		case !m.RecordedAt.IsZero():
			created = m.RecordedAt
		default:
			created = now
		}
		c := temporal.Candidate{ID: uint64(i), Kind: m.Kind, Status: m.Status,
			CreatedAt: rel(created, 0),
			Valid:     temporal.Window{From: rel(m.ValidFrom, -temporal.Open), To: rel(m.ValidTo, temporal.Open)},
			Recorded:  temporal.Window{From: rel(m.RecordedAt, -temporal.Open), To: temporal.Open},
			HalfLife:  hl, Floor: floor, Lambda: temporal.Lambda(hl),
			BaseConfidence: m.Source.Authority(), ConfidenceFrom: rel(created, 0),
			Access: float64(m.Access), Positive: float64(m.Positive), Negative: float64(m.Negative),
			Degree: float64(len(m.DependsOn))}
		cands[i] = kernels.RescoreCandidate{Vector: m.Vector, Sim: rc.Sim, HasSim: rc.HasSim, Meta: c}
	}
	return &rescoreInput{cands: cands, tq: tq, params: params, k: req.K}, nil
}

// result turns the fused stage's ranking into a SearchResult.
func (in *rescoreInput) result(req *RescoreRequest, rr *kernels.RescoreResult) *SearchResult {
	cands, tq, params, n := in.cands, in.tq, in.params, len(in.cands)
	res := &SearchResult{Plan: PlanExact, Candidates: n}
	shown := params.Confidence.Reported()
	for _, e := range rr.Ranked {
		m := req.Candidates[e.ID].Memory
		m.Vector = nil
		sig := e.Signals
		conf := temporal.LiveConfidence(shown, &cands[e.ID].Meta, tq.At)
		res.Hits = append(res.Hits, Hit{ID: m.ID, Score: e.PoolFree, Cosine: sig.Sim, Confidence: conf, Memory: m, Signals: &sig})
	}
	for _, r := range rr.Removed {
		res.addRemoved(req.Candidates[r.ID].Memory.ID, r.Reason)
	}
	return res
}

// mapKernelErr puts a fused-stage error under this package's sentinels.
func mapKernelErr(err error) error {
	switch {
	case errors.Is(err, kernels.ErrDimension):
		return fmt.Errorf("%w: %w", ErrDimension, err)
	case errors.Is(err, kernels.ErrNotFinite), errors.Is(err, kernels.ErrZeroVector):
		return fmt.Errorf("%w: %w", ErrNotFinite, err)
	case errors.Is(err, kernels.ErrInvalid):
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return err
}
