package server

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
	"github.com/tidemark/tidemark/temporal"
)

// The collection endpoints: list, create, describe, drop.

// listCollections answers GET /v1/collections: the collections the token
// may read.
func (s *Server) listCollections(w http.ResponseWriter, r *http.Request, t *Token) error {
	out := api.CollectionList{Collections: []api.Collection{}}
	for _, name := range s.db.Collections() {
		if !t.allows(name, readAccess) {
			continue
		}
		if c, err := s.db.Collection(name); err == nil {
			out.Collections = append(out.Collections, wireCollection(c))
		}
	}
	return s.writeJSON(w, 200, out)
}

// createCollection answers POST /v1/collections/{c}.
func (s *Server) createCollection(w http.ResponseWriter, r *http.Request, t *Token) error {
	var req api.CreateCollection
	if err := decode(r, &req); err != nil {
		return err
	}
	o := &tidemark.CollectionOptions{Dim: req.Dim, Embedder: req.Embedder, HalfLife: req.HalfLife}
	if req.Keys != "" {
		if err := o.Keys.UnmarshalText([]byte(req.Keys)); err != nil {
			return err
		}
	}
	if req.Split != "" {
		if err := o.Split.UnmarshalText([]byte(req.Split)); err != nil {
			return err
		}
	}
	if p := req.Planner; p != nil {
		if err := s.allowRemote(t, &api.RemoteEmbedder{BaseURL: p.BaseURL, Model: p.Model, APIKeyEnv: p.APIKeyEnv}); err != nil {
			return err
		}
		if p.TimeoutMS < 0 || p.TimeoutMS > int64(time.Hour/time.Millisecond) {
			return errf(http.StatusBadRequest, api.CodeInvalidArgument, "planner.timeout_ms = %d, want 0 (the default) … 3600000", p.TimeoutMS)
		}
		o.Planner = tidemark.PlannerOptions{BaseURL: p.BaseURL, Model: p.Model, APIKeyEnv: p.APIKeyEnv, Threshold: p.Threshold,
			MaxTargets: p.MaxTargets, Timeout: time.Duration(p.TimeoutMS) * time.Millisecond}
	}
	if req.Remote != nil {
		if err := s.allowRemote(t, req.Remote); err != nil {
			return err
		}
		o.Remote = tidemark.RemoteEmbedder{BaseURL: req.Remote.BaseURL, Model: req.Remote.Model, APIKeyEnv: req.Remote.APIKeyEnv}
	}
	if req.Method != "" {
		m, err := temporal.ParseMethod(req.Method)
		if err != nil {
			return errf(400, api.CodeInvalidArgument, "%v", err)
		}
		o.Method = m
	}
	s.createMu.Lock()
	defer s.createMu.Unlock()
	if n := len(s.db.Collections()); n >= s.cfg.MaxCollections {
		return errf(http.StatusForbidden, api.CodeQuotaExceeded, "this server holds %d collections, its limit: drop one first", n)
	}
	c, err := s.db.CreateCollection(r.Context(), r.PathValue("c"), o)
	if err != nil {
		return err
	}
	return s.writeDone(w, http.StatusCreated, wireCollection(c))
}

// getCollection answers GET /v1/collections/{c}.
func (s *Server) getCollection(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	return s.writeJSON(w, 200, wireCollection(c))
}

// dropCollection answers DELETE /v1/collections/{c}?confirm={c}.
func (s *Server) dropCollection(w http.ResponseWriter, r *http.Request, t *Token) error {
	if r.URL.Query().Get("confirm") != r.PathValue("c") {
		return errf(400, api.CodeInvalidArgument, "dropping a collection needs ?confirm=<its name>")
	}
	if err := s.db.DropCollection(r.Context(), r.PathValue("c")); err != nil {
		return err
	}
	return s.writeDone(w, 200, api.Dropped{Dropped: r.PathValue("c")})
}

// allowRemote checks a remote embedder configuration against the server's
// policy (Config.EmbedderURLs, EmbedderKeyEnvs): an admin token, a listed
// URL prefix, a listed key variable.
func (s *Server) allowRemote(t *Token, r *api.RemoteEmbedder) error {
	if !t.allows("*", writeAccess) || !slices.Contains(t.Collections, "*") {
		return errf(http.StatusForbidden, api.CodeForbidden, "only a token for every collection, with write, may configure a remote embedder")
	}
	if !slices.ContainsFunc(s.cfg.EmbedderURLs, func(p string) bool { return p != "" && strings.HasPrefix(r.BaseURL, p) }) {
		return errf(http.StatusForbidden, api.CodeForbidden, "remote.base_url is not among the server's embedder URLs (tidemark serve --embedder-urls)")
	}
	if r.APIKeyEnv != "" && !slices.Contains(s.cfg.EmbedderKeyEnvs, r.APIKeyEnv) {
		return errf(http.StatusForbidden, api.CodeForbidden, "remote.api_key_env is not among the server's embedder key variables (tidemark serve --embedder-key-envs)")
	}
	return nil
}

// wireCollection describes a collection on the wire.
func wireCollection(c *tidemark.Collection) api.Collection {
	o := c.Options()
	stored, visible := c.Len()
	out := api.Collection{Name: c.Name(), Dim: o.Dim, Method: o.Method.String(), Embedder: o.Embedder, Keys: api.KeyPolicy(o.Keys.String()),
		Split: api.SplitPolicy(o.Split.String()), Stored: stored, Visible: visible}
	if o.Remote != (tidemark.RemoteEmbedder{}) {
		out.Remote = &api.RemoteEmbedder{BaseURL: o.Remote.BaseURL, Model: o.Remote.Model, APIKeyEnv: o.Remote.APIKeyEnv}
	}
	if p := o.Planner; p.BaseURL != "" {
		out.Planner = &api.Planner{BaseURL: p.BaseURL, Model: p.Model, APIKeyEnv: p.APIKeyEnv, Threshold: p.Threshold,
			MaxTargets: p.MaxTargets, TimeoutMS: p.Timeout.Milliseconds()}
	}
	return out
}
