package server

import (
	"net/http"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
)

// The memory endpoints: put, get, history (of a memory and of a fact key)
// and feedback.

// maxBatch is the most memories one upsert request may carry.
const maxBatch = 10000

// putMemories answers POST /v1/collections/{c}/memories.
func (s *Server) putMemories(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	var req api.PutRequest
	if err := decodePut(r, &req); err != nil {
		return err
	}
	if len(req.Memories) == 0 || len(req.Memories) > maxBatch {
		return errf(400, api.CodeInvalidArgument, "memories: want 1…%d, got %d", maxBatch, len(req.Memories))
	}
	ms := make([]tidemark.Memory, len(req.Memories))
	for i := range req.Memories {
		ms[i] = engineMemory(&req.Memories[i])
	}
	start := time.Now()
	res, err := c.Put(r.Context(), ms)
	if err != nil {
		return err
	}
	s.metrics.write("put", start)
	return s.writeDone(w, 200, api.PutResponse{Results: wirePutResults(res)})
}

// getMemory answers GET /v1/collections/{c}/memories/{id}.
func (s *Server) getMemory(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	m, err := c.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.writeJSON(w, 200, wireMemory(m))
}

// retractMemory answers DELETE /v1/collections/{c}/memories/{id}: a
// retraction, or with ?purge=true an erasure, in the token's name.
func (s *Server) retractMemory(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	var purge bool
	switch p := r.URL.Query().Get("purge"); p {
	case "", "false":
	case "true":
		purge = true
	default:
		return errf(400, api.CodeInvalidArgument, "purge: want true or false, got %q", p)
	}
	res, err := c.Retract(r.Context(), r.PathValue("id"), &tidemark.RetractOptions{By: t.Name, Purge: purge})
	if err != nil {
		return err
	}
	return s.writeDone(w, 200, api.RetractResponse{IDs: res.IDs, Purged: purge, Restored: res.Restored, Unchanged: res.Unchanged})
}

// memoryHistory answers GET /v1/collections/{c}/memories/{id}/history.
func (s *Server) memoryHistory(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	h, err := c.History(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.writeJSON(w, 200, api.Versions{Versions: wireMemories(h)})
}

// factHistory answers GET /v1/collections/{c}/facts?subject=…&relation=….
func (s *Server) factHistory(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	h, err := c.FactHistory(r.Context(), q.Get("subject"), q.Get("relation"))
	if err != nil {
		return err
	}
	return s.writeJSON(w, 200, api.Versions{Versions: wireMemories(h)})
}

// feedback answers POST /v1/collections/{c}/feedback.
func (s *Server) feedback(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	var req api.FeedbackRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	// The token is the feedback source: one client cannot inflate a
	// memory past the collection's limits.
	if err := c.FeedbackFrom(r.Context(), req.ID, req.Positive, t.Name); err != nil {
		return err
	}
	return s.writeDone(w, 200, api.FeedbackResponse{Counted: true})
}

// tp is a time on the wire: nil for the zero time.
func tp(t time.Time) *api.Time { return api.At(t) }

// tv is a time from the wire: the zero time for nil.
func tv(t *api.Time) time.Time { return t.Get() }

// engineMemory is the memory a client wrote (the fields a caller may
// set; the server-filled ones are ignored).
func engineMemory(m *api.Memory) tidemark.Memory {
	return tidemark.Memory{ID: m.ID, Text: m.Text, Vector: m.Vector, Kind: m.Kind, Source: m.Source, Profile: m.Profile,
		DocID: m.DocID, Version: m.Version, Chunk: m.Chunk, Subject: m.Subject, Relation: m.Relation, Object: m.Object,
		DependsOn: m.DependsOn, Access: m.Access, Positive: m.Positive, Negative: m.Negative,
		ValidFrom: tv(m.ValidFrom), ValidTo: tv(m.ValidTo), RecordedAt: tv(m.RecordedAt), Created: tv(m.Created),
		IfRevision: m.IfVersion, Metadata: m.Metadata}
}

// wireMemory is a stored memory on the wire.
func wireMemory(m tidemark.Memory) api.Memory {
	st, vis := m.Status, m.Visible
	return api.Memory{ID: m.ID, Text: m.Text, Vector: m.Vector, Kind: m.Kind, Source: m.Source, Profile: m.Profile,
		DocID: m.DocID, Version: m.Version, Chunk: m.Chunk, Subject: m.Subject, Relation: m.Relation, Object: m.Object,
		DependsOn: m.DependsOn, Access: m.Access, Positive: m.Positive, Negative: m.Negative,
		ValidFrom: tp(m.ValidFrom), ValidTo: tp(m.ValidTo), RecordedAt: tp(m.RecordedAt), Created: tp(m.Created),
		Status: &st, Visible: &vis, SupersededBy: m.SupersededBy, Supersedes: m.Supersedes, Contradicts: m.Contradicts,
		KeyRule: m.KeyRule, KeyFrom: m.KeyFrom, Penalty: m.Penalty, ContradictedBy: m.ContradictedBy,
		SplitInto: m.SplitInto, SplitFrom: m.SplitFrom, SplitRule: m.SplitRule,
		Metadata: m.Metadata, Revision: m.Revision, RetractedAt: tp(m.RetractedAt), RetractedBy: m.RetractedBy, Purged: m.Purged}
}

// wireMemories is a list of versions on the wire (never null).
func wireMemories(h []tidemark.Memory) []api.Memory {
	out := make([]api.Memory, len(h))
	for i := range h {
		out[i] = wireMemory(h[i])
	}
	return out
}

// wirePutResults is what a put did, on the wire.
func wirePutResults(res []tidemark.PutResult) []api.PutResult {
	if res == nil {
		return nil
	}
	out := make([]api.PutResult, len(res))
	for i, p := range res {
		out[i] = api.PutResult{ID: p.ID, Outcome: api.Outcome(p.Outcome.String()), Into: p.Into, Superseded: p.Superseded, SupersededBy: p.SupersededBy,
			Split: p.Split}
	}
	return out
}
