package embed

import (
	"encoding/json"
	"fmt"
)

// openaiFormat is the OpenAI embeddings API ([APIOpenAI]):
// https://platform.openai.com/docs/api-reference/embeddings/create.
var openaiFormat = wireFormat{
	path:   "embeddings",
	encode: encodeOpenAI,
	decode: decodeOpenAI,
}

type openaiRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type openaiAnswer struct {
	Data *[]struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func encodeOpenAI(o *RemoteOptions, texts []string) ([]byte, error) {
	req := openaiRequest{Model: o.Model, Input: texts}
	if o.SendDimensions {
		req.Dimensions = o.Dimensions
	}
	return json.Marshal(req)
}

// decodeOpenAI returns the n vectors of an answer in input order (the
// order of their "index" fields, not of the array), checking that each
// index from 0 to n−1 appears exactly once.
func decodeOpenAI(body []byte, n int) ([][]float32, error) {
	var a openaiAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, jsonError(body, err)
	}
	if a.Data == nil {
		return nil, fmt.Errorf(`no "data" field`)
	}
	data := *a.Data
	if len(data) != n {
		return nil, fmt.Errorf("%d vectors for %d texts", len(data), n)
	}
	out := make([][]float32, n)
	for i, d := range data {
		switch {
		case d.Index == nil:
			return nil, fmt.Errorf(`data[%d] has no "index"`, i)
		case *d.Index < 0 || *d.Index >= n:
			return nil, fmt.Errorf("data[%d] has index %d, want 0…%d", i, *d.Index, n-1)
		case out[*d.Index] != nil:
			return nil, fmt.Errorf("index %d appears twice", *d.Index)
		case d.Embedding == nil:
			return nil, fmt.Errorf(`data[%d] has no "embedding"`, i)
		}
		out[*d.Index] = d.Embedding
	}
	return out, nil
}
