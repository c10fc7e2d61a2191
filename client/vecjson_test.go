package client

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/tidemark/tidemark/api"
)

// marshal's bodies decode to what json.Marshal's do, and it refuses what
// json.Marshal refuses.
func TestMarshalMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64()) * float32(math.Pow(10, float64(r.IntN(20)-10)))
		}
		return v
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, in := range []any{
		api.SearchRequest{Vector: vec(768), K: 10},
		api.SearchRequest{Vector: vec(3), Text: "q", AsOf: api.At(now), Explain: true},
		api.SearchRequest{Vector: []float32{0, -0, 1e-45, math.MaxFloat32, 1e-7, 123456789}},
		api.SearchRequest{Vector: []float32{}},
		api.SearchRequest{Text: "no vector"},
		api.SearchRequest{},
		api.PutRequest{Memories: []api.Memory{{ID: "a", Vector: vec(5)}, {ID: "b", Text: "t"}, {ID: "c", Vector: vec(1), DependsOn: []string{"a"}}}},
		api.PutRequest{Memories: []api.Memory{}},
		api.PutRequest{},
		api.RescoreRequest{Vector: vec(4), K: 2},
	} {
		want, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshal(in)
		if err != nil {
			t.Fatalf("%T: %v", in, err)
		}
		if !json.Valid(got) {
			t.Fatalf("%T: invalid JSON %s", in, got)
		}
		a := reflect.New(reflect.TypeOf(in))
		b := reflect.New(reflect.TypeOf(in))
		if err := json.Unmarshal(want, a.Interface()); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, b.Interface()); err != nil {
			t.Fatalf("%T: %v in %s", in, err, got)
		}
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			t.Fatalf("%T decodes differently:\n%s\n%s", in, want, got)
		}
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(-1))} {
		in := api.SearchRequest{Vector: []float32{1, bad}}
		if _, err := json.Marshal(in); err == nil {
			t.Fatal("encoding/json took a non-finite number")
		}
		if _, err := marshal(in); err == nil {
			t.Fatalf("marshal took %v", bad)
		}
	}
}
