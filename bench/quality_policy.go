package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/temporal"
)

// policyTemplate is one of the versioned-policy benchmark's 20 templates
// (SmartVector §9.1: "parental leave, VPN timeout, per-diem limits, incident
// SLAs, backup retention, release-freeze windows, etc."). A topic states
// Base + k·Step for its k-th canonical version (k = 0…3), so its values
// trend monotonically; Doc and Ask are the canonical text and the question,
// with the scope as the first argument and, for Doc, the value as the
// second.
type policyTemplate struct {
	Topic      string // what a rumour talks about
	Base, Step int
	Doc, Ask   string
	Unit       string
}

var policyTemplates = [20]policyTemplate{
	{"parental leave", 12, 2, "Parental leave policy (%[1]s): employees receive %[2]s weeks of paid parental leave.", "How many weeks of paid parental leave do %[1]s employees receive?", "weeks"},
	{"VPN timeout", 30, 15, "VPN access standard (%[1]s): idle VPN sessions are disconnected after %[2]s minutes.", "After how many minutes are idle VPN sessions disconnected for %[1]s?", "minutes"},
	{"per-diem limit", 50, 5, "Travel expenses (%[1]s): the daily meal per-diem limit is %[2]s USD.", "What is the daily meal per-diem limit for %[1]s travel?", "USD"},
	{"incident SLA", 60, -10, "Incident management (%[1]s): severity-1 incidents must be acknowledged within %[2]s minutes.", "Within how many minutes must %[1]s severity-1 incidents be acknowledged?", "minutes"},
	{"backup retention", 30, 15, "Backup policy (%[1]s): nightly database backups are retained for %[2]s days.", "How many days are %[1]s nightly database backups retained?", "days"},
	{"release freeze", 5, 2, "Release management (%[1]s): the quarter-end release freeze lasts %[2]s business days.", "How many business days does the %[1]s quarter-end release freeze last?", "business days"},
	{"password rotation", 90, -15, "Identity standard (%[1]s): passwords must be rotated every %[2]s days.", "How often, in days, must %[1]s passwords be rotated?", "days"},
	{"laptop refresh", 48, -6, "Hardware lifecycle (%[1]s): employee laptops are refreshed every %[2]s months.", "Every how many months are %[1]s employee laptops refreshed?", "months"},
	{"remote work", 1, 1, "Workplace policy (%[1]s): staff may work remotely up to %[2]s days per week.", "How many days per week may %[1]s staff work remotely?", "days per week"},
	{"expense approval", 500, 250, "Finance controls (%[1]s): expenses above %[2]s USD need director approval.", "Above what amount do %[1]s expenses need director approval?", "USD"},
	{"on-call rotation", 7, 7, "On-call handbook (%[1]s): each on-call rotation lasts %[2]s days.", "How many days does a %[1]s on-call rotation last?", "days"},
	{"log retention", 90, 30, "Logging standard (%[1]s): application logs are kept for %[2]s days.", "For how many days are %[1]s application logs kept?", "days"},
	{"MFA re-authentication", 24, -4, "Access policy (%[1]s): multi-factor re-authentication is required every %[2]s hours.", "Every how many hours is multi-factor re-authentication required for %[1]s?", "hours"},
	{"training budget", 1000, 250, "Learning programme (%[1]s): each employee has a yearly training budget of %[2]s USD.", "What is the yearly training budget per employee for %[1]s?", "USD"},
	{"API rate limit", 600, 300, "Platform limits (%[1]s): the public API allows %[2]s requests per minute per key.", "How many requests per minute per key does the %[1]s public API allow?", "requests per minute"},
	{"code review", 1, 1, "Engineering process (%[1]s): merges require %[2]s approving code reviews.", "How many approving code reviews do %[1]s merges require?", "approvals"},
	{"deployment window", 2, 1, "Change management (%[1]s): the weekly production deployment window is %[2]s hours long.", "How long, in hours, is the %[1]s weekly production deployment window?", "hours"},
	{"travel booking", 14, -3, "Travel booking (%[1]s): flights must be booked at least %[2]s days in advance.", "How many days in advance must %[1]s flights be booked?", "days"},
	{"vacation carry-over", 5, 5, "Leave policy (%[1]s): up to %[2]s unused vacation days carry over to the next year.", "How many unused vacation days carry over for %[1]s?", "days"},
	{"security patching", 30, -7, "Vulnerability management (%[1]s): critical security patches must be applied within %[2]s days.", "Within how many days must %[1]s apply critical security patches?", "days"},
}

// policyScopes make three topics of each template (topic i uses template
// i mod 20 and scope i div 20).
var policyScopes = [3]string{"Engineering", "Sales", "Operations"}

// policyAuthorities are the canonical sources (SmartVector §9.1:
// "{official-DB, policy, tech-doc, wiki}").
var policyAuthorities = [4]temporal.Source{temporal.SourceOfficialDB, temporal.SourcePolicy, temporal.SourceTechDoc, temporal.SourceWiki}

// PolicyConfig configures the versioned-policy benchmark generator.
type PolicyConfig struct {
	// Seed (default 7, SmartVector's SEED).
	Seed uint64
	// Topics (default 60) and Versions per topic (default 4).
	Topics, Versions int
	// RumourRate is the probability that a topic gets a Slack rumour
	// stating a wrong value (default 0.30; a negative value means 0).
	RumourRate float64
	// Now is the benchmark's present (default 2026-01-01T00:00:00Z).
	Now time.Time
}

func (c PolicyConfig) withDefaults() PolicyConfig {
	if c.Seed == 0 {
		c.Seed = 7
	}
	if c.Topics == 0 {
		c.Topics = 60
	}
	if c.Versions == 0 {
		c.Versions = 4
	}
	if c.RumourRate == 0 {
		c.RumourRate = 0.30
	} else if c.RumourRate < 0 {
		c.RumourRate = 0
	}
	if c.Now.IsZero() {
		c.Now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return c
}

// Dataset is one benchmark in the eval contract: what `tidemark eval
// --corpus NAME.corpus.jsonl --queries NAME.queries.jsonl` reads.
type Dataset struct {
	Name    string
	Corpus  []eval.CorpusLine
	Queries []eval.QueryLine
}

// PolicyDataset is the versioned-policy benchmark with what its generator
// decided.
type PolicyDataset struct {
	Dataset
	// Rumours is the number of Slack contradictions, Edges the number of
	// depends_on edges.
	Rumours, Edges int
	// Dev marks the queries of the dev half of the 50/50 split (the rest
	// are test): Dev[i] is about Queries[i].
	Dev []bool
	// Chunks[t] is the number of corpus lines about topic t (its versions
	// and its rumour): what plain RAG re-embeds when the topic's document
	// changes (SmartVector §10.5).
	Chunks []int
	// Dependents[t] is the number of depends_on edges pointing at topic t:
	// the ripple messages an edit to its document sends.
	Dependents []int
	// Latest[t] is the id of topic t's latest canonical version.
	Latest []string
}

// Query types of the versioned-policy benchmark (SmartVector §9.1).
const (
	PolicyCurrent   = "current"
	PolicyTimePoint = "time_point"
	PolicyConflict  = "conflict"
)

// GeneratePolicy builds the versioned-policy benchmark from SmartVector
// §9.1's description (its generator is not public):
//
//   - Topics topics from 20 templates (three scopes each), each with
//     Versions canonical versions whose values trend monotonically (Base +
//     k·Step). The topic's history window W is drawn from [240, 420] days
//     before Now; the first version opens it and the next ones follow at
//     40–90-day intervals (W grows to fit them, ending at least 11 days
//     before Now, so a rumour is always the newest line).
//   - Each topic's authority is drawn from {official_db, policy, tech_doc,
//     wiki}; the versions are one versioned document (doc_id = the topic,
//     version k+1, valid from and recorded at their date).
//   - Every fifth topic (5, 10, …) depends on the previous one: its latest
//     version lists the previous topic's latest version recorded before it
//     (one edge per such topic).
//   - With probability RumourRate a topic gets a Slack rumour (source
//     chat, authority 0.30) dated 1–10 days before Now, stating a wrong
//     value (the trend's next step) in chat wording.
//   - Queries: one current query per topic (gold = the latest version,
//     stale = the earlier ones), one time-point query per topic at a date
//     drawn uniformly inside one of its earlier versions' windows (gold =
//     that version, as_of = the date), and one conflict query per topic
//     with a rumour (the current query's text; gold = the latest version).
//     Queries are split 50/50 into dev and test by a seeded shuffle.
//
// The corpus is in transaction-time order. Texts only: the evaluation
// embeds them with the hashing TF-IDF embedder (1–2-grams).
func GeneratePolicy(cfg PolicyConfig) PolicyDataset {
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	day := func(d float64) time.Time { return cfg.Now.Add(time.Duration(d * float64(24*time.Hour))) }
	type line struct {
		l eval.CorpusLine
		t time.Time
	}
	var lines []line
	ds := PolicyDataset{Dataset: Dataset{Name: "policy"}}
	ds.Chunks = make([]int, cfg.Topics)
	ds.Dependents = make([]int, cfg.Topics)
	ds.Latest = make([]string, cfg.Topics)
	var current, timePoint, conflict []eval.QueryLine
	for t := range cfg.Topics {
		tpl := policyTemplates[t%len(policyTemplates)]
		scope := policyScopes[(t/len(policyTemplates))%len(policyScopes)]
		if t >= len(policyTemplates)*len(policyScopes) {
			scope = fmt.Sprintf("%s %d", scope, t/(len(policyTemplates)*len(policyScopes))+1)
		}
		src := policyAuthorities[r.IntN(len(policyAuthorities))]
		w := 240 + r.Float64()*180
		gaps := make([]float64, cfg.Versions-1)
		span := 0.0
		for i := range gaps {
			gaps[i] = 40 + r.Float64()*50
			span += gaps[i]
		}
		w = max(w, span+11+r.Float64()*30)
		starts := make([]float64, cfg.Versions) // days relative to Now (negative)
		starts[0] = -w
		for i, g := range gaps {
			starts[i+1] = starts[i] + g
		}
		docID := fmt.Sprintf("policy-%02d", t)
		ids := make([]string, cfg.Versions)
		for k := range cfg.Versions {
			ids[k] = fmt.Sprintf("%s-v%d", docID, k+1)
			at := day(starts[k])
			l := eval.CorpusLine{
				ID: ids[k], Text: fmt.Sprintf(tpl.Doc, scope, strconv.Itoa(tpl.Base+k*tpl.Step)),
				Kind: temporal.Versioned, Source: src, DocID: docID, Version: k + 1,
				ValidFrom: &at, RecordedAt: &at,
			}
			lines = append(lines, line{l, at})
		}
		ds.Latest[t] = ids[cfg.Versions-1]
		ds.Chunks[t] = cfg.Versions
		q := eval.QueryLine{
			ID: fmt.Sprintf("q-%s-current", docID), Text: fmt.Sprintf(tpl.Ask, scope), Now: cfg.Now,
			Gold: []string{ids[cfg.Versions-1]}, Stale: append([]string(nil), ids[:cfg.Versions-1]...), Type: PolicyCurrent,
		}
		current = append(current, q)
		// A time-point query inside one of the earlier versions' windows.
		k := r.IntN(cfg.Versions - 1)
		asOf := day(starts[k] + 1 + r.Float64()*(starts[k+1]-starts[k]-2))
		tp := eval.QueryLine{
			ID: fmt.Sprintf("q-%s-asof", docID), Text: fmt.Sprintf(tpl.Ask, scope), Now: cfg.Now, AsOf: &asOf,
			Gold: []string{ids[k]}, Type: PolicyTimePoint,
		}
		timePoint = append(timePoint, tp)
		if r.Float64() < cfg.RumourRate {
			ds.Rumours++
			ds.Chunks[t]++
			at := day(-(1 + r.Float64()*9))
			wrong := tpl.Base + cfg.Versions*tpl.Step
			if wrong <= 0 {
				wrong = tpl.Base - tpl.Step // a decreasing trend would reach zero: claim the first value back
			}
			l := eval.CorpusLine{
				ID:     fmt.Sprintf("%s-rumour", docID),
				Text:   fmt.Sprintf("I heard the %s %s is switching to %d %s next quarter.", scope, tpl.Topic, wrong, tpl.Unit),
				Source: temporal.SourceChat, ValidFrom: &at, RecordedAt: &at,
			}
			lines = append(lines, line{l, at})
			c := q
			c.ID = fmt.Sprintf("q-%s-conflict", docID)
			c.Type = PolicyConflict
			conflict = append(conflict, c)
		}
	}
	// Dependencies: every fifth topic's latest version depends on the
	// previous topic's latest version recorded before it.
	byID := make(map[string]int, len(lines))
	for i := range lines {
		byID[lines[i].l.ID] = i
	}
	for t := 5; t < cfg.Topics; t += 5 {
		from := &lines[byID[ds.Latest[t]]]
		for k := cfg.Versions; k >= 1; k-- {
			to := fmt.Sprintf("policy-%02d-v%d", t-1, k)
			if lines[byID[to]].t.Before(from.t) {
				from.l.DependsOn = []string{to}
				ds.Edges++
				ds.Dependents[t-1]++
				break
			}
		}
	}
	// Transaction-time order (stable: equal times keep generation order).
	slices.SortStableFunc(lines, func(a, b line) int { return a.t.Compare(b.t) })
	for _, l := range lines {
		ds.Corpus = append(ds.Corpus, l.l)
	}
	ds.Queries = append(append(append(ds.Queries, current...), timePoint...), conflict...)
	perm := r.Perm(len(ds.Queries))
	ds.Dev = make([]bool, len(ds.Queries))
	for _, i := range perm[:len(perm)/2] {
		ds.Dev[i] = true
	}
	return ds
}
