package temporal

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TimeRange is a half-open time interval [From, To) parsed from a query.
// A zero From is open at the start.
type TimeRange struct {
	From, To time.Time
}

// Window converts the range to days since epoch.
func (r TimeRange) Window(epoch time.Time) Window {
	return Window{From: Days(epoch, r.From, -Open), To: Days(epoch, r.To, Open)}
}

// String prints the range with an inclusive last day, as the article does:
// "[2021-01-01 → 2023-12-31]".
func (r TimeRange) String() string {
	from := "…"
	if !r.From.IsZero() {
		from = r.From.Format(time.DateOnly)
	}
	return "[" + from + " → " + r.To.Add(-time.Nanosecond).Format(time.DateOnly) + "]"
}

var months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

const (
	yearRE  = `((?:19|20)\d{2})`
	monthRE = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)`
)

var (
	reBetween   = regexp.MustCompile(`\b(?:from|between)?\s*` + yearRE + `\s*(?:-|–|—|to|and|through|until)\s*` + yearRE + `\b`)
	reSinceMon  = regexp.MustCompile(`\b(?:since|after)\s+` + monthRE + `\s+` + yearRE + `\b`)
	reSinceYear = regexp.MustCompile(`\b(?:since|after)\s+` + yearRE + `\b`)
	reBefore    = regexp.MustCompile(`\b(?:before|until|prior to)\s+` + yearRE + `\b`)
	reLast      = regexp.MustCompile(`\b(?:last|past|previous)\s+(\d+)\s+(day|week|month|year)s?\b`)
	reLastOne   = regexp.MustCompile(`\b(?:last|past|previous)\s+(day|week|month|year)\b`)
	reMonthYear = regexp.MustCompile(`\b` + monthRE + `\s+` + yearRE + `\b`)
	reYear      = regexp.MustCompile(`\b` + yearRE + `\b`)
)

// ParseTimeRange finds a time window in a query (Temporal RAG, "When the user
// specifies a time range": a strict filter when the query signals a date
// window, and nothing at all when it does not — "I didn't want it to guess").
// It understands, in this order of precedence:
//
//	"from 2021 to 2023", "2021-2023", "between 2021 and 2023" → 2021-01-01 … 2023-12-31
//	"since March 2024", "after March 2024" → 2024-03-01 … now
//	"since 2022" → 2022-01-01 … now
//	"before 2020", "until 2020" → … 2019-12-31
//	"last 30 days", "past 2 weeks", "last 6 months", "last year" → now − N … now
//	"in March 2024", "March 2024" → that month
//	"in 2019", "2019" → that year
//
// Years are 1900–2099. Ranges are half-open in UTC; "now" ends the range at
// now itself. ok is false when the query has no time signal.
func ParseTimeRange(query string, now time.Time) (r TimeRange, ok bool) {
	q := strings.ToLower(query)
	now = now.UTC()
	year := func(s string) int { y, _ := strconv.Atoi(s); return y }
	jan1 := func(y int) time.Time { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC) }
	if m := reBetween.FindStringSubmatch(q); m != nil {
		a, b := year(m[1]), year(m[2])
		if a > b {
			a, b = b, a
		}
		return TimeRange{From: jan1(a), To: jan1(b + 1)}, true
	}
	if m := reSinceMon.FindStringSubmatch(q); m != nil {
		return TimeRange{From: time.Date(year(m[2]), months[m[1]], 1, 0, 0, 0, 0, time.UTC), To: now}, true
	}
	if m := reSinceYear.FindStringSubmatch(q); m != nil {
		return TimeRange{From: jan1(year(m[1])), To: now}, true
	}
	if m := reBefore.FindStringSubmatch(q); m != nil {
		return TimeRange{To: jan1(year(m[1]))}, true
	}
	if m := reLast.FindStringSubmatch(q); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil && n > 0 && n <= 100000 {
			return TimeRange{From: back(now, n, m[2]), To: now}, true
		}
	}
	if m := reLastOne.FindStringSubmatch(q); m != nil {
		return TimeRange{From: back(now, 1, m[1]), To: now}, true
	}
	if m := reMonthYear.FindStringSubmatch(q); m != nil {
		from := time.Date(year(m[2]), months[m[1]], 1, 0, 0, 0, 0, time.UTC)
		return TimeRange{From: from, To: from.AddDate(0, 1, 0)}, true
	}
	if m := reYear.FindStringSubmatch(q); m != nil {
		y := year(m[1])
		return TimeRange{From: jan1(y), To: jan1(y + 1)}, true
	}
	return TimeRange{}, false
}

func back(now time.Time, n int, unit string) time.Time {
	switch unit {
	case "day":
		return now.AddDate(0, 0, -n)
	case "week":
		return now.AddDate(0, 0, -7*n)
	case "month":
		return now.AddDate(0, -n, 0)
	}
	return now.AddDate(-n, 0, 0)
}

// BaselineTemporalWeight is the article's temporal weight for a query with
// no temporal signal (advanced.py, parse_temporal_intent).
const BaselineTemporalWeight = 0.20

var temporalSignals = []struct {
	re     *regexp.Regexp
	weight float64
}{
	{regexp.MustCompile(`\b(current|latest|now|today|right now|at this moment)\b`), 0.70},
	{regexp.MustCompile(`\b(this week|this month|recent|recently)\b`), 0.55},
	{regexp.MustCompile(`\b(still|anymore|yet|has .+ changed)\b`), 0.50},
	{regexp.MustCompile(`\b(new|updated|changed|revised)\b`), 0.40},
	{regexp.MustCompile(`\b(best|recommend|should i)\b`), 0.35},
}

// TemporalIntent is the article's query-dependent temporal weight
// (Temporal RAG, "When the query tells you how much recency should matter";
// advanced.py TEMPORAL_SIGNALS): the first matching signal in the order
//
//	current|latest|now|today|right now|at this moment → 0.70
//	this week|this month|recent|recently              → 0.55
//	still|anymore|yet|has … changed                   → 0.50
//	new|updated|changed|revised                       → 0.40
//	best|recommend|should I                           → 0.35
//
// sets the weight; with none it is the baseline 0.20 and matched is "".
func TemporalIntent(query string) (weight float64, matched string) {
	q := strings.ToLower(query)
	for _, s := range temporalSignals {
		if m := s.re.FindString(q); m != "" {
			return s.weight, m
		}
	}
	return BaselineTemporalWeight, ""
}
