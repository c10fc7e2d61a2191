package client

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/tidemark/tidemark/api"
)

// marshal is json.Marshal of a request body, with the vectors of searches
// and Puts written by withVector: encoding/json encodes a []float32
// element by element through reflection, most of a query's encoding time.
// The bytes differ from json.Marshal's only in the vector's place in its
// object and in the spelling of its numbers (shortest round-trip form):
// the server decodes the same values.
func marshal(in any) ([]byte, error) {
	switch r := in.(type) {
	case api.SearchRequest:
		v := r.Vector
		r.Vector = nil
		return withVector(nil, v, r)
	case api.PutRequest:
		b := append(make([]byte, 0, 64), `{"memories":`...)
		if r.Memories == nil {
			return append(b, "null}"...), nil
		}
		b = append(b, '[')
		for i, m := range r.Memories {
			if i > 0 {
				b = append(b, ',')
			}
			v := m.Vector
			m.Vector = nil
			var err error
			if b, err = withVector(b, v, m); err != nil {
				return nil, err
			}
		}
		return append(b, "]}"...), nil
	}
	return json.Marshal(in)
}

// withVector appends rest's JSON object (its vector field left empty, so
// omitted) with "vector": v added first, when v is not empty.
func withVector(b []byte, v []float32, rest any) ([]byte, error) {
	obj, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	if len(v) == 0 || len(obj) < 2 || obj[0] != '{' {
		// encoding/json omits an empty vector (omitempty) as well.
		return append(b, obj...), nil
	}
	b = append(b, `{"vector":[`...)
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("json: unsupported value: %v (vector element %d)", x, i)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	b = append(b, ']')
	if len(obj) > 2 {
		b = append(b, ',')
	}
	return append(b, obj[1:]...), nil
}
