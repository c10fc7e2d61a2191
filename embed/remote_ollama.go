package embed

import (
	"encoding/json"
	"fmt"
)

// ollamaFormat is Ollama's native embedding API ([APIOllama]):
// https://github.com/ollama/ollama/blob/main/docs/api.md#generate-embeddings.
var ollamaFormat = wireFormat{
	path:   "api/embed",
	encode: encodeOllama,
	decode: decodeOllama,
}

type ollamaRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type ollamaAnswer struct {
	Embeddings *[][]float32 `json:"embeddings"`
}

func encodeOllama(o *RemoteOptions, texts []string) ([]byte, error) {
	return json.Marshal(ollamaRequest{Model: o.Model, Input: texts})
}

// decodeOllama returns the n vectors of an answer, which Ollama gives in
// input order.
func decodeOllama(body []byte, n int) ([][]float32, error) {
	var a ollamaAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, jsonError(body, err)
	}
	if a.Embeddings == nil {
		return nil, fmt.Errorf(`no "embeddings" field`)
	}
	out := *a.Embeddings
	if len(out) != n {
		return nil, fmt.Errorf("%d vectors for %d texts", len(out), n)
	}
	for i, v := range out {
		if v == nil {
			return nil, fmt.Errorf("embeddings[%d] is null", i)
		}
	}
	return out, nil
}
