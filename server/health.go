package server

import (
	"net/http"

	"github.com/tidemark/tidemark/api"
)

// healthz answers GET /healthz (no token): the process is up.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, api.Health{Status: "ok"})
}

// readyz answers GET /readyz (no token): the database takes requests, or
// the error that stops it.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if err := s.db.Err(); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, api.Health{Status: "ready"})
}
