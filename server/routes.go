package server

import (
	"net/http"

	"github.com/tidemark/tidemark"
)

// route is one endpoint of the /v1 API: its pattern (also its metrics
// label), whether it needs a token with write access, and its handler.
type route struct {
	pattern string
	write   bool
	fn      func(w http.ResponseWriter, r *http.Request, t *Token) error
}

// routes registers every endpoint. The unauthenticated ones come first;
// the /v1 table is grouped by resource, its handlers live in the file of
// their resource (collections.go, memories.go, search.go, documents.go,
// consolidate.go), and Routes lists them in this order.
func (s *Server) routes() {
	s.mux.Handle("GET /metrics", s.metrics.handler())
	s.mux.HandleFunc("GET /v1/openapi.json", s.serveOpenAPI)
	s.patterns = append(s.patterns, "GET /metrics", "GET /v1/openapi.json", "GET /healthz", "GET /readyz")
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	for _, rt := range []route{
		{"GET /v1/collections", false, s.listCollections},
		{"POST /v1/collections/{c}", true, s.createCollection},
		{"GET /v1/collections/{c}", false, s.getCollection},
		{"DELETE /v1/collections/{c}", true, s.dropCollection},
		{"POST /v1/collections/{c}/memories", true, s.putMemories},
		{"GET /v1/collections/{c}/memories/{id}", false, s.getMemory},
		{"GET /v1/collections/{c}/memories/{id}/history", false, s.memoryHistory},
		{"GET /v1/collections/{c}/facts", false, s.factHistory},
		{"POST /v1/collections/{c}/search", false, s.search},
		{"POST /v1/collections/{c}/feedback", true, s.feedback},
		{"POST /v1/collections/{c}/consolidate", true, s.consolidate},
		{"POST /v1/collections/{c}/context", false, s.assembleContext},
		{"PUT /v1/collections/{c}/documents/{doc}", true, s.putDocument},
		{"POST /v1/rescore", false, s.rescore},
		{"GET /v1/collections/{c}/consolidate", false, s.lastConsolidation},
		{"GET /v1/collections/{c}/audit", false, s.audit},
	} {
		s.handle(rt.pattern, rt.write, rt.fn)
	}
}

// coll is the collection the request's path names ({c}).
func (s *Server) coll(r *http.Request) (*tidemark.Collection, error) {
	return s.db.Collection(r.PathValue("c"))
}
