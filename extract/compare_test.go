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
	// The object of the predicate's own phrase (a place, a material), a
	// definite complement, a number spelt out with a fraction or a
	// possessive unit, a deadline after an object.
	{"The orchestra rehearses in the music block.", "The orchestra rehearses in the old chapel.", Update, "music block", "old chapel"},
	{"The flu clinic is held in Room 112.", "The flu clinic is held in the east wing lobby.", Update, "Room 112", "the east wing lobby"},
	{"The kettle is made of stainless steel.", "The kettle is made of recycled aluminium.", Update, "stainless steel", "recycled aluminium"},
	{"The caretaker's office is in the basement.", "The caretaker's office is on the ground floor.", Update, "in the basement", "on the ground floor"},
	{"The blood bank is located in the basement of the east wing.", "The blood bank is located on the ground floor of the east wing.", Update, "in the basement", "on the ground floor"},
	{"The meeting point for the tour is the fountain in Plaza Real.", "The meeting point for the tour is the steps of the cathedral.", Update, "fountain in Plaza Real", "steps of the cathedral"},
	{"Drivers take a break after four and a half hours.", "Drivers take a break after four hours.", Update, "four and a half hours", "four hours"},
	{"The security deposit is one month's rent.", "The security deposit is two months' rent.", Update, "one month's", "two months"},
	{"The discharge summary must reach the GP within 48 hours.", "The discharge summary must reach the GP within 24 hours.", Update, "48 hours", "24 hours"},
	{"The Arlo lamp ships from our Leeds warehouse.", "The Arlo lamp ships from our Dublin warehouse.", Update, "Leeds", "Dublin"},
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
	// Many values, whatever the value's shape; a scope; a recurring time.
	{"The Dunmore plant is certified under ISO 9001.", "The Dunmore plant is certified under ISO 14001.", Unrelated, "", ""},
	{"The Merlin drone is compatible with iOS.", "The Merlin drone is compatible with Android.", Unrelated, "", ""},
	{"The Greyfield depot is hiring drivers.", "The Greyfield depot is hiring mechanics.", Unrelated, "", ""},
	{"The Atlas tent comes in green.", "The Atlas tent comes in orange.", Unrelated, "", ""},
	{"The scholarship pays for accommodation.", "The scholarship pays for books.", Unrelated, "", ""},
	{"Masks are required in the operating theatre.", "Masks are required in the recovery ward.", Unrelated, "", ""},
	{"Viewings are held on Saturday mornings.", "Viewings are held on Wednesday evenings.", Unrelated, "", ""},
	{"The estate is in the hedgerow stewardship scheme.", "The estate is in the woodland stewardship scheme.", Unrelated, "", ""},
	{"The probation period is six months for managers.", "The probation period is three months for interns.", Unrelated, "", ""},
	{"The warehouse ships to Ireland.", "The warehouse ships to France.", Unrelated, "", ""},
}

// The reasons compare gives for what is not an Update name the rule that
// refused it.
func TestCompareReasons(t *testing.T) {
	for _, c := range []struct{ older, newer, why string }{
		{"Alice reports to Bob.", "Carol reports to Bob.", "change in the subject or verb"},
		{"Dr Okafor speaks French.", "Dr Okafor speaks Portuguese.", "many-valued slot"},
		{"Annual leave is 25 days for full-time staff.", "Annual leave is 25 days for contractors.", "qualifier"},
		{"Is the limit 100?", "Is the limit 200?", "not a plain statement"},
		{"The limit is 100.", "The limit is 100.", "the same words"},
	} {
		if ch, why := compare(c.older, c.newer); ch.Verdict != Unrelated || why != c.why {
			t.Errorf("compare(%q, %q) = %v, %q; want unrelated, %q", c.older, c.newer, ch.Verdict, why, c.why)
		}
	}
}

func TestCompare(t *testing.T) {
	for _, c := range compareCases {
		got := Compare(c.older, c.newer)
		if got.Verdict != c.want || c.want != Unrelated && (got.Old != c.old || got.New != c.new) {
			t.Errorf("Compare(%q, %q) = %+v, want %v %q → %q", c.older, c.newer, got, c.want, c.old, c.new)
		}
	}
}
