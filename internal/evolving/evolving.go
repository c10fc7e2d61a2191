package evolving

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/extract"
)

// DefaultSeed is the seed of the published datasets.
const DefaultSeed uint64 = 20260511

// Benchmark names, which are also the query types of their datasets.
const (
	CodeMutation    = "code_mutation"
	ConfigMigration = "config_migration"
	DependencyBump  = "dependency_bump"
	APIEvolution    = "api_evolution"
	ProjectFactsSet = "project_facts"
	// StaticType is the query type of [FactsCorpus].
	StaticType = "static"
)

// Scenario is one evolving fact: StateA and StateB are identical except
// that ValueA is replaced by ValueB; Question holds neither value and its
// gold answer is ValueB.
type Scenario struct {
	ID             string
	StateA, StateB string
	Question       string
	ValueA, ValueB string
}

// Fact is one static project fact with a question whose answer is Answer.
type Fact struct {
	ID, Text, Question, Answer string
}

// Benchmark is one evolving benchmark: its name and its scenarios in
// order. Like Scenario and Fact it is plain data, safe to share for
// reading.
type Benchmark struct {
	Name      string
	Scenarios []Scenario
}

// item is a template: text and question with one {v} slot in text and
// candidate (A, B) value pairs. fixed items are the paper's, whose single
// pair is always used.
type item struct {
	text, question string
	pairs          [][2]string
}

// family is a group of templates of which count are drawn.
type family struct {
	count int
	items []item
}

// pcgStream separates the generator streams of the datasets drawn from
// one seed.
const pcgStream = 0x7469_6465_6d61_726b // "tidemark"

// newRand returns the dataset's generator: PCG seeded with seed, on the
// dataset's own stream.
func newRand(seed uint64, dataset int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, pcgStream+uint64(dataset)))
}

// Evolving returns the four evolving benchmarks, in the order
// code_mutation, config_migration, dependency_bump, api_evolution. The
// same seed gives the same scenarios.
func Evolving(seed uint64) []Benchmark {
	specs := []struct {
		name     string
		fixed    []item
		families []family
	}{
		{CodeMutation, paperCodeMutation, codeMutationFamilies},
		{ConfigMigration, paperConfigMigration, configMigrationFamilies},
		{DependencyBump, paperDependencyBump, dependencyBumpFamilies},
		{APIEvolution, paperAPIEvolution, apiEvolutionFamilies},
	}
	out := make([]Benchmark, len(specs))
	for d, sp := range specs {
		out[d] = Benchmark{Name: sp.name, Scenarios: generate(sp.name, newRand(seed, d), sp.fixed, sp.families)}
	}
	return out
}

// generate instantiates the fixed items, then count items of each family
// in an order drawn from r, each with a value pair drawn from r among
// those that no earlier scenario mentions and whose values the earlier
// texts do not mention. A family without enough usable items is a broken
// template table: generate panics.
func generate(name string, r *rand.Rand, fixed []item, families []family) []Scenario {
	var out []Scenario
	add := func(it item, p [2]string) {
		out = append(out, Scenario{
			ID:       fmt.Sprintf("%s-%02d", name, len(out)+1),
			StateA:   fill(it.text, p[0]),
			StateB:   fill(it.text, p[1]),
			Question: it.question,
			ValueA:   p[0],
			ValueB:   p[1],
		})
	}
	for _, it := range fixed {
		add(it, it.pairs[0])
	}
	for f, fam := range families {
		var drawn []Scenario
		order := r.Perm(len(fam.items))
		for _, i := range order {
			if len(drawn) == fam.count {
				break
			}
			it := fam.items[i]
			for _, j := range r.Perm(len(it.pairs)) {
				p := it.pairs[j]
				if usable(out, it, p) {
					add(it, p)
					drawn = append(drawn, out[len(out)-1])
					break
				}
			}
		}
		if len(drawn) < fam.count {
			panic(fmt.Sprintf("evolving: %s family %d: %d usable templates, want %d", name, f, len(drawn), fam.count))
		}
	}
	return out
}

// usable reports whether a value pair may join the scenarios: the values
// differ, each occurs once in its text and not in the question, and no
// earlier scenario mentions them or has a value this template's texts
// mention.
func usable(prev []Scenario, it item, p [2]string) bool {
	a, b := fill(it.text, p[0]), fill(it.text, p[1])
	if p[0] == p[1] || Mentions(a, p[1]) || Mentions(b, p[0]) || Mentions(it.question, p[0]) || Mentions(it.question, p[1]) ||
		strings.Count(a, p[0]) != 1 || strings.Count(b, p[1]) != 1 {
		return false
	}
	for _, s := range prev {
		for _, v := range []string{p[0], p[1]} {
			if Mentions(s.StateA, v) || Mentions(s.StateB, v) || strings.EqualFold(v, s.ValueA) || strings.EqualFold(v, s.ValueB) {
				return false
			}
		}
		for _, v := range []string{s.ValueA, s.ValueB} {
			if Mentions(a, v) || Mentions(b, v) {
				return false
			}
		}
	}
	return true
}

func fill(text, v string) string { return strings.Replace(text, "{v}", v, 1) }

// Mentions reports whether text holds value as a whole token, in any
// case: not inside a longer word, number, version or path ("10" is not
// mentioned by "10485760" or "1.10", "tag" not by "tags", "/api/v1/users"
// not by "/api/v1/users/me", but "25" is by "is 25." and "fetch_user" by
// "fetch_user(uid)").
func Mentions(text, value string) bool {
	if value == "" {
		return false
	}
	lt, lv := strings.ToLower(text), strings.ToLower(value)
	for off := 0; ; {
		i := strings.Index(lt[off:], lv)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(lv)
		before, _ := utf8.DecodeLastRuneInString(lt[:i])
		after, n := utf8.DecodeRuneInString(lt[end:])
		next, _ := utf8.DecodeRuneInString(lt[min(end+n, len(lt)):])
		okBefore := i == 0 || !(wordRune(before) || strings.ContainsRune(".-/", before))
		okAfter := end == len(lt) || !(wordRune(after) || strings.ContainsRune(".-/", after) && wordRune(next))
		if okBefore && okAfter {
			return true
		}
		off = i + 1
	}
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// markerWords tell which of two states is the later one (MemStrata B.1):
// they never appear in a state text. Matched as whole words in any case;
// "no longer" matches across any white space.
var markerWords = []string{
	"old", "older", "oldest", "new", "newer", "newest", "current", "currently",
	"previous", "previously", "deprecated", "legacy", "outdated", "latest",
	"former", "formerly", "updated", "now", "anymore", "replaced", "renamed",
	"changed", "upgraded", "obsolete", "superseded",
}

// Marker returns the first staleness marker in text and true, or "" and
// false. A marker is a whole word: letters on either side make another
// word ("renewal", "nowhere", "known"), while digits, underscores and
// punctuation do not ("new_user", "v2-legacy" hold markers).
func Marker(text string) (string, bool) {
	var words []string
	var spans [][2]int
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsLetter(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsLetter(r) {
				break
			}
			j += n
		}
		words = append(words, strings.ToLower(text[i:j]))
		spans = append(spans, [2]int{i, j})
		i = j
	}
	for k, w := range words {
		for _, m := range markerWords {
			if w == m {
				return text[spans[k][0]:spans[k][1]], true
			}
		}
		if w == "no" && k+1 < len(words) && words[k+1] == "longer" &&
			strings.TrimSpace(text[spans[k][1]:spans[k+1][0]]) == "" {
			return text[spans[k][0]:spans[k+1][1]], true
		}
	}
	return "", false
}

// Corpus writes the benchmark in eval's contract: every state-A line (id
// "<scenario>-a") in scenario order, then every state-B line ("-b"), the
// i-th line recorded at start + i hours; static lines with text only. One
// query per scenario (id the scenario's) at now = one day after the last
// line: gold the B line, stale the A line, type the benchmark's name.
// With keys, a line whose text [extract.Key] keys carries its subject,
// relation and object.
func (b Benchmark) Corpus(start time.Time, keys bool) ([]eval.CorpusLine, []eval.QueryLine) {
	n := len(b.Scenarios)
	corpus := make([]eval.CorpusLine, 0, 2*n)
	for _, state := range []string{"a", "b"} {
		for _, s := range b.Scenarios {
			text := s.StateA
			if state == "b" {
				text = s.StateB
			}
			corpus = append(corpus, line(s.ID+"-"+state, text, start.Add(time.Duration(len(corpus))*time.Hour), keys))
		}
	}
	now := queryTime(corpus)
	queries := make([]eval.QueryLine, n)
	for i, s := range b.Scenarios {
		queries[i] = eval.QueryLine{ID: s.ID, Text: s.Question, Now: now,
			Gold: []string{s.ID + "-b"}, Stale: []string{s.ID + "-a"}, Type: b.Name}
	}
	return corpus, queries
}

// FactsCorpus writes static facts in eval's contract: one line per fact
// (id the fact's), the i-th recorded at start + i hours, and one query per
// fact (id "<fact>-q") at one day after the last line, whose gold is the
// fact, with no stale answer, of type "static".
func FactsCorpus(facts []Fact, start time.Time, keys bool) ([]eval.CorpusLine, []eval.QueryLine) {
	corpus := make([]eval.CorpusLine, len(facts))
	for i, f := range facts {
		corpus[i] = line(f.ID, f.Text, start.Add(time.Duration(i)*time.Hour), keys)
	}
	now := queryTime(corpus)
	queries := make([]eval.QueryLine, len(facts))
	for i, f := range facts {
		queries[i] = eval.QueryLine{ID: f.ID + "-q", Text: f.Question, Now: now, Gold: []string{f.ID}, Type: StaticType}
	}
	return corpus, queries
}

func line(id, text string, at time.Time, keys bool) eval.CorpusLine {
	l := eval.CorpusLine{ID: id, Text: text, RecordedAt: &at}
	if keys {
		if f, ok := extract.Key(text); ok {
			l.Subject, l.Relation, l.Object = f.Subject, f.Relation, f.Object
		}
	}
	return l
}

// queryTime is one day after the last line's record time (the zero time
// for an empty corpus, which eval rejects).
func queryTime(corpus []eval.CorpusLine) time.Time {
	if len(corpus) == 0 {
		return time.Time{}
	}
	return corpus[len(corpus)-1].RecordedAt.Add(24 * time.Hour)
}
