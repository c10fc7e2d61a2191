package temporal

import (
	"testing"
	"time"
)

// Temporal RAG advanced.py, "Improvement 2: Confidence with margin +
// conflict adjustments" — every published breakdown.
func TestConfidenceTiersReproduceArticle(t *testing.T) {
	tp := DefaultTiers()
	for _, c := range []struct {
		name                      string
		rel, tmp, auth, tw        float64
		wRel, wTmp, wAuth         float64
		base                      float64
		runnerUp                  float64
		hasRunnerUp               bool
		severity                  float64
		final, marginPen, confPen float64
		conf                      float64
		tier                      Tier
	}{
		{"policy_v3 clear winner", 0.41, 0.924, 0.70, 0.45, 0.522, 0.391, 0.087, 0.6363, 0, false, 0, 0.6363, 0, 0, 0.7485, TierHigh},
		{"policy_v3 conflict, narrow margin", 0.41, 0.924, 0.70, 0.45, 0.522, 0.391, 0.087, 0.6363, 0.6263, true, 0.5, 0.7363, 0.2, 0.05, 0.4727, TierLow},
		{"math_theorem", 0.55, 0.985, 0.90, 0.01, 0.845, 0.014, 0.141, 0.6054, 0, false, 0, 0.6054, 0, 0, 0.6992, TierMedium},
		{"old_research", 0.38, 0.463, 0.40, 0.35, 0.571, 0.333, 0.095, 0.4096, 0, false, 0, 0.4096, 0, 0, 0.3266, TierLow},
		{"barely_relevant", 0.12, 0.30, 0.20, 0.55, 0.480, 0.440, 0.080, 0.2056, 0, false, 0, 0.2056, 0, 0, 0.0867, TierLow},
	} {
		wr, wt, wa := BreakdownWeights(c.tw)
		approx(t, c.name+" w_relevance", wr, c.wRel, 0.0005)
		approx(t, c.name+" w_temporal", wt, c.wTmp, 0.0005)
		approx(t, c.name+" w_authority", wa, c.wAuth, 0.0005)
		base := BreakdownScore(c.rel, c.tmp, c.auth, c.tw)
		approx(t, c.name+" base", base, c.base, 0.00005)
		a := Assess(tp, base, c.runnerUp, c.hasRunnerUp, c.severity)
		approx(t, c.name+" final", a.Final, c.final, 0.00005)
		approx(t, c.name+" margin penalty", a.MarginPenalty, c.marginPen, 1e-12)
		approx(t, c.name+" conflict penalty", a.ConflictPenalty, c.confPen, 1e-12)
		approx(t, c.name+" confidence", a.Confidence, c.conf, 0.00006)
		if a.Tier != c.tier {
			t.Errorf("%s: tier %v, want %v", c.name, a.Tier, c.tier)
		}
	}
}

// advanced.py, "Improvement 4: Adaptive boost + confidence penalty".
func TestConflictSeverity(t *testing.T) {
	tp := DefaultTiers()
	for _, c := range []struct {
		old, new                 string
		severity, boost, confPen float64
	}{
		{"1000", "500", 0.5, 0.1, 0.05},
		{"100", "5000", 0.98, 0.196, 0.098},
		{"cache", "redis", 1, 0.2, 0.1},
		{"1000", "1000", 0, 0, 0},
		{"1,000", "1000", 0, 0, 0},
		{" Redis ", "redis", 0, 0, 0},
		{"0", "0", 0, 0, 0},
	} {
		s := ConflictSeverity(c.old, c.new)
		approx(t, c.old+"→"+c.new+" severity", s, c.severity, 1e-12)
		approx(t, c.old+"→"+c.new+" boost", tp.ConflictBoost*s, c.boost, 1e-12)
		approx(t, c.old+"→"+c.new+" penalty", tp.ConflictPenalty*s, c.confPen, 1e-12)
	}
}

// advanced.py, "Improvement 7: Freshness report API" (H = 30 days).
func TestFreshnessGrade(t *testing.T) {
	for _, c := range []struct {
		name    string
		age     float64
		decay   float64
		expired bool
		grade   string
	}{
		{"fresh_event", 0.1, 0.9977, false, "A"},
		{"current_policy", 45, 0.3536, false, "D"},
		{"math_theorem", 800, 0.0, false, "F"},
		{"expired", 1, 0.9772, true, "F"},
	} {
		d := Decay(Lambda(SmartVectorHalfLife), c.age, 0)
		approx(t, c.name+" decay", d, c.decay, 0.00005)
		if g := FreshnessGrade(d, c.expired); g != c.grade {
			t.Errorf("%s: grade %s, want %s", c.name, g, c.grade)
		}
	}
	for d, g := range map[float64]string{0.9: "A", 0.7: "B", 0.5: "C", 0.25: "D", 0.2499: "F"} {
		if got := FreshnessGrade(d, false); got != g {
			t.Errorf("FreshnessGrade(%v) = %s, want %s", d, got, g)
		}
	}
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// advanced.py, "Improvement 5: Time-range filter", and the phrases.
func TestParseTimeRange(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		q        string
		from, to time.Time
		str      string
	}{
		{"Show me research from 2021-2023", day(2021, 1, 1), day(2024, 1, 1), "[2021-01-01 → 2023-12-31]"},
		{"show me research from 2021 to 2023", day(2021, 1, 1), day(2024, 1, 1), "[2021-01-01 → 2023-12-31]"},
		{"between 2023 and 2021", day(2021, 1, 1), day(2024, 1, 1), ""},
		{"What were the findings in 2019?", day(2019, 1, 1), day(2020, 1, 1), "[2019-01-01 → 2019-12-31]"},
		{"2024 embeddings", day(2024, 1, 1), day(2025, 1, 1), ""},
		{"What changed since March 2024?", day(2024, 3, 1), now, ""},
		{"outages since 2022", day(2022, 1, 1), now, ""},
		{"incidents in the last 30 days", now.AddDate(0, 0, -30), now, ""},
		{"deploys over the past 2 weeks", now.AddDate(0, 0, -14), now, ""},
		{"releases in the last year", now.AddDate(-1, 0, 0), now, ""},
		{"the memo from June 2025", day(2025, 6, 1), day(2025, 7, 1), ""},
		{"policies before 2020", time.Time{}, day(2020, 1, 1), ""},
	} {
		r, ok := ParseTimeRange(c.q, now)
		if !ok || !r.From.Equal(c.from) || !r.To.Equal(c.to) {
			t.Errorf("%q: got %v %v ok=%v, want [%v, %v)", c.q, r.From, r.To, ok, c.from, c.to)
		}
		if c.str != "" && r.String() != c.str {
			t.Errorf("%q: String() = %s, want %s", c.q, r, c.str)
		}
	}
	for _, q := range []string{"Latest embeddings research", "What are the API rate limits? Will I get a 429 error?",
		"hiring 2,000 new engineers", "How does cosine similarity work?", "last mile delivery", ""} {
		if r, ok := ParseTimeRange(q, now); ok {
			t.Errorf("%q: found a time signal %v", q, r)
		}
	}
	// The range filters on creation time: research_2022 is kept, the others removed.
	epoch := day(2020, 1, 1)
	r, _ := ParseTimeRange("Show me research from 2021-2023", now)
	w := r.Window(epoch)
	for name, created := range map[string]time.Time{"research_2019": day(2019, 6, 1), "research_2022": day(2022, 3, 1), "research_2024": day(2024, 1, 15)} {
		if got, want := w.Contains(Days(epoch, created, 0)), name == "research_2022"; got != want {
			t.Errorf("%s in range = %v, want %v", name, got, want)
		}
	}
}

// advanced.py, "Improvement 6: Adaptive weighting from query language".
func TestTemporalIntent(t *testing.T) {
	for _, c := range []struct {
		q       string
		weight  float64
		matched string
	}{
		{"What is the current rate limit?", 0.70, "current"},
		{"How does cosine similarity work?", 0.20, ""},
		{"Has the rate limit policy changed recently?", 0.55, "recently"},
		{"What should I use for embeddings?", 0.35, "should i"},
		{"Is v1 still supported?", 0.50, "still"},
		{"Show the revised plan", 0.40, "revised"},
	} {
		w, m := TemporalIntent(c.q)
		if w != c.weight || m != c.matched {
			t.Errorf("%q: weight %v matched %q, want %v %q", c.q, w, m, c.weight, c.matched)
		}
	}
	// Applied to the article preset, the weight replaces w and 1 − w.
	p := Preset(MethodArticle).WithTemporalWeight(0.70)
	approx(t, "article sim weight", p.Weights.Sim, 0.30, 1e-12)
	approx(t, "article time weight", p.Weights.Time, 0.70, 1e-12)
	q := Preset(MethodSmartVector).WithTemporalWeight(0.5)
	approx(t, "smartvector sum", q.Weights.Sum(), 1, 1e-12)
	approx(t, "smartvector sim:conf ratio", q.Weights.Sim/q.Weights.Conf, 0.35/0.25, 1e-12)
}
