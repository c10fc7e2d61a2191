package eval

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

func tp(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return &t
}

// fullCorpusLine sets every field of the format.
func fullCorpusLine() CorpusLine {
	return CorpusLine{
		ID: "policy-3-v2", Text: "Rate limits are 1000 requests per minute.", Vector: []float32{0.25, -1.5, 3e-8},
		Kind: temporal.Versioned, Source: temporal.SourcePolicy, Profile: "policy",
		DocID: "policy-3", Version: 2, Chunk: 1,
		ValidFrom: tp("2025-01-01T00:00:00Z"), ValidTo: tp("2026-01-01T00:00:00Z"), RecordedAt: tp("2025-01-02T00:00:00.5Z"),
		Subject: "API", Relation: "rate limit", Object: "1000/min", DependsOn: []string{"policy-2-v4"},
		Positive: 3, Negative: 1, Access: 12,
	}
}

func fullQueryLine() QueryLine {
	return QueryLine{ID: "q17", Text: "what is the rate limit", Vector: []float32{1, 0, 0},
		Now: *tp("2026-01-01T00:00:00Z"), AsOf: tp("2025-06-01T00:00:00Z"), K: 5,
		Gold: []string{"policy-3-v2"}, Stale: []string{"policy-3-v1"}, Type: "as_of"}
}

func TestCorpusRoundTrip(t *testing.T) {
	in := []CorpusLine{{ID: "policy-2-v4", Text: "old", Vector: []float32{1, 2, 3}}, fullCorpusLine()}
	var b bytes.Buffer
	if err := WriteCorpus(&b, in); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCorpus(&b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, in)
	}
}

func TestQueryRoundTrip(t *testing.T) {
	in := []QueryLine{fullQueryLine(), {ID: "q2", Text: "t", Now: *tp("2026-01-01T00:00:00Z"), Gold: []string{"a"}}}
	var b bytes.Buffer
	if err := WriteQueries(&b, in); err != nil {
		t.Fatal(err)
	}
	got, err := ReadQueries(&b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, in)
	}
	if got[1].TopK() != DefaultK || got[0].TopK() != 5 {
		t.Errorf("TopK %d %d", got[1].TopK(), got[0].TopK())
	}
}

// TestDesignExamples decodes the two example lines of DESIGN "Evaluation
// contract" (vectors filled in, "…" replaced).
func TestDesignExamples(t *testing.T) {
	corpus := `{"id":"policy-2-v4","text":"x"}
{"id":"policy-3-v2","text":"rate limits","vector":[0.1,0.2],"kind":"versioned","source":"policy",
 "profile":"policy","doc_id":"policy-3","version":2,"chunk":0,
 "valid_from":"2025-01-01T00:00:00Z","valid_to":null,"recorded_at":"2025-01-02T00:00:00Z",
 "subject":"api","relation":"rate limit","object":"1000","depends_on":["policy-2-v4"],
 "positive":3,"negative":0,"access":12}`
	// The DESIGN example spans lines for reading; JSON Lines needs one.
	corpus = strings.ReplaceAll(corpus, ",\n ", ",")
	c, err := ReadCorpus(strings.NewReader(corpus))
	if err != nil {
		t.Fatal(err)
	}
	l := c[1]
	if l.Kind != temporal.Versioned || l.Source != temporal.SourcePolicy || l.Version != 2 || l.ValidTo != nil ||
		!l.RecordedAt.Equal(*tp("2025-01-02T00:00:00Z")) || l.Access != 12 || l.DependsOn[0] != "policy-2-v4" {
		t.Errorf("decoded %+v", l)
	}
	q, err := ReadQueries(strings.NewReader(`{"id":"q17","text":"limits","vector":[0.1,0.2],"now":"2026-01-01T00:00:00Z","as_of":null,` +
		`"k":5,"gold":["policy-3-v4"],"stale":["policy-3-v1","policy-3-v2"],"type":"current"}`))
	if err != nil {
		t.Fatal(err)
	}
	if q[0].K != 5 || q[0].AsOf != nil || q[0].Type != "current" || len(q[0].Stale) != 2 {
		t.Errorf("decoded %+v", q[0])
	}
}

func TestReadSkipsBlankLinesAndBOM(t *testing.T) {
	c, err := ReadCorpus(strings.NewReader("\xef\xbb\xbf{\"id\":\"a\",\"text\":\"x\"}\n\n  \r\n{\"id\":\"b\",\"text\":\"y\"}\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 2 || c[1].ID != "b" {
		t.Errorf("got %+v", c)
	}
}

const okLine = `{"id":"ok","text":"fine","vector":[1,0]}`

func TestReadCorpusErrors(t *testing.T) {
	long := `{"id":"big","text":"` + strings.Repeat("x", MaxLineBytes) + `"}`
	for _, c := range []struct {
		name, in string
		want     error
		// line is the line the error must name; msg a substring.
		line int
		msg  string
	}{
		{"unknown field", okLine + "\n" + `{"id":"a","text":"x","vectr":[1]}`, ErrUnknownField, 2, `"vectr"`},
		{"case-folded field", `{"ID":"a","text":"x"}`, ErrUnknownField, 1, `"ID"`},
		{"duplicate field", `{"id":"a","text":"x","text":"y"}`, ErrDuplicateField, 1, `"text"`},
		{"malformed", okLine + "\n\n" + `{"id":"a","text":"x"`, ErrMalformed, 3, "end of line"},
		{"syntax", `{"id":"a",,}`, ErrMalformed, 1, "invalid character"},
		{"not an object", `["a"]`, ErrMalformed, 1, "one JSON object"},
		{"two objects", `{"id":"a","text":"x"} {"id":"b"}`, ErrMalformed, 1, "more than one"},
		{"wrong type", `{"id":"a","text":"x","version":"2"}`, ErrMalformed, 1, "version: eval: malformed line: JSON string is not an integer"},
		{"NaN string in vector", `{"id":"a","vector":[1,"NaN"]}`, ErrMalformed, 1, "vector"},
		{"overflow in vector", `{"id":"a","vector":[1,1e999]}`, ErrMalformed, 1, "1e999"},
		{"float32 overflow in vector", `{"id":"a","vector":[1e39]}`, ErrMalformed, 1, "float32"},
		{"empty vector", `{"id":"a","vector":[]}`, ErrBadVector, 1, "empty"},
		{"dimension mismatch", okLine + "\n" + `{"id":"a","vector":[1,2,3]}`, ErrDimension, 2, "line 1"},
		{"duplicate id", okLine + "\n" + `{"id":"ok","text":"again"}`, ErrDuplicateID, 2, "line 1"},
		{"missing id", `{"text":"x"}`, ErrMissing, 1, "id"},
		{"missing text", `{"id":"a"}`, ErrMissing, 1, "text"},
		{"bad time", `{"id":"a","text":"x","valid_from":"2025-01-01"}`, ErrBadTime, 1, "valid_from"},
		{"time not a string", `{"id":"a","text":"x","recorded_at":20250101}`, ErrBadTime, 1, "recorded_at"},
		{"valid_from = valid_to", `{"id":"a","text":"x","valid_from":"2025-01-01T00:00:00Z","valid_to":"2025-01-01T00:00:00Z"}`, ErrBadTime, 1, "not before"},
		{"valid_from > valid_to", `{"id":"a","text":"x","valid_from":"2025-01-02T00:00:00Z","valid_to":"2025-01-01T00:00:00+02:00"}`, ErrBadTime, 1, "valid_to"},
		{"unknown kind", `{"id":"a","text":"x","kind":"forever"}`, ErrBadValue, 1, "kind"},
		{"unknown source", `{"id":"a","text":"x","source":"rumour"}`, ErrBadValue, 1, "source"},
		{"unknown profile", `{"id":"a","text":"x","profile":"gossip"}`, ErrBadValue, 1, "breaking_news"},
		{"negative access", `{"id":"a","text":"x","access":-1}`, ErrBadValue, 1, "access"},
		{"fractional counter", `{"id":"a","text":"x","positive":1.5}`, ErrMalformed, 1, "positive"},
		{"negative version", `{"id":"a","text":"x","doc_id":"d","version":-2}`, ErrBadValue, 1, "version"},
		{"version without doc", `{"id":"a","text":"x","version":2}`, ErrMissing, 1, "doc_id"},
		{"partial fact", `{"id":"a","text":"x","subject":"s","relation":"r"}`, ErrBadValue, 1, "go together"},
		{"blank key", `{"id":"a","text":"x","subject":"!!","relation":"r","object":"o"}`, ErrBadValue, 1, "letter"},
		{"self dependency", `{"id":"a","text":"x","depends_on":["a"]}`, ErrBadValue, 1, "itself"},
		{"unknown dependency", okLine + "\n" + `{"id":"a","text":"x","depends_on":["ghost"]}`, ErrUnknownID, 2, "ghost"},
		{"empty file", "\n\n", ErrEmpty, 0, "no records"},
		{"overlong line", okLine + "\n" + long + "\n", ErrLineTooLong, 2, "16 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCorpus(strings.NewReader(c.in))
			checkErr(t, err, c.want, "corpus", c.line, c.msg)
		})
	}
}

func TestReadQueriesErrors(t *testing.T) {
	const now = `"now":"2026-01-01T00:00:00Z"`
	for _, c := range []struct {
		name, in string
		want     error
		line     int
		msg      string
	}{
		{"unknown field", `{"id":"q","text":"x",` + now + `,"gold":["a"],"golden":1}`, ErrUnknownField, 1, `"golden"`},
		{"k = 0", `{"id":"q","text":"x",` + now + `,"gold":["a"],"k":0}`, ErrBadValue, 1, "k = 0"},
		{"k < 0", `{"id":"q","text":"x",` + now + `,"gold":["a"],"k":-3}`, ErrBadValue, 1, "k = -3"},
		{"empty gold", `{"id":"q","text":"x",` + now + `,"gold":[]}`, ErrMissing, 1, "gold"},
		{"no gold", `{"id":"q","text":"x",` + now + `}`, ErrMissing, 1, "gold"},
		{"gold twice", `{"id":"q","text":"x",` + now + `,"gold":["a","a"]}`, ErrDuplicateID, 1, "gold"},
		{"gold and stale", `{"id":"q","text":"x",` + now + `,"gold":["a"],"stale":["a"]}`, ErrBadValue, 1, "both"},
		{"no now", `{"id":"q","text":"x","gold":["a"]}`, ErrMissing, 1, "now"},
		{"null now", `{"id":"q","text":"x","now":null,"gold":["a"]}`, ErrMissing, 1, "now"},
		{"bad now", `{"id":"q","text":"x","now":"yesterday","gold":["a"]}`, ErrBadTime, 1, "now"},
		{"bad as_of", `{"id":"q","text":"x",` + now + `,"as_of":"2025-13-01T00:00:00Z","gold":["a"]}`, ErrBadTime, 1, "as_of"},
		{"duplicate id", `{"id":"q","text":"x",` + now + `,"gold":["a"]}` + "\n" + `{"id":"q","text":"y",` + now + `,"gold":["a"]}`, ErrDuplicateID, 2, "line 1"},
		{"dimension mismatch", `{"id":"q","vector":[1],` + now + `,"gold":["a"]}` + "\n" + `{"id":"r","vector":[1,2],` + now + `,"gold":["a"]}`, ErrDimension, 2, "line 1"},
		{"no text", `{"id":"q",` + now + `,"gold":["a"]}`, ErrMissing, 1, "text"},
		{"empty file", "", ErrEmpty, 0, "no records"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadQueries(strings.NewReader(c.in))
			checkErr(t, err, c.want, "queries", c.line, c.msg)
		})
	}
}

// checkErr asserts that err wraps want, names file and line (when line >
// 0) and contains msg.
func checkErr(t *testing.T, err, want error, file string, line int, msg string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
	if line > 0 {
		le, ok := errors.AsType[*LineError](err)
		if !ok || le.File != file || le.Line != line {
			t.Errorf("error %q does not locate %s line %d", err, file, line)
		}
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q lacks %q", err, msg)
	}
}

// TestValidateGoValues covers what JSON cannot carry but a Go caller can.
func TestValidateGoValues(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		name string
		l    CorpusLine
		want error
	}{
		{"NaN", CorpusLine{ID: "a", Vector: []float32{1, nan}}, ErrBadVector},
		{"Inf", CorpusLine{ID: "a", Vector: []float32{float32(math.Inf(-1))}}, ErrBadVector},
		{"kind", CorpusLine{ID: "a", Text: "x", Kind: 9}, ErrBadValue},
		{"source", CorpusLine{ID: "a", Text: "x", Source: 42}, ErrBadValue},
		{"year", CorpusLine{ID: "a", Text: "x", RecordedAt: new(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}, ErrBadTime},
	} {
		if err := ValidateCorpus([]CorpusLine{c.l}); !errors.Is(err, c.want) || !strings.Contains(err.Error(), "corpus record 1") {
			t.Errorf("%s: %v, want %v at corpus record 1", c.name, err, c.want)
		}
	}
	q := fullQueryLine()
	q.K = -1
	if err := q.Validate(); !errors.Is(err, ErrBadValue) {
		t.Errorf("k = -1: %v", err)
	}
	q = fullQueryLine()
	q.K = 0 // the default in Go
	if err := q.Validate(); err != nil {
		t.Errorf("k = 0 in Go: %v", err)
	}
}

func TestCheckAcrossFiles(t *testing.T) {
	corpus := []CorpusLine{{ID: "a", Vector: []float32{1, 0}}, {ID: "b", Vector: []float32{0, 1}}}
	q := QueryLine{ID: "q", Vector: []float32{1, 0}, Now: *tp("2026-01-01T00:00:00Z"), Gold: []string{"a"}, Stale: []string{"b"}}
	if err := Check(corpus, []QueryLine{q}); err != nil {
		t.Fatal(err)
	}
	bad := q
	bad.Vector = []float32{1, 0, 0}
	if err := Check(corpus, []QueryLine{bad}); !errors.Is(err, ErrDimension) {
		t.Errorf("dimension: %v", err)
	}
	bad = q
	bad.Gold = []string{"zz"}
	if err := Check(corpus, []QueryLine{bad}); !errors.Is(err, ErrUnknownID) || !strings.Contains(err.Error(), "gold") {
		t.Errorf("unknown gold: %v", err)
	}
	bad = q
	bad.Stale = []string{"zz"}
	if err := Check(corpus, []QueryLine{bad}); !errors.Is(err, ErrUnknownID) || !strings.Contains(err.Error(), "stale") {
		t.Errorf("unknown stale: %v", err)
	}
	if err := Check(nil, []QueryLine{q}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty corpus: %v", err)
	}
	if err := Check(corpus, nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("no queries: %v", err)
	}
}

// TestFieldListsMatchDesign pins the JSON names to DESIGN's examples.
func TestFieldListsMatchDesign(t *testing.T) {
	keys := func(m map[string]fieldCheck) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	want := []string{"access", "chunk", "depends_on", "doc_id", "id", "kind", "negative", "object", "positive",
		"profile", "recorded_at", "relation", "source", "subject", "text", "valid_from", "valid_to", "vector", "version"}
	if got := keys(corpusFields); !slices.Equal(got, want) {
		t.Errorf("corpus fields %v\nwant %v", got, want)
	}
	want = []string{"as_of", "gold", "id", "k", "now", "stale", "text", "type", "vector"}
	if got := keys(queryFields); !slices.Equal(got, want) {
		t.Errorf("query fields %v\nwant %v", got, want)
	}
}

func FuzzReadCorpus(f *testing.F) {
	var b bytes.Buffer
	_ = WriteCorpus(&b, []CorpusLine{{ID: "policy-2-v4", Text: "old"}, fullCorpusLine()})
	f.Add(b.String())
	f.Add(okLine)
	f.Add(`{"id":"a","text":"x","valid_from":"2025-01-01T00:00:00+05:30","kind":"EVENT","source":"Slack"}`)
	f.Add(`{"id":"a","vector":[1e38,-0,5e-45]}` + "\n" + `{"id":"b","vector":[1,2,3]}`)
	f.Add(`{"id":"a","text":"x","depends_on":["a"]}`)
	f.Add("\xef\xbb\xbf\n{}")
	f.Fuzz(func(t *testing.T, in string) {
		lines, err := ReadCorpus(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrEmpty) {
				if _, ok := errors.AsType[*LineError](err); !ok {
					t.Fatalf("error without a line: %v", err)
				}
			}
			return
		}
		if err := ValidateCorpus(lines); err != nil {
			t.Fatalf("accepted lines do not validate: %v", err)
		}
		var out1 bytes.Buffer
		if err := WriteCorpus(&out1, lines); err != nil {
			t.Fatalf("accepted lines do not write: %v", err)
		}
		again, err := ReadCorpus(bytes.NewReader(out1.Bytes()))
		if err != nil {
			t.Fatalf("written lines do not read back: %v\n%s", err, out1.String())
		}
		var out2 bytes.Buffer
		_ = WriteCorpus(&out2, again)
		if !bytes.Equal(out1.Bytes(), out2.Bytes()) {
			t.Fatalf("not a fixed point:\n%s\n%s", out1.String(), out2.String())
		}
	})
}

func FuzzReadQueries(f *testing.F) {
	var b bytes.Buffer
	_ = WriteQueries(&b, []QueryLine{fullQueryLine()})
	f.Add(b.String())
	f.Add(`{"id":"q","text":"x","now":"2026-01-01T00:00:00Z","gold":["a"],"k":0}`)
	f.Add(`{"id":"q","text":"x","now":"2026-01-01T00:00:00.123456789-07:00","as_of":null,"gold":["a"],"stale":["b"]}`)
	f.Fuzz(func(t *testing.T, in string) {
		qs, err := ReadQueries(strings.NewReader(in))
		if err != nil {
			return
		}
		if err := ValidateQueries(qs); err != nil {
			t.Fatalf("accepted queries do not validate: %v", err)
		}
		var out1 bytes.Buffer
		if err := WriteQueries(&out1, qs); err != nil {
			t.Fatalf("accepted queries do not write: %v", err)
		}
		again, err := ReadQueries(bytes.NewReader(out1.Bytes()))
		if err != nil {
			t.Fatalf("written queries do not read back: %v\n%s", err, out1.String())
		}
		var out2 bytes.Buffer
		_ = WriteQueries(&out2, again)
		if !bytes.Equal(out1.Bytes(), out2.Bytes()) {
			t.Fatalf("not a fixed point:\n%s\n%s", out1.String(), out2.String())
		}
	})
}
