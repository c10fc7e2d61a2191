package server

import (
	"errors"
	"net/http"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
)

// The document endpoint: a whole text, chunked, stored or edited.

// putDocument answers PUT /v1/collections/{c}/documents/{doc}: an edit of
// the document when it exists, a new document otherwise.
func (s *Server) putDocument(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	var req api.DocumentRequest
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
	// Field for field: a field added to the engine's report stops the
	// build here until the wire type says what to do with it.
	return s.writeDone(w, 200, api.DocumentReport{DocID: rep.DocID, Version: rep.Version, Chunks: rep.Chunks, Reembedded: rep.Reembedded,
		Created: rep.Created, Superseded: rep.Superseded, Transferred: rep.Transferred})
}
