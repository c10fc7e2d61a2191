package server

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/temporal"
)

// MemoryJSON is a memory on the wire.
type MemoryJSON struct {
	ID         string          `json:"id"`
	Text       string          `json:"text,omitempty"`
	Vector     []float32       `json:"vector,omitempty"`
	Kind       temporal.Kind   `json:"kind,omitzero"`
	Source     temporal.Source `json:"source,omitzero"`
	Profile    string          `json:"profile,omitempty"`
	DocID      string          `json:"doc_id,omitempty"`
	Version    int             `json:"version,omitempty"`
	Chunk      int             `json:"chunk,omitempty"`
	Subject    string          `json:"subject,omitempty"`
	Relation   string          `json:"relation,omitempty"`
	Object     string          `json:"object,omitempty"`
	DependsOn  []string        `json:"depends_on,omitempty"`
	Access     int64           `json:"access,omitempty"`
	Positive   int64           `json:"positive,omitempty"`
	Negative   int64           `json:"negative,omitempty"`
	ValidFrom  *time.Time      `json:"valid_from,omitempty"`
	ValidTo    *time.Time      `json:"valid_to,omitempty"`
	RecordedAt *time.Time      `json:"recorded_at,omitempty"`
	Created    *time.Time      `json:"created,omitempty"`
	// Filled in by the server.
	Status       *temporal.Status `json:"status,omitempty"`
	Visible      *bool            `json:"visible,omitempty"`
	SupersededBy string           `json:"superseded_by,omitempty"`
	Supersedes   []string         `json:"supersedes,omitempty"`
	Contradicts  []string         `json:"contradicts,omitempty"`
	// KeyRule and KeyFrom say where a derived fact key came from
	// (tidemark.Memory.KeyRule); Penalty is the base confidence taken by
	// ripples and lost contradictions, ContradictedBy the memories that
	// won them.
	KeyRule        string   `json:"key_rule,omitempty"`
	KeyFrom        string   `json:"key_from,omitempty"`
	Penalty        float64  `json:"penalty,omitempty"`
	ContradictedBy []string `json:"contradicted_by,omitempty"`
}

func tp(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func tv(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func (m *MemoryJSON) memory() tidemark.Memory {
	return tidemark.Memory{ID: m.ID, Text: m.Text, Vector: m.Vector, Kind: m.Kind, Source: m.Source, Profile: m.Profile,
		DocID: m.DocID, Version: m.Version, Chunk: m.Chunk, Subject: m.Subject, Relation: m.Relation, Object: m.Object,
		DependsOn: m.DependsOn, Access: m.Access, Positive: m.Positive, Negative: m.Negative,
		ValidFrom: tv(m.ValidFrom), ValidTo: tv(m.ValidTo), RecordedAt: tv(m.RecordedAt), Created: tv(m.Created)}
}

func memoryJSON(m tidemark.Memory) MemoryJSON {
	st, vis := m.Status, m.Visible
	return MemoryJSON{ID: m.ID, Text: m.Text, Vector: m.Vector, Kind: m.Kind, Source: m.Source, Profile: m.Profile,
		DocID: m.DocID, Version: m.Version, Chunk: m.Chunk, Subject: m.Subject, Relation: m.Relation, Object: m.Object,
		DependsOn: m.DependsOn, Access: m.Access, Positive: m.Positive, Negative: m.Negative,
		ValidFrom: tp(m.ValidFrom), ValidTo: tp(m.ValidTo), RecordedAt: tp(m.RecordedAt), Created: tp(m.Created),
		Status: &st, Visible: &vis, SupersededBy: m.SupersededBy, Supersedes: m.Supersedes, Contradicts: m.Contradicts,
		KeyRule: m.KeyRule, KeyFrom: m.KeyFrom, Penalty: m.Penalty, ContradictedBy: m.ContradictedBy}
}

// CollectionJSON describes a collection.
type CollectionJSON struct {
	Name     string              `json:"name"`
	Dim      int                 `json:"dim"`
	Method   string              `json:"method,omitempty"`
	Embedder string              `json:"embedder,omitempty"`
	Remote   *RemoteEmbedderJSON `json:"remote,omitempty"`
	Keys     tidemark.KeyPolicy  `json:"keys"`
	Stored   int                 `json:"stored"`
	Visible  int                 `json:"visible"`
}

// CreateCollectionJSON creates a collection.
type CreateCollectionJSON struct {
	Dim      int    `json:"dim"`
	Method   string `json:"method,omitempty"`
	Embedder string `json:"embedder,omitempty"`
	// Remote configures the "openai" and "ollama" embedders.
	Remote   *RemoteEmbedderJSON `json:"remote,omitempty"`
	HalfLife float64             `json:"half_life,omitempty"`
	// Keys is "auto" (the default: keys extracted from text at ingest)
	// or "explicit".
	Keys tidemark.KeyPolicy `json:"keys,omitzero"`
}

// RemoteEmbedderJSON is tidemark.RemoteEmbedder on the wire: the name of
// the environment variable holding the API key, never the key.
type RemoteEmbedderJSON struct {
	BaseURL   string `json:"base_url"`
	Model     string `json:"model"`
	APIKeyEnv string `json:"api_key_env,omitempty"`
}

// SearchJSON is a search request.
type SearchJSON struct {
	Vector   []float32         `json:"vector,omitempty"`
	Text     string            `json:"text,omitempty"`
	K        int               `json:"k,omitempty"`
	Method   string            `json:"method,omitempty"`
	Now      *time.Time        `json:"now,omitempty"`
	AsOf     *time.Time        `json:"as_of,omitempty"`
	AsOfTx   *time.Time        `json:"as_of_tx,omitempty"`
	Kinds    []temporal.Kind   `json:"kinds,omitempty"`
	Statuses []temporal.Status `json:"statuses,omitempty"`
	Sources  []temporal.Source `json:"sources,omitempty"`
	// Range keeps memories created inside [from, to) (either may be open).
	Range *RangeJSON `json:"range,omitempty"`
	// Weights replace the method's weights of the four signals.
	Weights *WeightsJSON `json:"weights,omitempty"`
	Plan    string       `json:"plan,omitempty"`
	Explain bool         `json:"explain,omitempty"`
	// MinScore drops the hits scoring below it (tidemark.SearchRequest's
	// MinScore); absent means no threshold.
	MinScore *float64 `json:"min_score,omitempty"`
}

// RangeJSON is a time range.
type RangeJSON struct {
	From *time.Time `json:"from,omitempty"`
	To   *time.Time `json:"to,omitempty"`
}

// WeightsJSON are the fused score's weights.
type WeightsJSON struct {
	Sim        float64 `json:"sim"`
	Temporal   float64 `json:"temporal"`
	Confidence float64 `json:"confidence"`
	Relational float64 `json:"relational"`
}

// HitJSON is one search result: tidemark.Hit on the wire.
type HitJSON struct {
	ID string `json:"id"`
	// Score is comparable across queries and Cosine is the raw cosine
	// (see tidemark.Hit).
	Score      float64           `json:"score"`
	Cosine     float64           `json:"cosine"`
	Confidence float64           `json:"confidence"`
	Memory     MemoryJSON        `json:"memory"`
	Signals    *temporal.Signals `json:"signals,omitempty"`
}

// RemovedJSON is a candidate the masks removed.
type RemovedJSON struct {
	ID     string          `json:"id"`
	Reason temporal.Reason `json:"reason"`
}

// ResultJSON is a search or rescore answer.
type ResultJSON struct {
	Hits       []HitJSON     `json:"hits"`
	Removed    []RemovedJSON `json:"removed,omitempty"`
	Plan       string        `json:"plan"`
	Candidates int           `json:"candidates"`
}

func resultJSON(r *tidemark.SearchResult) ResultJSON {
	out := ResultJSON{Hits: []HitJSON{}, Plan: r.Plan.String(), Candidates: r.Candidates}
	for _, h := range r.Hits {
		out.Hits = append(out.Hits, HitJSON{ID: h.ID, Score: h.Score, Cosine: h.Cosine, Confidence: h.Confidence, Memory: memoryJSON(h.Memory), Signals: h.Signals})
	}
	for _, x := range r.Removed {
		out.Removed = append(out.Removed, RemovedJSON{ID: x.ID, Reason: x.Reason})
	}
	return out
}

func (s *Server) coll(r *http.Request) (*tidemark.Collection, error) {
	return s.db.Collection(r.PathValue("c"))
}

// maxBatch is the most memories one upsert request may carry.
const maxBatch = 10000

func (s *Server) routes() {
	s.mux.Handle("GET /metrics", s.metrics.handler())
	s.mux.HandleFunc("GET /v1/openapi.json", s.serveOpenAPI)
	s.patterns = append(s.patterns, "GET /metrics", "GET /v1/openapi.json", "GET /healthz", "GET /readyz")
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]string{"status": "ok"}) })
	s.mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := s.db.Err(); err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, 200, map[string]string{"status": "ready"})
	})
	s.handle("GET /v1/collections", false, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		out := []CollectionJSON{}
		for _, name := range s.db.Collections() {
			if !t.allows(name, false) {
				continue
			}
			if c, err := s.db.Collection(name); err == nil {
				out = append(out, describe(c))
			}
		}
		writeJSON(w, 200, map[string]any{"collections": out})
		return nil
	})
	s.handle("POST /v1/collections/{c}", true, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		var req CreateCollectionJSON
		if err := decode(r, &req); err != nil {
			return err
		}
		o := &tidemark.CollectionOptions{Dim: req.Dim, Embedder: req.Embedder, HalfLife: req.HalfLife, Keys: req.Keys}
		if req.Remote != nil {
			if err := s.allowRemote(t, req.Remote); err != nil {
				return err
			}
			o.Remote = tidemark.RemoteEmbedder{BaseURL: req.Remote.BaseURL, Model: req.Remote.Model, APIKeyEnv: req.Remote.APIKeyEnv}
		}
		if req.Method != "" {
			m, err := temporal.ParseMethod(req.Method)
			if err != nil {
				return errf(400, "invalid_argument", "%v", err)
			}
			o.Method = m
		}
		c, err := s.db.CreateCollection(r.Context(), r.PathValue("c"), o)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, describe(c))
		return nil
	})
	s.handle("GET /v1/collections/{c}", false, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		writeJSON(w, 200, describe(c))
		return nil
	})
	s.handle("DELETE /v1/collections/{c}", true, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		if r.URL.Query().Get("confirm") != r.PathValue("c") {
			return errf(400, "invalid_argument", "dropping a collection needs ?confirm=<its name>")
		}
		if err := s.db.DropCollection(r.Context(), r.PathValue("c")); err != nil {
			return err
		}
		writeJSON(w, 200, map[string]string{"dropped": r.PathValue("c")})
		return nil
	})
	s.handle("POST /v1/collections/{c}/memories", true, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		var req struct {
			Memories []MemoryJSON `json:"memories"`
		}
		if err := decode(r, &req); err != nil {
			return err
		}
		if len(req.Memories) == 0 || len(req.Memories) > maxBatch {
			return errf(400, "invalid_argument", "memories: want 1…%d, got %d", maxBatch, len(req.Memories))
		}
		ms := make([]tidemark.Memory, len(req.Memories))
		for i := range req.Memories {
			ms[i] = req.Memories[i].memory()
		}
		start := time.Now()
		res, err := c.Put(r.Context(), ms)
		if err != nil {
			return err
		}
		s.metrics.write("put", start)
		writeJSON(w, 200, map[string]any{"results": res})
		return nil
	})
	s.handle("GET /v1/collections/{c}/memories/{id}", false, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		m, err := c.Get(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		writeJSON(w, 200, memoryJSON(m))
		return nil
	})
	s.handle("GET /v1/collections/{c}/memories/{id}/history", false, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		h, err := c.History(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		writeJSON(w, 200, map[string]any{"versions": versionsJSON(h)})
		return nil
	})
	s.handle("GET /v1/collections/{c}/facts", false, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		h, err := c.FactHistory(r.Context(), q.Get("subject"), q.Get("relation"))
		if err != nil {
			return err
		}
		writeJSON(w, 200, map[string]any{"versions": versionsJSON(h)})
		return nil
	})
	s.handle("POST /v1/collections/{c}/search", false, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		var req SearchJSON
		if err := decode(r, &req); err != nil {
			return err
		}
		sr, err := searchRequest(&req)
		if err != nil {
			return err
		}
		res, err := c.Search(r.Context(), sr)
		if err != nil {
			return err
		}
		s.metrics.plans.WithLabelValues(res.Plan.String()).Inc()
		s.metrics.candidates.Add(float64(res.Candidates))
		writeJSON(w, 200, resultJSON(res))
		return nil
	})
	s.handle("POST /v1/collections/{c}/feedback", true, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		var req struct {
			ID       string `json:"id"`
			Positive bool   `json:"positive"`
		}
		if err := decode(r, &req); err != nil {
			return err
		}
		// The token is the feedback source: one client cannot inflate a
		// memory past the collection's limits.
		if err := c.FeedbackFrom(r.Context(), req.ID, req.Positive, t.Name); err != nil {
			return err
		}
		writeJSON(w, 200, map[string]bool{"counted": true})
		return nil
	})
	s.handle("POST /v1/collections/{c}/consolidate", true, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		rep, err := c.Consolidate(r.Context(), nil)
		if err != nil {
			return err
		}
		s.metrics.runs.Inc()
		writeJSON(w, 200, rep)
		return nil
	})
	s.handle("POST /v1/collections/{c}/context", false, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		var req struct {
			SearchJSON
			TokenBudget int  `json:"token_budget,omitempty"`
			TextOnly    bool `json:"text_only,omitempty"`
		}
		if err := decode(r, &req); err != nil {
			return err
		}
		sr, err := searchRequest(&req.SearchJSON)
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
		writeJSON(w, 200, map[string]any{"context": blk, "text": blk.Text()})
		return nil
	})
	s.handle("PUT /v1/collections/{c}/documents/{doc}", true, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		var req struct {
			Text       string `json:"text"`
			ChunkBytes int    `json:"chunk_bytes,omitempty"`
		}
		if err := decode(r, &req); err != nil {
			return err
		}
		opts := &tidemark.DocumentOptions{ChunkBytes: req.ChunkBytes}
		rep, err := c.UpdateDocument(r.Context(), r.PathValue("doc"), req.Text, opts)
		if errors.Is(err, tidemark.ErrNotFound) {
			rep, err = c.PutDocument(r.Context(), r.PathValue("doc"), req.Text, opts)
		}
		if err != nil {
			return err
		}
		writeJSON(w, 200, rep)
		return nil
	})
	s.handle("POST /v1/rescore", false, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		var req struct {
			Vector     []float32  `json:"vector,omitempty"`
			K          int        `json:"k,omitempty"`
			Method     string     `json:"method,omitempty"`
			Now        *time.Time `json:"now,omitempty"`
			AsOf       *time.Time `json:"as_of,omitempty"`
			Candidates []struct {
				Memory MemoryJSON `json:"memory"`
				Sim    *float64   `json:"sim,omitempty"`
			} `json:"candidates"`
		}
		if err := decode(r, &req); err != nil {
			return err
		}
		rr := &tidemark.RescoreRequest{Vector: req.Vector, K: req.K, Now: tv(req.Now), AsOf: tv(req.AsOf)}
		if req.Method != "" {
			m, err := temporal.ParseMethod(req.Method)
			if err != nil {
				return errf(400, "invalid_argument", "%v", err)
			}
			p := temporal.Preset(m)
			rr.Params = &p
		}
		for _, c := range req.Candidates {
			rc := tidemark.RescoreCandidate{Memory: c.Memory.memory()}
			if c.Sim != nil {
				rc.Sim, rc.HasSim = *c.Sim, true
			}
			rr.Candidates = append(rr.Candidates, rc)
		}
		res, err := tidemark.Rescore(r.Context(), rr)
		if err != nil {
			return err
		}
		writeJSON(w, 200, resultJSON(res))
		return nil
	})
	s.handle("GET /v1/collections/{c}/consolidate", false, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		if _, err := s.coll(r); err != nil {
			return err
		}
		reps, err := s.db.LastConsolidation()
		var last *tidemark.ConsolidationReport
		for i := range reps {
			if reps[i].Collection == r.PathValue("c") {
				last = &reps[i]
			}
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		writeJSON(w, 200, map[string]any{"last_background_run": last, "error": msg})
		return nil
	})
	s.handle("GET /v1/collections/{c}/audit", false, func(w http.ResponseWriter, r *http.Request, t *Token) error {
		c, err := s.coll(r)
		if err != nil {
			return err
		}
		var since uint64
		if v := r.URL.Query().Get("since"); v != "" {
			if since, err = strconv.ParseUint(v, 10, 64); err != nil {
				return errf(400, "invalid_argument", "since: %v", err)
			}
		}
		a, err := c.Audit(r.Context(), since)
		if err != nil {
			return err
		}
		writeJSON(w, 200, map[string]any{"audit": a})
		return nil
	})
}

func searchRequest(req *SearchJSON) (*tidemark.SearchRequest, error) {
	sr := &tidemark.SearchRequest{Vector: req.Vector, Text: req.Text, K: req.K, Now: tv(req.Now), AsOf: tv(req.AsOf),
		AsOfTx: tv(req.AsOfTx), Kinds: temporal.KindsOf(req.Kinds...), Statuses: temporal.StatusesOf(req.Statuses...), Sources: req.Sources, Explain: req.Explain,
		MinScore: req.MinScore}
	if req.Method != "" {
		m, err := temporal.ParseMethod(req.Method)
		if err != nil {
			return nil, errf(400, "invalid_argument", "%v", err)
		}
		p := temporal.Preset(m)
		sr.Params = &p
	}
	if w := req.Weights; w != nil {
		if sr.Params == nil {
			p := temporal.Preset(temporal.MethodTidemark)
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

// versionsJSON is a list of versions on the wire.
func versionsJSON(h []tidemark.Memory) []MemoryJSON {
	out := make([]MemoryJSON, len(h))
	for i := range h {
		out[i] = memoryJSON(h[i])
	}
	return out
}

func describe(c *tidemark.Collection) CollectionJSON {
	o := c.Options()
	stored, visible := c.Len()
	out := CollectionJSON{Name: c.Name(), Dim: o.Dim, Method: o.Method.String(), Embedder: o.Embedder, Keys: o.Keys, Stored: stored, Visible: visible}
	if o.Remote != (tidemark.RemoteEmbedder{}) {
		out.Remote = &RemoteEmbedderJSON{BaseURL: o.Remote.BaseURL, Model: o.Remote.Model, APIKeyEnv: o.Remote.APIKeyEnv}
	}
	return out
}

// allowRemote checks a remote embedder configuration against the server's
// policy (Config.EmbedderURLs, EmbedderKeyEnvs): an admin token, a listed
// URL prefix, a listed key variable.
func (s *Server) allowRemote(t *Token, r *RemoteEmbedderJSON) error {
	if !t.allows("*", true) || !slices.Contains(t.Collections, "*") {
		return errf(http.StatusForbidden, "forbidden", "only a token for every collection, with write, may configure a remote embedder")
	}
	if !slices.ContainsFunc(s.cfg.EmbedderURLs, func(p string) bool { return p != "" && strings.HasPrefix(r.BaseURL, p) }) {
		return errf(http.StatusForbidden, "forbidden", "remote.base_url is not among the server's embedder URLs (tidemark serve --embedder-urls)")
	}
	if r.APIKeyEnv != "" && !slices.Contains(s.cfg.EmbedderKeyEnvs, r.APIKeyEnv) {
		return errf(http.StatusForbidden, "forbidden", "remote.api_key_env is not among the server's embedder key variables (tidemark serve --embedder-key-envs)")
	}
	return nil
}
