package server

import (
	"errors"
	"net/http"

	"github.com/tidemark/tidemark"
)

// route is one endpoint of the /v1 API: its pattern (also its metrics
// label), the access it needs of a token, and its handler.
type route struct {
	pattern string
	access  access
	fn      func(w http.ResponseWriter, r *http.Request, t *Token) error
}

// routes registers every endpoint. The unauthenticated ones come first;
// the /v1 table is grouped by resource, its handlers live in the file of
// their resource (collections.go, memories.go, search.go, documents.go,
// consolidate.go), and Routes lists them in this order.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /v1/openapi.json", s.serveOpenAPI)
	s.patterns = append(s.patterns, "GET /v1/openapi.json", "GET /healthz", "GET /readyz")
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("/", s.noRoute) // everything else: 404 or 405 in the error shape
	for _, rt := range []route{
		{"GET /metrics", metricsAccess, s.serveMetrics},
		{"GET /v1/collections", readAccess, s.listCollections},
		{"POST /v1/collections/{c}", writeAccess, s.createCollection},
		{"GET /v1/collections/{c}", readAccess, s.getCollection},
		{"DELETE /v1/collections/{c}", writeAccess, s.dropCollection},
		{"POST /v1/collections/{c}/memories", writeAccess, s.putMemories},
		{"GET /v1/collections/{c}/memories", readAccess, s.listMemories},
		{"GET /v1/collections/{c}/count", readAccess, s.countMemories},
		{"GET /v1/collections/{c}/memories/{id}", readAccess, s.getMemory},
		{"DELETE /v1/collections/{c}/memories/{id}", writeAccess, s.retractMemory},
		{"GET /v1/collections/{c}/memories/{id}/history", readAccess, s.memoryHistory},
		{"GET /v1/collections/{c}/facts", readAccess, s.factHistory},
		{"POST /v1/collections/{c}/search", readAccess, s.search},
		{"POST /v1/collections/{c}/feedback", writeAccess, s.feedback},
		{"POST /v1/collections/{c}/consolidate", writeAccess, s.consolidate},
		{"POST /v1/collections/{c}/context", readAccess, s.assembleContext},
		{"PUT /v1/collections/{c}/documents/{doc}", writeAccess, s.putDocument},
		{"POST /v1/rescore", readAccess, s.rescore},
		{"GET /v1/collections/{c}/consolidate", readAccess, s.lastConsolidation},
		{"GET /v1/collections/{c}/audit", readAccess, s.audit},
	} {
		s.handle(rt.pattern, rt.access, rt.fn)
	}
}

// coll is the collection the request's path names ({c}). A name this
// node does not know may be another node's newest collection (a
// PostgreSQL store): the node catches up once before it says 404.
func (s *Server) coll(r *http.Request) (*tidemark.Collection, error) {
	c, err := s.db.Collection(r.PathValue("c"))
	if errors.Is(err, tidemark.ErrNotFound) {
		if cerr := s.db.CatchUp(r.Context()); cerr != nil {
			return nil, cerr
		}
		c, err = s.db.Collection(r.PathValue("c"))
	}
	return c, err
}
