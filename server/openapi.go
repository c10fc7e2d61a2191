package server

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 description of the /v1 API, served at
// /v1/openapi.json; a test checks that it and the routes agree.
//
//go:embed openapi.json
var openAPI []byte

func (s *Server) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPI)
}
