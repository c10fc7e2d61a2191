package extract

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func segTexts(segs []Segment) []string {
	var out []string
	for _, s := range segs {
		out = append(out, s.Text)
	}
	return out
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string // nil: stays whole
	}{
		// Statements on different subjects or relations.
		{"The API rate limit is 100 requests per minute and requests time out after 30 seconds.",
			[]string{"The API rate limit is 100 requests per minute", "requests time out after 30 seconds."}},
		{"The Paris office opens at 9. The Lyon office opens at 10.",
			[]string{"The Paris office opens at 9.", "The Lyon office opens at 10."}},
		{"The staging database runs on port 5433; the cache TTL is 60 seconds.",
			[]string{"The staging database runs on port 5433", "the cache TTL is 60 seconds."}},
		{"The monthly fee is €12, but the annual plan costs €120.",
			[]string{"The monthly fee is €12", "the annual plan costs €120."}},
		{"The trip takes four and a half hours and the fare is $30.",
			[]string{"The trip takes four and a half hours", "the fare is $30."}},
		{"Release notes: the beta program is capped at 500 testers; also, the Android build targets API level 34.",
			[]string{"the beta program is capped at 500 testers", "the Android build targets API level 34."}},
		{"fyi the VPN gateway is vpn-eu.example.net, the on-call rotation switches every Monday at 10:00, and Dr. Reyes approves refunds",
			[]string{"the VPN gateway is vpn-eu.example.net", "the on-call rotation switches every Monday at 10:00", "Dr. Reyes approves refunds"}},
		{"The trademark application was filed on 8 January, and the examiner is Harold Kim.",
			[]string{"The trademark application was filed on 8 January", "the examiner is Harold Kim."}},
		{"Our NPS for Q2 was 41, and the churn rate for Q2 was 2.8 percent.", // reported values
			[]string{"Our NPS for Q2 was 41", "the churn rate for Q2 was 2.8 percent."}},
		{"The locked mortgage rate is 5.1 percent, and the closing date is August 14.", // an adjective in -ed
			[]string{"The locked mortgage rate is 5.1 percent", "the closing date is August 14."}},
		{"Invoices are due within 30 days; late payments incur a 2% monthly fee.", // a verb the lists lack
			[]string{"Invoices are due within 30 days", "late payments incur a 2% monthly fee."}},
		{"Golf: my handicap is 14 and the club's membership fee is 1,900 dollars a year.", // a heading, not a speaker
			[]string{"my handicap is 14", "the club's membership fee is 1,900 dollars a year."}},
		{"The search bar placeholder reads 'Find anything', but the empty state headline reads 'Nothing here yet'.",
			[]string{"The search bar placeholder reads 'Find anything'", "the empty state headline reads 'Nothing here yet'."}},
		{"Unit 4B has two bedrooms, while Unit 6A has three bedrooms.", // nothing keys, every statement holds a value
			[]string{"Unit 4B has two bedrooms", "Unit 6A has three bedrooms."}},
		// One statement.
		{"The API rate limit is 100 requests per minute.", nil},
		{"The Breva kettle boils a full jug in three and a half minutes.", nil},
		{"The office opens at 9 and closes at 6.", nil},                     // no subject of its own
		{"The clinic accepts Visa and the clinic accepts Mastercard.", nil}, // shared subject and verb
		{"Kestrel delivers on Tuesdays and Fridays.", nil},                  // coordinated values
		{"The warehouse is in Leeds. It has four loading bays.", nil},       // a pronoun points back
		{"The valve sticks when cold, and the operators tap it with a wrench.", nil},
		// Narrative.
		{"Ana passed the ball to Marco, Marco dribbled past two defenders, and the keeper watched the shot curl in.", nil},
		{"The primary database crashed at 3am and the replica took over within a minute.", nil},
		{"User: what is the limit? Assistant: The limit is 100 and the timeout is 30 seconds.", nil},
		{"Ana: the standup is at 9:30. Ben: the retro is on Friday.", nil},
		{"I think the gym opens at 6 and the pool opens at 7.", nil},
		{"Maria said the depot opens at 6 and the shop opens at 8.", nil},
		{"The crew loads the truck at 6, then the driver leaves the depot at 7.", nil},
		{"Timeline for the audit: fieldwork starts on 3 March; the draft report follows on 28 March.", nil},
		{"The race day schedule: bib pickup at 6:00, wave one starts at 7:00, and the awards ceremony is at noon.", nil},
		{"The display goes up in stages: autumn décor in September, and the Christmas windows in mid-November.", nil},
		{"Line 2 runs on weekdays, and Line 2 also runs on Saturday mornings during peak season.", nil},
		{"The buddy helps with tools, and the buddy also helps with introductions.", nil},
		{"Prices rise in winter because demand grows, so the shop orders 40 crates early.", nil},
		{"The pump stops at 6, the valve closes, and the line shuts down.", nil},
		// Nothing to key.
		{"Ana manages the store and Ben runs the cafe.", nil},
	} {
		got := Split(tc.text)
		if !slices.Equal(segTexts(got), tc.want) {
			t.Errorf("Split(%q)\n got %q\nwant %q", tc.text, segTexts(got), tc.want)
			continue
		}
		for _, s := range got {
			if tc.text[s.Start:s.End] != s.Text {
				t.Errorf("Split(%q): segment %q is not text[%d:%d]", tc.text, s.Text, s.Start, s.End)
			}
		}
		if got != nil {
			// Every split passes the executor's own check of a plan.
			checked, err := CheckSegments(tc.text, segTexts(got))
			if err != nil {
				t.Errorf("CheckSegments(Split(%q)): %v", tc.text, err)
			}
			for i := range checked {
				if checked[i].Start != got[i].Start || checked[i].End != got[i].End {
					t.Errorf("CheckSegments(Split(%q)) offsets %d:%d, Split's %d:%d", tc.text, checked[i].Start, checked[i].End, got[i].Start, got[i].End)
				}
			}
		}
	}
}

func TestCheckSegments(t *testing.T) {
	const text = "Roadmap: the search redesign is owned by Kenji; offline mode targets the 4.0 release, and the docs live at docs.example.io."
	for _, tc := range []struct {
		segs []string
		why  string // "" when valid
	}{
		{[]string{"the search redesign is owned by Kenji", "offline mode targets the 4.0 release", "the docs live at docs.example.io."}, ""},
		{[]string{" the search redesign is owned by Kenji ", "offline mode targets the 4.0 release, and the docs live at docs.example.io."}, ""},
		{[]string{"the search redesign is owned by Kenji"}, "segments"},
		{[]string{"the search redesign is owned by Kenji", ""}, "empty"},
		{[]string{"the search redesign is owned by Kenji", "offline mode targets the 4.1 release"}, "not an exact substring"},
		{[]string{"offline mode targets the 4.0 release", "the search redesign is owned by Kenji"}, "not covered"},
		{[]string{"the search redesign is owned by Kenji; offline", "offline mode targets the 4.0 release", "the docs live at docs.example.io."}, "out of order"},
		{[]string{"the search redesign is owned by Kenji", "the docs live at docs.example.io."}, "not covered"},
		{[]string{"the search redesign is owned by Kenji", "offline mode targets the 4.0 release"}, "end of the text"},
		{[]string{"redesign is owned by Kenji", "offline mode targets the 4.0 release", "the docs live at docs.example.io."}, "not covered"},
	} {
		got, err := CheckSegments(text, tc.segs)
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("CheckSegments(%q): %v", tc.segs, err)
		case tc.why != "" && (!errors.Is(err, ErrSegments) || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("CheckSegments(%q) = %v, want an error saying %q", tc.segs, err, tc.why)
		case err == nil:
			for _, s := range got {
				if text[s.Start:s.End] != s.Text {
					t.Errorf("segment %q is not text[%d:%d]", s.Text, s.Start, s.End)
				}
			}
		}
	}
}

// FuzzSplit checks that Split never panics, is deterministic, and returns
// either nothing or a split that CheckSegments accepts, every segment
// keyed or a clause.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"The API rate limit is 100 requests per minute and requests time out after 30 seconds.",
		"A: b. C: d.", "The x is 1; the y is 2; the z is 3.", "and and and", ", , ,", "The x is 1. . . The y is 2.",
		"Notes: ok so the port is 8080, and the host is db.example.", "\xff The x is 1; the y is 2.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Split(s)
		if again := Split(s); !slices.Equal(segTexts(got), segTexts(again)) {
			t.Fatalf("Split(%q) not deterministic", s)
		}
		if got == nil {
			return
		}
		if len(got) < 2 {
			t.Fatalf("Split(%q) = %d segments", s, len(got))
		}
		if _, err := CheckSegments(s, segTexts(got)); err != nil {
			t.Fatalf("Split(%q) = %q: %v", s, segTexts(got), err)
		}
	})
}
