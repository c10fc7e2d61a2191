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

// readyz answers GET /readyz (no token): the database takes requests, or
// 503 with why not: closed, failed, or failing its checkpoints (writes go
// on then, but the log grows without bound and the next Open replays all
// of it; the server's log and tidemark_checkpoint_failures_total say why).
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
	h := api.Health{Status: "ready", Replication: &api.Replication{Store: rep.Store, Applied: rep.Applied, Head: rep.Head,
		Behind: rep.Behind, Reachable: rep.Error == ""}}
	if !rep.LastContact.IsZero() {
		h.Replication.StaleSeconds = time.Since(rep.LastContact).Seconds()
	}
	_ = s.writeJSON(w, 200, h)
}
