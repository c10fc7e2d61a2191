package api

// DocumentRequest is the body of PUT /v1/collections/{c}/documents/{doc}:
// the document's whole text, stored as a new document or as an edit of
// the one with that id.
type DocumentRequest struct {
	// Text is the document.
	Text string `json:"text"`
	// ChunkBytes is the target chunk size (default 800 bytes).
	ChunkBytes int `json:"chunk_bytes,omitempty"`
}

// DocumentReport is the answer of PUT /v1/collections/{c}/documents/{doc}
// (tidemark.DocumentReport).
type DocumentReport struct {
	// DocID is the document; Version the new chunks' version; Chunks the
	// document's chunks after the write.
	DocID   string `json:"doc_id"`
	Version int    `json:"version"`
	Chunks  int    `json:"chunks"`
	// Reembedded counts the chunk texts embedded: every chunk for a new
	// document, only the chunks an edit touched for an edit.
	Reembedded int `json:"reembedded"`
	// Created and Superseded are the chunk memories written and replaced;
	// Transferred counts the dependency edges moved to the new chunks.
	Created     []string `json:"created"`
	Superseded  []string `json:"superseded,omitempty"`
	Transferred int      `json:"transferred"`
}
