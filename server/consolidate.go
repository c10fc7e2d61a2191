package server

import (
	"net/http"
	"strconv"
	"time"

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
	return s.writeDone(w, 200, wireReport(rep))
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
		// The database-wide error can name other collections and files.
		s.cfg.Logger.Error("background consolidation failed", "error", err.Error())
		out.Error = "the last background consolidation failed; the server's log says why"
	}
	return s.writeJSON(w, 200, out)
}

// audit answers GET /v1/collections/{c}/audit?since=…&limit=…: the entries
// after sequence number since, at most limit of them (default and most
// maxAuditPage) cut at a sequence number's end, and when more remain,
// next: the since of the next page.
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
	limit := maxAuditPage
	if v := r.URL.Query().Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxAuditPage {
			return errf(400, api.CodeInvalidArgument, "limit: want 1…%d, got %q", maxAuditPage, v)
		}
	}
	a, err := c.Audit(r.Context(), since)
	if err != nil {
		return err
	}
	page, next := auditPage(a, limit)
	return s.writeJSON(w, 200, api.AuditLog{Audit: wireAudit(page), Next: next})
}

// auditPage cuts the first page of at most limit entries off a, and
// returns it with the since of the next page (0 when a fits). One
// sequence number is one record's edits: a page ends where one does, and
// a record with more than limit edits is a page of its own.
func auditPage(a []tidemark.AuditEntry, limit int) ([]tidemark.AuditEntry, uint64) {
	if len(a) <= limit {
		return a, 0
	}
	cut := limit
	for cut > 0 && a[cut].Seq == a[cut-1].Seq {
		cut--
	}
	if cut == 0 {
		cut = limit
		for cut < len(a) && a[cut].Seq == a[0].Seq {
			cut++
		}
	}
	if cut == len(a) {
		return a, 0
	}
	return a[:cut], a[cut-1].Seq
}

// maxAuditPage is the most audit entries one answer holds.
const maxAuditPage = 1000

// wireReport is a consolidation report on the wire, field for field: a
// field added to the engine's report stops the build here until the wire
// type says what to do with it.
func wireReport(rep tidemark.ConsolidationReport) api.ConsolidationReport {
	return api.ConsolidationReport{Collection: rep.Collection, Seq: rep.Seq, Promoted: rep.Promoted, Dormant: rep.Dormant,
		Reactivated: rep.Reactivated, Expired: rep.Expired, Contradictions: rep.Contradictions, Ripples: rep.Ripples,
		Merged: rep.Merged, Dependencies: rep.Dependencies, Contradicted: rep.Contradicted, Split: rep.Split, Updated: rep.Updated,
		PlannerAsked: rep.PlannerAsked, PlannerRejected: rep.PlannerRejected, PlannerFailed: rep.PlannerFailed,
		Orphans: rep.Orphans, Truncated: rep.Truncated, DurationMs: float64(rep.Duration) / float64(time.Millisecond)}
}

// wireAudit is audit entries on the wire (null for none, as the engine
// returns them).
func wireAudit(a []tidemark.AuditEntry) []api.AuditEntry {
	if a == nil {
		return nil
	}
	out := make([]api.AuditEntry, len(a))
	for i, e := range a {
		out[i] = api.AuditEntry{Seq: e.Seq, Time: e.Time, Rule: api.Rule(e.Rule.String()), ID: e.ID, Other: e.Other, By: e.By,
			From: e.From, To: e.To, Penalty: e.Penalty, Reason: e.Reason, Prefer: e.Prefer}
	}
	return out
}
