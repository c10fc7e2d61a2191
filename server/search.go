package server

import (
	"net/http"
	"strings"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
	"github.com/tidemark/tidemark/temporal"
)

// The search endpoints: search, context assembly (a search whose hits
// become an annotated block) and rescoring of foreign candidates.

// search answers POST /v1/collections/{c}/search.
func (s *Server) search(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	var req api.SearchRequest
	if err := decodeSearch(r, &req); err != nil {
		return err
	}
	if err := s.checkK(req.K); err != nil {
		return err
	}
	sr, err := searchRequest(&req, c.Options().Method)
	if err != nil {
		return err
	}
	res, err := c.Search(r.Context(), sr)
	if err != nil {
		return err
	}
	s.metrics.plans.WithLabelValues(res.Plan.String()).Inc()
	s.metrics.candidates.Add(float64(res.Candidates))
	return s.writeJSON(w, 200, wireResult(res))
}

// assembleContext answers POST /v1/collections/{c}/context: JSON, or the
// block's text alone with text_only.
func (s *Server) assembleContext(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	var req api.ContextRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := s.checkK(req.K); err != nil {
		return err
	}
	sr, err := searchRequest(&req.SearchRequest, c.Options().Method)
	if err != nil {
		return err
	}
	blk, err := c.AssembleContext(r.Context(), sr, &tidemark.ContextOptions{TokenBudget: req.TokenBudget})
	if err != nil {
		return err
	}
	if req.TextOnly {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(blk.Text()))
		return nil
	}
	return s.writeJSON(w, 200, api.ContextResponse{Context: wireContext(blk), Text: blk.Text()})
}

// rescore answers POST /v1/rescore (no collection).
func (s *Server) rescore(w http.ResponseWriter, r *http.Request, t *Token) error {
	var req api.RescoreRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := s.checkK(req.K); err != nil {
		return err
	}
	rr := &tidemark.RescoreRequest{Vector: req.Vector, K: req.K, Now: tv(req.Now), AsOf: tv(req.AsOf)}
	if req.Method != "" {
		m, err := temporal.ParseMethod(req.Method)
		if err != nil {
			return errf(400, api.CodeInvalidArgument, "%v", err)
		}
		p := temporal.Preset(m)
		rr.Params = &p
	}
	for _, c := range req.Candidates {
		rc := tidemark.RescoreCandidate{Memory: engineMemory(&c.Memory)}
		if c.Sim != nil {
			rc.Sim, rc.HasSim = *c.Sim, true
		}
		rr.Candidates = append(rr.Candidates, rc)
	}
	res, err := tidemark.Rescore(r.Context(), rr)
	if err != nil {
		return err
	}
	return s.writeJSON(w, 200, wireResult(res))
}

// searchRequest is req for the engine. collMethod is the collection's
// method: weights sent without a method replace its weights, as a request
// without weights or method searches with it.
func searchRequest(req *api.SearchRequest, collMethod temporal.Method) (*tidemark.SearchRequest, error) {
	sr := &tidemark.SearchRequest{Vector: req.Vector, Text: req.Text, K: req.K, Now: tv(req.Now), AsOf: tv(req.AsOf),
		AsOfTx: tv(req.AsOfTx), Kinds: temporal.KindsOf(req.Kinds...), Statuses: temporal.StatusesOf(req.Statuses...), Sources: req.Sources, Explain: req.Explain,
		MinScore: req.MinScore}
	if len(req.Filter) > 0 && string(req.Filter) != "null" {
		f, err := tidemark.ParseFilter(req.Filter)
		if err != nil {
			return nil, errf(400, api.CodeInvalidArgument, "filter: %v", strings.TrimPrefix(err.Error(), "tidemark: invalid input: filter: "))
		}
		sr.Filter = f
	}
	if req.Method != "" {
		m, err := temporal.ParseMethod(req.Method)
		if err != nil {
			return nil, errf(400, api.CodeInvalidArgument, "%v", err)
		}
		p := temporal.Preset(m)
		sr.Params = &p
	}
	if w := req.Weights; w != nil {
		if sr.Params == nil {
			p := temporal.Preset(collMethod)
			sr.Params = &p
		}
		sr.Params.Weights = temporal.Weights{Sim: w.Sim, Time: w.Temporal, Conf: w.Confidence, Rel: w.Relational}
	}
	if rg := req.Range; rg != nil {
		sr.Range = &temporal.TimeRange{From: tv(rg.From), To: tv(rg.To)}
	}
	if req.Plan != "" {
		var err error
		if sr.Plan, err = tidemark.ParsePlan(req.Plan); err != nil {
			return nil, err
		}
	}
	return sr, nil
}

// wireResult is a search or rescore answer on the wire.
func wireResult(r *tidemark.SearchResult) api.SearchResult {
	out := api.SearchResult{Hits: []api.Hit{}, Plan: r.Plan.String(), Candidates: r.Candidates, RemovedTotal: r.RemovedTotal}
	for _, h := range r.Hits {
		out.Hits = append(out.Hits, api.Hit{ID: h.ID, Score: h.Score, Cosine: h.Cosine, Confidence: h.Confidence, Memory: wireMemory(h.Memory), Signals: wireSignals(h.Signals)})
	}
	for _, x := range r.Removed {
		out.Removed = append(out.Removed, api.Removed{ID: x.ID, Reason: x.Reason})
	}
	return out
}

// wireContext is an assembled context block on the wire. ContextDoc
// converts field for field: a field added to the engine's type stops the
// build here until the wire type says what to do with it.
func wireContext(b *tidemark.ContextBlock) api.ContextBlock {
	out := api.ContextBlock{Warnings: b.Warnings, Tokens: b.Tokens, Budget: b.Budget, Omitted: b.Omitted, Deduplicated: b.Deduplicated}
	if b.Documents != nil {
		out.Documents = make([]api.ContextDoc, len(b.Documents))
		for i, d := range b.Documents {
			out.Documents[i] = api.ContextDoc(d)
		}
	}
	return out
}

// checkK refuses a k over the server's MaxK: the answer (hits with their
// memories, explanations) is built in memory before it is encoded, so the
// bound is on what a request may make the server hold.
func (s *Server) checkK(k int) error {
	if k > s.cfg.MaxK {
		return errf(http.StatusBadRequest, api.CodeInvalidArgument, "k = %d: this server answers at most %d hits per request", k, s.cfg.MaxK)
	}
	return nil
}

// wireSignals is a hit's signals on the wire.
func wireSignals(s *temporal.Signals) *api.Signals {
	if s == nil {
		return nil
	}
	return &api.Signals{Sim: s.Sim, SimNorm: s.SimNorm, AgeDays: s.Age, Decay: s.Decay, Recency: s.Recency, State: s.State,
		EventGated: s.EventGated, Temporal: s.Temporal, Confidence: s.Confidence, Relational: s.Relational, Penalty: s.Penalty}
}
