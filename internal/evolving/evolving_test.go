package evolving

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/extract"
	"github.com/tidemark/tidemark/temporal"
)

// seeds are the seeds the invariant tests run on: the published one and
// a spread of others, so that no draw of the templates breaks them.
var seeds = func() []uint64 {
	s := []uint64{DefaultSeed}
	for i := uint64(1); i <= 40; i++ {
		s = append(s, i*0x9e3779b97f4a7c15)
	}
	return s
}()

var start = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func TestCounts(t *testing.T) {
	want := []struct {
		name string
		n    int
	}{{CodeMutation, 30}, {ConfigMigration, 20}, {DependencyBump, 20}, {APIEvolution, 20}}
	for _, seed := range seeds {
		bs := Evolving(seed)
		if len(bs) != len(want) {
			t.Fatalf("seed %d: %d benchmarks, want %d", seed, len(bs), len(want))
		}
		for i, w := range want {
			if bs[i].Name != w.name || len(bs[i].Scenarios) != w.n {
				t.Errorf("seed %d: benchmark %d = %s with %d scenarios, want %s with %d",
					seed, i, bs[i].Name, len(bs[i].Scenarios), w.name, w.n)
			}
			for j, s := range bs[i].Scenarios {
				if id := fmt.Sprintf("%s-%02d", w.name, j+1); s.ID != id {
					t.Errorf("seed %d: scenario id %q, want %q", seed, s.ID, id)
				}
			}
		}
		if n := len(ProjectFacts(seed)); n != 50 {
			t.Errorf("seed %d: %d project facts, want 50", seed, n)
		}
	}
}

func TestDeterministic(t *testing.T) {
	if a, b := Evolving(DefaultSeed), Evolving(DefaultSeed); !reflect.DeepEqual(a, b) {
		t.Error("Evolving: one seed, two datasets")
	}
	if a, b := ProjectFacts(DefaultSeed), ProjectFacts(DefaultSeed); !reflect.DeepEqual(a, b) {
		t.Error("ProjectFacts: one seed, two datasets")
	}
	if a, b := Evolving(1), Evolving(2); reflect.DeepEqual(a, b) {
		t.Error("Evolving: seeds 1 and 2 give the same dataset")
	}
	if a, b := ProjectFacts(1), ProjectFacts(2); reflect.DeepEqual(a, b) {
		t.Error("ProjectFacts: seeds 1 and 2 give the same dataset")
	}
}

// The first three scenarios of each benchmark are MemStrata's, whatever
// the seed.
func TestPaperExamplesFirst(t *testing.T) {
	want := map[string][3][4]string{
		CodeMutation: {
			{"The function get_user_by_id(uid) looks up a user record by primary key in the users table.",
				"The function fetch_user(uid) looks up a user record by primary key in the users table.",
				"What function looks up a user record by primary key?", "fetch_user"},
			{"The function load_config() returns the parsed configuration as a dict from settings.yaml.",
				"The function read_settings() returns the parsed configuration as a dict from settings.yaml.",
				"What function returns the parsed configuration from settings.yaml?", "read_settings"},
			{"The function process_payment(amount) charges the customer's card via the Stripe API.",
				"The function charge_card(amount) charges the customer's card via the Stripe API.",
				"What function charges the customer's card via the Stripe API?", "charge_card"},
		},
		ConfigMigration: {
			{"The SESSION_TIMEOUT setting is 1800 seconds in config.py.", "The SESSION_TIMEOUT setting is 3600 seconds in config.py.",
				"What is the SESSION_TIMEOUT in seconds in config.py?", "3600"},
			{"The MAX_UPLOAD_SIZE is set to 10485760 bytes in settings.py.", "The MAX_UPLOAD_SIZE is set to 52428800 bytes in settings.py.",
				"What is the MAX_UPLOAD_SIZE in bytes in settings.py?", "52428800"},
			{"The database connection pool size is 10 in the production config.",
				"The database connection pool size is 25 in the production config.",
				"What is the database connection pool size in the production config?", "25"},
		},
		DependencyBump: {
			{"The project pins numpy==1.24.0 in requirements.txt.", "The project pins numpy==1.26.4 in requirements.txt.",
				"What version of numpy does the project pin in requirements.txt?", "1.26.4"},
			{"The project pins django==4.1.7 in requirements.txt.", "The project pins django==5.0.2 in requirements.txt.",
				"What version of django does the project pin in requirements.txt?", "5.0.2"},
			{"The setup.py sets python_requires to >=3.8.", "The setup.py sets python_requires to >=3.11.",
				"What python_requires minimum does setup.py set?", "3.11"},
		},
		APIEvolution: {
			{"The user list endpoint is GET /api/v1/users.", "The user list endpoint is GET /api/v2/users.",
				"What is the path of the user list endpoint?", "/api/v2/users"},
			{"The search endpoint filters by the parameter named 'category'.", "The search endpoint filters by the parameter named 'tag'.",
				"What parameter does the search endpoint filter by?", "tag"},
			{"The auth login route is POST /auth/login.", "The auth login route is POST /auth/sessions.",
				"What is the path of the auth login route?", "/auth/sessions"},
		},
	}
	for _, seed := range []uint64{DefaultSeed, 7} {
		for _, b := range Evolving(seed) {
			for i, w := range want[b.Name] {
				s := b.Scenarios[i]
				if got := [4]string{s.StateA, s.StateB, s.Question, s.ValueB}; got != w {
					t.Errorf("%s: got %q, want %q", s.ID, got, w)
				}
			}
		}
	}
}

func TestMarker(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"The renewal date is fixed.", ""},
		{"Nowhere is it written.", ""},
		{"The known issue and the snowfall report.", ""},
		{"Knowledge of the bold format.", ""},
		{"The replacement part changes daily.", ""},
		{"The nolonger flag.", ""},
		{"The new endpoint.", "new"},
		{"The NEW endpoint.", "NEW"},
		{"It is Now 5.", "Now"},
		{"This is no longer true.", "no longer"},
		{"This is No\n\tLonger true.", "No\n\tLonger"},
		{"Call new_user() first.", "new"},
		{"The v2-legacy route.", "legacy"},
		{"An outdated, obsolete API.", "outdated"},
		{"It was renamed.", "renamed"},
		{"The oldest shard.", "oldest"},
		{"Not used anymore.", "anymore"},
		{"the current value", "current"},
		{"Previously 5.", "Previously"},
		{"The Latest build", "Latest"},
		{"formerly known as X", "formerly"},
	}
	for _, tt := range tests {
		got, ok := Marker(tt.text)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Marker(%q) = %q, %v; want %q", tt.text, got, ok, tt.want)
		}
	}
}

func TestMentions(t *testing.T) {
	tests := []struct {
		text, value string
		want        bool
	}{
		{"The pool size is 10 in the config.", "10", true},
		{"The size is 10.", "10", true},
		{"The size is 10485760 bytes.", "10", false},
		{"Requires >=3.10 and 1.10.2.", "10", false},
		{"Requires >=3.10.", "3.10", true},
		{"The function fetch_user(uid) runs.", "fetch_user", true},
		{"The function fetch_user_by_id(uid) runs.", "fetch_user", false},
		{"The parameter named 'tag'.", "tag", true},
		{"The tags are listed.", "tag", false},
		{"Uses REDIS_URL.", "redis_url", true},
		{"See /api/v1/users/me.", "/api/v1/users", false},
	}
	for _, tt := range tests {
		if got := Mentions(tt.text, tt.value); got != tt.want {
			t.Errorf("Mentions(%q, %q) = %v, want %v", tt.text, tt.value, got, tt.want)
		}
	}
}

// B.1: no state text and no fact holds a staleness marker.
func TestMarkerFree(t *testing.T) {
	for _, seed := range seeds {
		for _, b := range Evolving(seed) {
			for _, s := range b.Scenarios {
				for _, text := range []string{s.StateA, s.StateB, s.Question} {
					if m, ok := Marker(text); ok {
						t.Errorf("seed %d %s: marker %q in %q", seed, s.ID, m, text)
					}
				}
			}
		}
		for _, f := range ProjectFacts(seed) {
			if m, ok := Marker(f.Text); ok {
				t.Errorf("seed %d %s: marker %q in %q", seed, f.ID, m, f.Text)
			}
		}
	}
}

// A and B differ in exactly one contiguous span, which is ValueA in A and
// ValueB in B, bounded by non-word characters; the question holds neither
// value.
func TestSingleSpan(t *testing.T) {
	for _, seed := range seeds {
		for _, b := range Evolving(seed) {
			for _, s := range b.Scenarios {
				if s.ValueA == "" || s.ValueA == s.ValueB {
					t.Errorf("%s: values %q, %q", s.ID, s.ValueA, s.ValueB)
					continue
				}
				if strings.Count(s.StateA, s.ValueA) != 1 || strings.Count(s.StateB, s.ValueB) != 1 {
					t.Errorf("%s: each value must occur once in its state: %q / %q", s.ID, s.StateA, s.StateB)
					continue
				}
				i := strings.Index(s.StateA, s.ValueA)
				pre, suf := s.StateA[:i], s.StateA[i+len(s.ValueA):]
				if s.StateB != pre+s.ValueB+suf {
					t.Errorf("%s: B is not A with the value replaced:\n%q\n%q", s.ID, s.StateA, s.StateB)
				}
				if !tokenBounded(pre, suf) {
					t.Errorf("%s: the value span %q of %q does not start and end at token boundaries", s.ID, s.ValueA, s.StateA)
				}
				if Mentions(s.StateA, s.ValueB) || Mentions(s.StateB, s.ValueA) {
					t.Errorf("%s: a state mentions the other state's value", s.ID)
				}
				q := strings.ToLower(s.Question)
				if strings.Contains(q, strings.ToLower(s.ValueA)) || strings.Contains(q, strings.ToLower(s.ValueB)) {
					t.Errorf("%s: question %q holds a value (%q, %q)", s.ID, s.Question, s.ValueA, s.ValueB)
				}
			}
		}
	}
}

// tokenBounded reports whether a span between pre and suf starts and ends
// at token boundaries: no letter, digit or underscore on either side
// ("fetch_user" in "fetch_user(uid)", "1.26.4" in "numpy==1.26.4.").
func tokenBounded(pre, suf string) bool {
	before, _ := utf8.DecodeLastRuneInString(pre)
	after, _ := utf8.DecodeRuneInString(suf)
	return (pre == "" || !wordRune(before)) && (suf == "" || !wordRune(after))
}

// No scenario's text answers another scenario's question.
func TestValuesDistinct(t *testing.T) {
	for _, seed := range seeds {
		for _, b := range Evolving(seed) {
			for i, si := range b.Scenarios {
				for j, sj := range b.Scenarios {
					if i == j {
						continue
					}
					for _, v := range []string{si.ValueA, si.ValueB} {
						if Mentions(sj.StateA, v) || Mentions(sj.StateB, v) {
							t.Errorf("seed %d: %s's value %q appears in %s", seed, si.ID, v, sj.ID)
						}
					}
					if si.Question == sj.Question {
						t.Errorf("seed %d: %s and %s ask the same question", seed, si.ID, sj.ID)
					}
				}
			}
		}
	}
}

func TestProjectFacts(t *testing.T) {
	for _, seed := range seeds {
		facts := ProjectFacts(seed)
		for i, f := range facts {
			if id := fmt.Sprintf("project_facts-%02d", i+1); f.ID != id {
				t.Errorf("id %q, want %q", f.ID, id)
			}
			if strings.Count(f.Text, f.Answer) != 1 || strings.Contains(strings.ToLower(f.Question), strings.ToLower(f.Answer)) {
				t.Errorf("seed %d %s: answer %q must occur once in %q and not in %q", seed, f.ID, f.Answer, f.Text, f.Question)
			}
			for j, g := range facts {
				if i != j && (Mentions(g.Text, f.Answer) || g.Question == f.Question) {
					t.Errorf("seed %d: %s's answer %q or question appears in %s", seed, f.ID, f.Answer, g.ID)
				}
			}
		}
	}
}

func TestCorpus(t *testing.T) {
	for _, b := range Evolving(DefaultSeed) {
		for _, keys := range []bool{false, true} {
			corpus, queries := b.Corpus(start, keys)
			if err := eval.Check(corpus, queries); err != nil {
				t.Fatalf("%s keys=%v: %v", b.Name, keys, err)
			}
			n := len(b.Scenarios)
			if len(corpus) != 2*n || len(queries) != n {
				t.Fatalf("%s: %d lines, %d queries; want %d, %d", b.Name, len(corpus), len(queries), 2*n, n)
			}
			for i, l := range corpus {
				s, state, text := b.Scenarios[i%n], "a", b.Scenarios[i%n].StateA
				if i >= n {
					state, text = "b", s.StateB
				}
				if l.ID != s.ID+"-"+state || l.Text != text || !l.RecordedAt.Equal(start.Add(time.Duration(i)*time.Hour)) ||
					l.Kind != temporal.Static || l.DocID != "" || l.Vector != nil {
					t.Errorf("%s line %d = %+v", b.Name, i, l)
				}
				f, ok := extract.Key(l.Text)
				if want := (eval.CorpusLine{Subject: f.Subject, Relation: f.Relation, Object: f.Object}); !keys || !ok {
					if l.Subject != "" || l.Relation != "" || l.Object != "" {
						t.Errorf("%s line %d carries a key it should not: %+v", b.Name, i, l)
					}
				} else if l.Subject != want.Subject || l.Relation != want.Relation || l.Object != want.Object {
					t.Errorf("%s line %d key = %q %q %q, want %+v", b.Name, i, l.Subject, l.Relation, l.Object, f)
				}
			}
			now := start.Add(time.Duration(2*n-1)*time.Hour + 24*time.Hour)
			for i, q := range queries {
				s := b.Scenarios[i]
				if q.ID != s.ID || q.Text != s.Question || !q.Now.Equal(now) || q.Type != b.Name ||
					!reflect.DeepEqual(q.Gold, []string{s.ID + "-b"}) || !reflect.DeepEqual(q.Stale, []string{s.ID + "-a"}) {
					t.Errorf("%s query %d = %+v", b.Name, i, q)
				}
			}
		}
	}
}

func TestFactsCorpus(t *testing.T) {
	facts := ProjectFacts(DefaultSeed)
	for _, keys := range []bool{false, true} {
		corpus, queries := FactsCorpus(facts, start, keys)
		if err := eval.Check(corpus, queries); err != nil {
			t.Fatalf("keys=%v: %v", keys, err)
		}
		now := start.Add(time.Duration(len(facts)-1)*time.Hour + 24*time.Hour)
		for i, q := range queries {
			f := facts[i]
			if corpus[i].ID != f.ID || corpus[i].Text != f.Text || q.ID != f.ID+"-q" || q.Text != f.Question ||
				!q.Now.Equal(now) || q.Type != StaticType || !reflect.DeepEqual(q.Gold, []string{f.ID}) || q.Stale != nil {
				t.Errorf("fact %d: line %+v, query %+v", i, corpus[i], q)
			}
			if !keys && corpus[i].Subject != "" {
				t.Errorf("fact %d carries a key without keys", i)
			}
		}
	}
}

// supersedes reports whether the extractor lets B supersede A: both keyed,
// one key, two objects.
func supersedes(s Scenario) bool {
	a, okA := extract.Key(s.StateA)
	b, okB := extract.Key(s.StateB)
	return okA && okB && temporal.NewFactKey(a.Subject, a.Relation) == temporal.NewFactKey(b.Subject, b.Relation) &&
		temporal.NormalizeObject(a.Object) != temporal.NormalizeObject(b.Object)
}

// supersessionFloor is the rate each benchmark must keep on DefaultSeed;
// the measured rates are in the test log (MemStrata reports 97% on
// code_mutation).
var supersessionFloor = map[string]float64{
	CodeMutation: 0.95, ConfigMigration: 1, DependencyBump: 1, APIEvolution: 1,
}

// TestSupersessionRate measures the extractor on the benchmarks: the share
// of scenarios whose A and B key alike with different objects. It also
// requires that no two scenarios of a benchmark share a key, which would
// let one scenario's text supersede another's.
func TestSupersessionRate(t *testing.T) {
	for _, b := range Evolving(DefaultSeed) {
		hits := 0
		owner := make(map[temporal.FactKey]string)
		for _, s := range b.Scenarios {
			if supersedes(s) {
				hits++
			} else {
				a, okA := extract.Key(s.StateA)
				c, okB := extract.Key(s.StateB)
				t.Logf("%s: no supersession: %q → %+v %v; B → %+v %v", s.ID, s.StateA, a, okA, c, okB)
			}
			for _, text := range []string{s.StateA, s.StateB} {
				f, ok := extract.Key(text)
				if !ok {
					continue
				}
				k := temporal.NewFactKey(f.Subject, f.Relation)
				if o, seen := owner[k]; seen && o != s.ID {
					t.Errorf("%s and %s share the key %+v", o, s.ID, k)
				}
				owner[k] = s.ID
			}
		}
		rate := float64(hits) / float64(len(b.Scenarios))
		t.Logf("%s: supersession rate %d/%d = %.3f", b.Name, hits, len(b.Scenarios), rate)
		if rate < supersessionFloor[b.Name] {
			t.Errorf("%s: supersession rate %.3f < floor %.2f", b.Name, rate, supersessionFloor[b.Name])
		}
	}
	// Over many seeds, for the record: other draws of the templates.
	hits := map[string]int{}
	total := map[string]int{}
	for _, seed := range seeds {
		for _, b := range Evolving(seed) {
			for _, s := range b.Scenarios {
				total[b.Name]++
				if supersedes(s) {
					hits[b.Name]++
				}
			}
		}
	}
	for _, name := range []string{CodeMutation, ConfigMigration, DependencyBump, APIEvolution} {
		t.Logf("%s over %d seeds: %d/%d = %.3f", name, len(seeds), hits[name], total[name],
			float64(hits[name])/float64(total[name]))
	}
}

// No two distinct project facts share a fact key: a static fact must never
// supersede another.
func TestProjectFactsKeys(t *testing.T) {
	for _, seed := range seeds {
		facts := ProjectFacts(seed)
		keyed, shared := 0, 0
		keys := make([]temporal.FactKey, len(facts))
		for i, f := range facts {
			if k, ok := extract.Key(f.Text); ok {
				keyed++
				keys[i] = temporal.NewFactKey(k.Subject, k.Relation)
			}
		}
		for i := range keys {
			for j := i + 1; j < len(keys); j++ {
				if !keys[i].IsZero() && keys[i] == keys[j] {
					shared++
					t.Errorf("seed %d: %q and %q share the key %+v", seed, facts[i].Text, facts[j].Text, keys[i])
				}
			}
		}
		if seed == DefaultSeed {
			t.Logf("project_facts: %d/%d facts keyed, %d pairs of distinct facts share a key", keyed, len(facts), shared)
		}
	}
}
