package server

import (
	"net/http"
	"time"

	"github.com/tidemark/tidemark/api"
)

// healthz answers GET /healthz (no token): the process is up.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	_ = s.writeJSON(w, 200, api.Health{Status: "ok"})
}

// readyz answers GET /readyz (no token): the database takes requests, with
// how far behind its store's log the node is, or 503 with why not:
// closed, failed, failing its checkpoints (writes go on then, but the log
// grows without bound and the next Open replays all of it; the server's
// log and tidemark_checkpoint_failures_total say why), or a node of a
// PostgreSQL store that fell behind the changes the store keeps. A node
// that merely cannot reach its database stays ready: it answers reads
// from the state last applied, and says how stale that is.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if err := s.db.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.db.CheckpointError() != nil {
		s.writeError(w, r, errf(http.StatusServiceUnavailable, api.CodeUnavailable,
			"checkpoints are failing (the log grows until one succeeds); the server's log says why"))
		return
	}
	rep := s.db.Replication()
	if rep.NeedsRestart {
		s.writeError(w, r, errf(http.StatusServiceUnavailable, api.CodeUnavailable,
			"this node fell behind the changes its store keeps and cannot catch up: restart it"))
		return
	}
	h := api.Health{Status: "ready", Replication: &api.Replication{Store: rep.Store, Applied: rep.Applied, Head: rep.Head,
		Behind: rep.Behind, Reachable: rep.Error == ""}}
	if !rep.LastContact.IsZero() {
		h.Replication.StaleSeconds = time.Since(rep.LastContact).Seconds()
	}
	_ = s.writeJSON(w, 200, h)
}
