package server

import (
	"net/http"
	"strconv"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
)

// The consolidation endpoints: run one cycle, read the last background
// run, read the audit log.

// consolidate answers POST /v1/collections/{c}/consolidate.
func (s *Server) consolidate(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	rep, err := c.Consolidate(r.Context(), nil)
	if err != nil {
		return err
	}
	s.metrics.runs.Inc()
	writeJSON(w, 200, wireReport(rep))
	return nil
}

// lastConsolidation answers GET /v1/collections/{c}/consolidate.
func (s *Server) lastConsolidation(w http.ResponseWriter, r *http.Request, t *Token) error {
	if _, err := s.coll(r); err != nil {
		return err
	}
	reps, err := s.db.LastConsolidation()
	var out api.LastConsolidation
	for i := range reps {
		if reps[i].Collection == r.PathValue("c") {
			rep := wireReport(reps[i])
			out.LastBackgroundRun = &rep
		}
	}
	if err != nil {
		out.Error = err.Error()
	}
	writeJSON(w, 200, out)
	return nil
}

// audit answers GET /v1/collections/{c}/audit?since=….
func (s *Server) audit(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	var since uint64
	if v := r.URL.Query().Get("since"); v != "" {
		if since, err = strconv.ParseUint(v, 10, 64); err != nil {
			return errf(400, api.CodeInvalidArgument, "since: %v", err)
		}
	}
	a, err := c.Audit(r.Context(), since)
	if err != nil {
		return err
	}
	writeJSON(w, 200, api.AuditLog{Audit: wireAudit(a)})
	return nil
}

// wireReport is a consolidation report on the wire, field for field: a
// field added to the engine's report stops the build here until the wire
// type says what to do with it.
func wireReport(rep tidemark.ConsolidationReport) api.ConsolidationReport {
	return api.ConsolidationReport(rep)
}

// wireAudit is audit entries on the wire (null for none, as the engine
// returns them).
func wireAudit(a []tidemark.AuditEntry) []api.AuditEntry {
	if a == nil {
		return nil
	}
	out := make([]api.AuditEntry, len(a))
	for i, e := range a {
		out[i] = api.AuditEntry{Seq: e.Seq, Time: e.Time, Rule: api.Rule(e.Rule.String()), ID: e.ID, Other: e.Other,
			From: e.From, To: e.To, Penalty: e.Penalty, Reason: e.Reason, Prefer: e.Prefer}
	}
	return out
}
