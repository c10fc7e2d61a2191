package api

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// A memory's JSON names and omissions are the protocol's.
func TestMemoryJSON(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	st, vis := temporal.Active, true
	m := Memory{ID: "a", Text: "t", Vector: []float32{1, 0}, Kind: temporal.Versioned, Source: temporal.SourceWiki, Profile: "p",
		DocID: "d", Version: 2, Chunk: 1, Subject: "s", Relation: "r", Object: "o", DependsOn: []string{"b"},
		Access: 1, Positive: 2, Negative: 3, ValidFrom: At(at), ValidTo: At(at), RecordedAt: At(at), Created: At(at),
		Status: &st, Visible: &vis, SupersededBy: "c", Supersedes: []string{"e"}, Contradicts: []string{"f"},
		KeyRule: "adopted", KeyFrom: "g", Penalty: 0.5, ContradictedBy: []string{"h"}}
	const want = `{"id":"a","text":"t","vector":[1,0],"kind":"versioned","source":"wiki","profile":"p","doc_id":"d","version":2,"chunk":1,` +
		`"subject":"s","relation":"r","object":"o","depends_on":["b"],"access":1,"positive":2,"negative":3,` +
		`"valid_from":"2025-01-02T03:04:05Z","valid_to":"2025-01-02T03:04:05Z","recorded_at":"2025-01-02T03:04:05Z","created":"2025-01-02T03:04:05Z",` +
		`"status":"active","visible":true,"superseded_by":"c","supersedes":["e"],"contradicts":["f"],` +
		`"key_rule":"adopted","key_from":"g","penalty":0.5,"contradicted_by":["h"]}`
	if b, err := json.Marshal(m); err != nil || string(b) != want {
		t.Errorf("full memory:\n%s %v\nwant\n%s", b, err, want)
	}
	if b, err := json.Marshal(Memory{ID: "a"}); err != nil || string(b) != `{"id":"a"}` {
		t.Errorf("bare memory: %s %v", b, err)
	}
}

// A key policy is "auto", "explicit" or absent; anything else is refused
// when decoded.
func TestKeyPolicy(t *testing.T) {
	var c CreateCollection
	if b, _ := json.Marshal(CreateCollection{Dim: 3}); string(b) != `{"dim":3}` {
		t.Errorf("default key policy sent: %s", b)
	}
	for _, s := range []string{`"auto"`, `"explicit"`} {
		if err := json.Unmarshal([]byte(`{"dim":3,"keys":`+s+`}`), &c); err != nil || `"`+string(c.Keys)+`"` != s {
			t.Errorf("keys %s: %q %v", s, c.Keys, err)
		}
	}
	for _, s := range []string{`""`, `"Auto"`, `"sometimes"`} {
		if err := json.Unmarshal([]byte(`{"dim":3,"keys":`+s+`}`), &c); err == nil {
			t.Errorf("keys %s accepted", s)
		}
	}
}

// A time on the wire is read as RFC 3339 or as a date (midnight UTC), and
// written as RFC 3339.
func TestTimeAcceptsDates(t *testing.T) {
	var r SearchRequest
	if err := json.Unmarshal([]byte(`{"as_of":"2025-03-01","as_of_tx":"2025-03-01T12:30:00.5+02:00","now":null}`), &r); err != nil {
		t.Fatal(err)
	}
	if !r.AsOf.Equal(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)) || !r.AsOfTx.Equal(time.Date(2025, 3, 1, 10, 30, 0, 5e8, time.UTC)) || r.Now != nil {
		t.Fatalf("%+v", r)
	}
	for _, bad := range []string{`{"as_of":"2025-3-1"}`, `{"as_of":"yesterday"}`, `{"as_of":20250301}`} {
		if err := json.Unmarshal([]byte(bad), &r); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	b, err := json.Marshal(Range{From: At(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil || string(b) != `{"from":"2025-03-01T00:00:00Z"}` {
		t.Fatalf("%s %v", b, err)
	}
}

// Every field of every wire type has a snake_case JSON name (ListQuery is
// query parameters, Time a time's text).
func TestEveryFieldHasASnakeCaseJSONName(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	checked := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		{
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok || ts.Name.Name == "ListQuery" || ts.Name.Name == "Time" || ts.Name.Name == "TimeError" {
					return true
				}
				for _, fld := range st.Fields.List {
					if len(fld.Names) == 0 {
						continue // embedded: its own fields are checked
					}
					checked++
					tag := ""
					if fld.Tag != nil {
						tag = reflect.StructTag(strings.Trim(fld.Tag.Value, "`")).Get("json")
					}
					name, _, _ := strings.Cut(tag, ",")
					if !snake.MatchString(name) {
						t.Errorf("%s.%s: JSON name %q, want snake_case", ts.Name.Name, fld.Names[0].Name, name)
					}
				}
				return true
			})
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d fields: the walk sees too little", checked)
	}
}
