package extract

import "testing"

// compareCases are worked examples of Compare, written for this test:
// updates of single-valued facts, and different facts that share their
// wording (subject, scope, relation, many-valued relations).
var compareCases = []struct {
	older, newer string
	want         Verdict
	old, new     string // the changed values, for an Update or a Conflict
}{
	{"The API rate limit is 100 requests per minute.", "The API rate limit is 250 requests per minute.", Update, "100", "250"},
	{"The on-call lead is Maria Lopez.", "The on-call lead is Kenji Sato.", Update, "Maria Lopez", "Kenji Sato"},
	{"The fiscal year ends on June 30.", "The fiscal year ends on September 30.", Update, "June 30", "September 30"},
	{"The primary cluster runs on eight nodes.", "The primary cluster runs on twelve nodes.", Update, "eight", "twelve"},
	{"The council meets on the second Tuesday of the month.", "The council meets on the first Tuesday of the month.", Update, "second", "first"},
	{"Loyalty members earn one point per dollar.", "Loyalty members earn two points per dollar.", Update, "one", "two"},
	{"Two-factor authentication is enabled for all accounts.", "Two-factor authentication is disabled for all accounts.", Update, "enabled", "disabled"},
	{"The child lock is enabled by default.", "The child lock is disabled by default.", Update, "enabled", "disabled"},
	{"The attending physician is Dr. Ifeoma Chukwu.", "The attending physician is Dr. Samuel Reyes.", Update, "Ifeoma Chukwu", "Samuel Reyes"},
	{"The auditor is Hartwell & Pryce.", "The auditor is Bexley Lund.", Update, "Hartwell & Pryce", "Bexley Lund"},
	{"Fasting before the test should last 8 hours.", "Fasting before the test should last 10 hours.", Update, "8 hours", "10 hours"},
	{"The library closes at midnight.", "The library closes at 2 a.m.", Update, "midnight", "2 a.m"},
	{"Alice reports to Bob.", "Alice reports to Carol.", Update, "Bob", "Carol"},
	// A conflict: a verb of choice with a plain object, a negation.
	{"The frontend team prefers tabs.", "The frontend team prefers spaces.", Conflict, "tabs", "spaces"},
	{"The cache is enabled in staging.", "The cache is not enabled in staging.", Conflict, "", "not"},
	// Different facts.
	{"The Paris office opens at 9.", "The Lyon office opens at 9.", Unrelated, "", ""},
	{"The Paris office opens at 9.", "The Paris office closes at 9.", Unrelated, "", ""},
	{"Alice reports to Bob.", "Carol reports to Bob.", Unrelated, "", ""},
	{"Annual leave is 25 days for full-time staff.", "Annual leave is 25 days for contractors.", Unrelated, "", ""},
	{"The clinic is open until 8 p.m. on Tuesdays.", "The clinic is open until 8 p.m. on Thursdays.", Unrelated, "", ""},
	{"The statute of limitations is four years in Calloway.", "The statute of limitations is four years in Merrin.", Unrelated, "", ""},
	{"The clinic accepts Aetna insurance.", "The clinic accepts Cigna insurance.", Unrelated, "", ""},
	{"Dr Okafor speaks French.", "Dr Okafor speaks Portuguese.", Unrelated, "", ""},
	{"The runbook is available in English.", "The runbook is available in Spanish.", Unrelated, "", ""},
	{"Alice is a nurse.", "Alice is a pharmacist.", Unrelated, "", ""},
	{"The UPS units are serviced by Voltaris Power.", "The UPS units are manufactured by Voltaris Power.", Unrelated, "", ""},
	{"The band tracks heart rate.", "The band tracks sleep.", Unrelated, "", ""},
	{"Aisle 7 stocks cleaning supplies.", "Aisle 8 stocks cleaning supplies.", Unrelated, "", ""},
	{"Is the limit 100?", "Is the limit 200?", Unrelated, "", ""},
	{"The project pins numpy==1.24.0 in requirements.txt.", "The project pins pydantic==2.4.2 in requirements.txt.", Unrelated, "", ""},
	{"The project pins numpy==1.24.0 in requirements.txt.", "The project pins numpy==1.26.4 in requirements.txt.", Update, "numpy==1.24.0", "numpy==1.26.4"},
	{"The API rate limit is 100 requests per minute.", "The API rate limit is 100 requests per minute.", Unrelated, "", ""},
	{"The limit is 100.", "The limit is 100 for free plans.", Unrelated, "", ""},
}

func TestCompare(t *testing.T) {
	for _, c := range compareCases {
		got := Compare(c.older, c.newer)
		if got.Verdict != c.want || c.want != Unrelated && (got.Old != c.old || got.New != c.new) {
			t.Errorf("Compare(%q, %q) = %+v, want %v %q → %q", c.older, c.newer, got, c.want, c.old, c.new)
		}
	}
}
