package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tidemark/tidemark/api"
)

// liftSearch and liftPut decode a body as the handlers do.
func liftSearch(body []byte) (api.SearchRequest, error) {
	var req api.SearchRequest
	err := decodeSearchBytes(body, &req)
	return req, err
}

func liftPut(body []byte) (api.PutRequest, error) {
	var req api.PutRequest
	err := decodePutBytes(body, &req)
	return req, err
}

// sameDecode checks that the lifting decode of body gives what
// encoding/json alone gives: the same value, or the same error.
func sameDecode(t *testing.T, body []byte) (lifted bool) {
	t.Helper()
	var plainS api.SearchRequest
	errS := decodeBytes(body, &plainS)
	gotS, err := liftSearch(body)
	if fmt.Sprint(err) != fmt.Sprint(errS) || (err == nil && !reflect.DeepEqual(gotS, plainS)) {
		t.Fatalf("search body %q:\nlifted %+v, %v\nplain  %+v, %v", body, gotS, err, plainS, errS)
	}
	var plainP api.PutRequest
	errP := decodeBytes(body, &plainP)
	gotP, err := liftPut(body)
	if fmt.Sprint(err) != fmt.Sprint(errP) || (err == nil && !reflect.DeepEqual(gotP, plainP)) {
		t.Fatalf("put body %q:\nlifted %+v, %v\nplain  %+v, %v", body, gotP, err, plainP, errP)
	}
	_, _, l1 := liftVectors(body, "")
	_, _, l2 := liftVectors(body, "memories")
	return l1 || l2
}

var liftBodies = []string{
	`{"vector":[0.5,-1,2e-3,1E+2,0,-0,3.4028234e38],"k":3}`,
	`{"k":3, "vector" : [ 1 , 2 ] , "text":"a \"vector\": [9] here"}`,
	`{"vector":[]}`,
	`{"vector":null,"text":"embed me"}`,
	`{"vector":[1,2],"vector":[3]}`, // twice: left to encoding/json (the last wins)
	`{"Vector":[1,2]}`,              // another case: encoding/json matches it
	`{"vec\u0074or":[1,2]}`,         // escaped key
	`{"vector":[1e39]}`,             // out of float32's range: encoding/json's error
	`{"vector":[01]}`,               // not JSON
	`{"vector":[1,]}`,               // not JSON
	`{"vector":[NaN]}`,              // not JSON
	`{"vector":["1"]}`,              // a string: encoding/json's type error
	`{"vector":[1,2],"nope":1}`,     // unknown field
	`{"vector":[1,2]} {}`,           // trailing data
	`{"vector":[1,2]`,               // truncated
	`{"weights":{"sim":1,"temporal":0,"confidence":0,"relational":0},"vector":[0.25]}`,
	`{"memories":[{"id":"a","vector":[1,2,3]},{"id":"b","text":"t"},{"id":"c","vector":[4.5]}]}`,
	`{"memories":[{"id":"a","vector":[1,2,3],"depends_on":["x"]}],"extra":[{"vector":[1]}]}`,
	`{"memories":[{"id":"a","vector":[1,"2"]}]}`,
	`{"memories":null}`,
	`{"memories":[]}`,
	`{"memories":[null,{"id":"b","vector":[7]}]}`,
	`{"Memories":[{"id":"a","vector":[1]}]}`,
	`{"memories":[{"id":"a","vector":[1]}],"memories":[]}`,
	`{"memories":[{"id":"a","Vector":[1]}]}`,
	` 	{"vector":[ 1.5e-45, 1.4e-46 ]} `, // denormal, and below it (rounds to zero)
	`[]`,
	``,
}

// The lifting decode is encoding/json's decode, faster: the same values
// and the same errors, and it does lift the plain bodies.
func TestLiftVectorsMatchesEncodingJSON(t *testing.T) {
	lifted := 0
	for _, b := range liftBodies {
		if sameDecode(t, []byte(b)) {
			lifted++
		}
	}
	if lifted < 8 {
		t.Fatalf("only %d bodies took the fast path", lifted)
	}
	// A 768-d query as a client sends it.
	v := make([]float32, 768)
	for i := range v {
		v[i] = float32(i%97)/97 - 0.5 + float32(i)*1e-7
	}
	b, err := json.Marshal(api.SearchRequest{Vector: v, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !sameDecode(t, b) {
		t.Fatal("a plain 768-d query did not take the fast path")
	}
	got, err := liftSearch(b)
	if err != nil || !reflect.DeepEqual(got.Vector, v) {
		t.Fatalf("the vector did not round-trip: %v", err)
	}
}

func FuzzLiftVectors(f *testing.F) {
	for _, b := range liftBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 1<<16 || strings.Contains(string(body), "\x00") {
			return
		}
		sameDecode(t, body)
	})
}

func BenchmarkDecodeQuery(b *testing.B) {
	v := make([]float32, 768)
	for i := range v {
		v[i] = float32(i%97)/97 - 0.5
	}
	body, _ := json.Marshal(api.SearchRequest{Vector: v, K: 10})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			var req api.SearchRequest
			if err := decodeBytes(body, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lifted", func(b *testing.B) {
		for b.Loop() {
			if _, err := liftSearch(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
