package extract

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Segment is one statement of a text divided by [Split] or checked by
// [CheckSegments]: Text is exactly text[Start:End] of the original.
type Segment struct {
	Start, End int
	Text       string
	// Fact is the segment's key when [Key] finds one (Split's segments
	// always have one; a checked plan's may not).
	Fact Fact
	// Keyed says Fact was found.
	Keyed bool
}

// Limits of Split.
const (
	// MaxSplitBytes bounds the text Split divides: longer texts are
	// documents, which chunking (not Split) divides.
	MaxSplitBytes = 4000
	// MaxSegments bounds the statements of one split.
	MaxSegments = 8
)

// Split divides a text that states several separate facts into its
// statements — All-Mem's Split ("semantic mitosis", App. B.2.1), made
// deterministic: each segment is an exact substring of text (no
// paraphrase), the segments are in order, do not overlap, and cover the
// text but for the joins between them (white space, punctuation and the
// joining words of [CheckSegments]) and a heading or filler before the
// first ("Release notes:", "fyi", "ok so"). It returns nil when the text
// stays whole, which is the answer unless every rule below holds — a
// wrong split cuts a statement from the words it needs, so the rules are
// built for precision:
//
//   - the text is cut only at a sentence end (". ", "! ", "? " before a
//     capital or a digit, not after an abbreviation or an initial), a
//     semicolon, a comma, or a coordinating "and", "but", "while" or
//     "whereas" (with or without a comma; "and also", "; also" too);
//   - every resulting statement is a present-tense clause of its own: a
//     subject of its own words (not a pronoun) before one present main
//     verb (no past tense: an account of events stays whole; a passive
//     "was filed on 8 January" is a dated fact, not an event), no
//     negation, hedge or question, and no pronoun that points back ("the
//     operators tap it");
//   - a piece that is not such a clause is joined to the statement
//     before it (a coordinated value: "four and a half hours", "Monday,
//     Wednesday and Friday"; a clause without its own subject: "opens at
//     9 and closes at 6"), and so is one with the same subject and verb as
//     the statement before it (clauses sharing subject and relation are
//     one statement: "accepts Visa and accepts Mastercard");
//   - one statement is keyed by [Key] (or every statement holds a value:
//     a number, a name, a code value), and at most one has neither key
//     nor value: a split is for supersession to act on the right part,
//     and clauses without a value ("the valve closes, and the line shuts
//     down") are more often a story's steps than facts;
//   - narrative is protected (All-Mem's "narrative protection", App. C.1):
//     a text with speaker turns ("User:", "Ana: … Ben: …"), reported
//     speech (said, asked, told…), a first-person speaker (I, we, me, us),
//     a piece that opens with a sequence word (then, later, next,
//     finally, afterwards…), or a heading that announces a sequence
//     ("Timeline:", "Steps:", "Itinerary:") is not split at all.
//
// At least two statements must remain. Split is a pure function, safe for
// concurrent use.
func Split(text string) []Segment { return segment(text, false) }

// Statements divides a text into the statements Split would cut it into
// (exact substrings, in order, covering it but for joins, a heading and
// fillers), without Split's judgement of whether they are separate facts:
// a piece that is no clause of its own stays with the statement before
// it, but the statements need not be keyed, hold values or be in the
// present tense, and sequences are divided too. It is for splitting on
// evidence — a later update that restates one of the statements with one
// value changed shows that it stands on its own (the engine's split on
// update) — and returns nil for a text with one statement, or with speaker
// turns or reported speech.
func Statements(text string) []Segment { return segment(text, true) }

// segment is Split (evidence false) and Statements (evidence true).
func segment(text string, evidence bool) []Segment {
	if len(text) > MaxSplitBytes || !utf8.ValidString(text) {
		return nil
	}
	toks := tokenize(text)
	if len(toks) < 6 || narrative(toks) {
		return nil
	}
	first := lead(toks)
	for k, t := range toks[:first] {
		if evidence {
			break
		}
		if sequenceHeadings[t.lower] {
			return nil // "Timeline:", "Steps:": a sequence, however its parts read
		}
		if third, known := verbForm(t.lower); copulas[t.lower] || pastCopulas[t.lower] ||
			k > 0 && !strings.HasPrefix(t.trail, ":") && (known && third || len(t.lower) >= 4 && strings.HasSuffix(t.lower, "s") && prepositions[toks[k+1].lower]) {
			return nil // a sentence that announces a list ("The display goes up in stages:"), not a heading
		}
	}
	// Pieces between candidate cuts: [first token, end token), starting
	// after the joining word.
	type piece struct{ i, j int }
	var pieces []piece
	start := first
	for k := first; k+1 < len(toks); k++ {
		next, ok := cutAfter(toks, k)
		if !ok {
			continue
		}
		if next >= len(toks) {
			break
		}
		if k+1 > start {
			pieces = append(pieces, piece{start, k + 1})
		}
		start = next
		k = next - 1
	}
	if start < len(toks) {
		pieces = append(pieces, piece{start, len(toks)})
	}
	if len(pieces) < 2 {
		return nil
	}
	for i, p := range pieces[1:] {
		if evidence && sequenceWords[toks[p.i].lower] && toks[p.i].trail == "" && p.j-p.i >= 3 {
			pieces[i+1].i++ // "…, then the driver leaves at 7": the statement starts after "then"
			continue
		}
		if !evidence && sequenceWords[toks[p.i].lower] && p.j-p.i >= 3 {
			return nil // "…, then the driver unloads the crates" (not "iOS 16 and later")
		}
	}
	type stmt struct {
		seg    Segment
		head   string // the subject and main verb, for clauses that share them
		clause bool
	}
	statement := func(i, j int, later bool) stmt {
		s, e := toks[i].start-len(toks[i].lead), toks[j-1].end+len(toks[j-1].trail)
		e = s + len(strings.TrimRight(text[s:e], ",;:"))
		st := stmt{seg: Segment{Start: s, End: e, Text: text[s:e]}}
		st.head, st.clause = clauseHead(st.seg.Text)
		if evidence && !st.clause {
			st.head, st.clause = looseClause(toks[i:j])
		}
		if later && st.clause {
			for _, t := range toks[i:j] {
				if backPronouns[t.lower] {
					st.clause = false
				}
			}
		}
		return st
	}
	var out []stmt
	cur := pieces[0]
	curSt := statement(cur.i, cur.j, false)
	for _, p := range pieces[1:] {
		ps := statement(p.i, p.j, true)
		if curSt.clause && ps.clause && !sameHead(ps.head, curSt.head) {
			out = append(out, curSt)
			cur, curSt = p, ps
			continue
		}
		cur.j = p.j
		curSt = statement(cur.i, cur.j, false)
	}
	out = append(out, curSt)
	if len(out) < 2 || len(out) > MaxSegments {
		return nil
	}
	segs := make([]Segment, len(out))
	if evidence {
		for i, st := range out {
			segs[i] = st.seg
			segs[i].Fact, segs[i].Keyed = Key(st.seg.Text)
		}
		return segs
	}
	keyed, bare := false, 0
	for i, st := range out {
		if !st.clause {
			return nil
		}
		segs[i] = st.seg
		segs[i].Fact, segs[i].Keyed = Key(st.seg.Text)
		keyed = keyed || segs[i].Keyed
		if !segs[i].Keyed && !hasValue(st.seg.Text) {
			bare++
		}
	}
	if !keyed && bare > 0 || bare > 1 {
		return nil // "the valve closes, and the line shuts down": a story's steps
	}
	return segs
}

// looseClause is Statements' test of a piece that clauseHead refuses: at
// least three words, the first not a pronoun, and a verb of any tense
// after it (a copula, a form the lists know, a word in -s or -ed, an
// irregular past). Its head is the words up to that verb.
func looseClause(toks []token) (string, bool) {
	if len(toks) < 3 || pronounSubjects[toks[0].lower] {
		return "", false
	}
	for k := 1; k < len(toks)-1; k++ {
		w := toks[k].lower
		_, known := verbForm(w)
		if copulas[w] || pastCopulas[w] || pastForms[w] || known || isLower(toks[k].core) && len(w) >= 4 && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "s")) {
			var b strings.Builder
			for _, t := range toks[:k+1] {
				if !articles[t.lower] {
					b.WriteString(t.lower)
					b.WriteByte(' ')
				}
			}
			return b.String(), true
		}
	}
	return "", false
}

// sameHead reports whether two clause heads share subject and verb: the
// same verb, and the later subject's words among the earlier's ("the
// onboarding buddy helps" / "the buddy also helps"; not "the Paris office
// opens" / "the Lyon office opens").
func sameHead(later, earlier string) bool {
	lw, ew := strings.Fields(later), strings.Fields(earlier)
	if len(lw) == 0 || len(ew) == 0 || lw[len(lw)-1] != ew[len(ew)-1] {
		return false
	}
	have := map[string]bool{}
	for _, w := range ew[:len(ew)-1] {
		have[w] = true
	}
	for _, w := range lw[:len(lw)-1] {
		if !have[w] && !headAdverbs[w] {
			return false
		}
	}
	return true
}

// headAdverbs may stand between a subject and its verb.
var headAdverbs = wordSet("also still too only now currently usually always often")

// lead returns the first token of a text's statements: past a heading
// ("Release notes:", at most maxHeading words ending in a colon) and
// filler words ("ok so", "fyi", "heads up:").
func lead(toks []token) int {
	k := 0
	for h := 0; h < min(maxHeading, len(toks)-1); h++ {
		if strings.HasPrefix(toks[h].trail, ":") {
			k = h + 1
			break
		}
		if strings.ContainsAny(toks[h].trail, ".;!?,") {
			break
		}
	}
	for k < len(toks)-1 && fillerWords[toks[k].lower] {
		k++
	}
	return k
}

// maxHeading bounds the words of a heading before the first statement.
const maxHeading = 6

// clauseHead reports whether text is one present-tense statement with a
// subject of its own, and returns its head: the subject and main verb,
// lower-case.
func clauseHead(text string) (string, bool) {
	s := parse(text)
	if s == nil || len(s.toks) < 3 || !s.statement(false) || pronounSubjects[s.toks[0].lower] {
		return "", false
	}
	if s.findVerb() && s.mv >= 1 && s.mv+1 < len(s.toks) {
		// findVerb's last resort, a word in -s after the subject, is a
		// plural noun when a phrase follows it ("the windows in
		// November"), unless the lists know it as a verb.
		w := s.toks[s.mv].lower
		if _, known := verbForm(w); !known && !copulas[w] && prepositions[s.toks[s.mv+1].lower] {
			return "", false
		}
	}
	if !s.findVerb() || s.mv < 1 {
		// findVerb refuses what Key cannot key (a past copula, a verb it
		// does not know): the first copula, passive or third-person verb
		// after the subject's first word is the main verb here.
		s.mv = -1
		for k := 1; k < len(s.toks)-1 && s.mv < 0; k++ {
			w := s.toks[k].lower
			third, known := verbForm(w)
			prev := s.toks[k-1].lower
			switch {
			case !s.word(k):
			case copulas[w] || pastCopulas[w] || known && third:
				s.mv = k
			case isLower(s.toks[k].core) && !determinersEd[prev] && !prepositions[prev] && !conjunctions[prev] && !prepositions[w] &&
				(len(w) >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") &&
					!prepositions[s.toks[k+1].lower] ||
					(pluralNoun(s.toks[k-1]) || pluralHeads[prev]) && s.word(k-1) && !strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ed")):
				// A verb the lists lack: a third-person form in -s before
				// its object ("totals €12,480", "tops out"; not a plural
				// noun before a phrase: "the windows in November"), or a
				// base form after a plural noun ("late payments incur",
				// "junior staff give").
				s.mv = k
			}
		}
		if s.mv < 1 {
			return "", false
		}
	}
	for k := 1; k <= s.mv && k < len(s.toks); k++ {
		if past(s.toks, k) && !(k == s.mv && pastCopulas[s.toks[k].lower] && k+1 < len(s.toks) && !s.word(k+1)) {
			return "", false // (a past copula before a value reports the value: "the fill volume was 500 ml")
		}
	}
	var b strings.Builder
	for _, t := range s.toks[:s.mv+1] {
		if articles[t.lower] {
			continue
		}
		b.WriteString(t.lower)
		b.WriteByte(' ')
	}
	return b.String(), true
}

// determiners before a word in -ed make it an adjective.
var determinersEd = wordSet("the a an this that these those each every our your its their his her my")

// past reports whether toks[k] is a past-tense verb: a past copula or
// auxiliary, an irregular past form, or a word in -ed that no copula or
// auxiliary makes a participle ("is zoned", "has been moved") and no
// determiner an adjective ("the locked rate"). A past copula before a
// value is a reported value ("the batch size was 5,000 bottles"), which
// reportedValue tells.
func past(toks []token, k int) bool {
	w := toks[k].lower
	if pastCopulas[w] && k+1 < len(toks) && participleShape(toks[k+1].lower) {
		return false // a dated passive fact: "was filed on 8 January"
	}
	if k > 0 && determinersEd[toks[k-1].lower] {
		return false // an adjective: "the locked rate", "the redesigned search"
	}
	if pastCopulas[w] || pastForms[w] {
		return true
	}
	if k > 0 && pastCopulas[toks[k-1].lower] {
		return false // the participle of that passive
	}
	if len(w) < 5 || !strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "eed") || notPast[w] {
		return false
	}
	for b := k - 1; b >= max(0, k-3); b-- {
		if auxiliaries[toks[b].lower] {
			return false
		}
	}
	return true
}

// pluralHeads are plural nouns without an -s.
var pluralHeads = wordSet("staff people children personnel")

// hasValue reports whether a statement holds a value span (a number, a
// name, a code value, a quoted string).
func hasValue(text string) bool {
	s := parse(text)
	return s != nil && len(s.spans) > 0
}

// participleShape reports a word shaped like a past participle.
func participleShape(w string) bool {
	return len(w) >= 4 && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "en") || participleForms[w])
}

// participleForms are irregular past participles.
var participleForms = wordSet("held kept made paid sold sent built set put run won led told found bought brought taught caught shut cut hit")

// cutAfter reports whether the text may be cut after token k, and the
// token the next statement starts at (past a joining word).
func cutAfter(toks []token, k int) (next int, ok bool) {
	t, n := toks[k], toks[k+1]
	trail := t.trail
	skipAlso := func(i int) int {
		if i < len(toks) && (toks[i].lower == "also" || toks[i].lower == "and") && toks[i].trail == "" {
			return i + 1
		}
		if i < len(toks) && toks[i].lower == "also" {
			return i + 1 // "; also, the …"
		}
		return i
	}
	switch {
	case strings.Contains(trail, ";"):
		return skipAlso(k + 1), true
	case strings.ContainsAny(trail, ".!?") && !strings.ContainsAny(trail, ",:") && startsUpperOrDigit(n.lead+n.core) && !abbreviation(t):
		return k + 1, true
	case joinWords[n.lower] && n.lead == "" && n.trail == "" && (trail == "" || commaAfter(trail)):
		if k+3 < len(toks) && (toks[k+2].lower == "a" || toks[k+2].lower == "an") && fractions[toks[k+3].lower] {
			return 0, false // "three and a half minutes"
		}
		return skipAlso(k + 2), true
	case commaAfter(trail):
		return k + 1, true
	}
	return 0, false
}

// commaAfter reports a trail that is a comma, after closing quotes or
// brackets ("'Find anything',").
func commaAfter(trail string) bool {
	body, ok := strings.CutSuffix(trail, ",")
	return ok && strings.Trim(body, closeQuote+")]") == ""
}

// joinWords are the coordinating words Split cuts before (and drops).
var joinWords = wordSet("and but while whereas")

// gapWords are the words a join between two segments may hold.
var gapWords = wordSet("and but while whereas also plus")

// fillerWords may open a text before its first statement ("ok so", "fyi").
var fillerWords = wordSet("ok okay so fyi btw well oh hey also note reminder psa")

// backPronouns point back to something said before: a statement holding
// one is not separate.
var backPronouns = wordSet("it its it's they them their theirs he him his she her hers this these those there")

// auxiliaries make a following -ed word a participle, not a past tense.
var auxiliaries = wordSet("is are be been being am has have get gets getting remains stays")

// pastForms are irregular past-tense verbs (forms that are also present or
// participles — put, set, cost, read, hit — are left out).
var pastForms = wordSet(`had did went came saw took made got gave found left ran began brought bought caught drove fell felt
	flew forgot held kept knew led lost met paid rode said sent sat slept sold spent spoke stood stole swam taught
	thought told threw understood woke won wore wrote broke chose drew drank ate grew hid built became arrived
	rose rang sang sank shrank struck swore tore hung dug fled fought sought slid spun stuck swept swung wept bent
	lent meant dealt shook froze`)

// notPast are words in -ed that are not verbs.
var notPast = wordSet("hundred kindred sacred naked wicked rugged beloved dogged ragged shed bed red wed fed led")

// sequenceHeadings in a heading announce a sequence.
var sequenceHeadings = wordSet("timeline steps procedure instructions sequence story itinerary chronology schedule agenda")

// sequenceWords open a piece of a narrative sequence.
var sequenceWords = wordSet(`then later next finally afterwards afterward eventually meanwhile subsequently first second third lastly
	so because therefore thus hence consequently`)

// speechWords report speech, firstPerson marks a first-person speaker.
var (
	speechWords = wordSet("said says asked told replied answered shouted explained")
	// speakerRoles tag a turn of a dialogue even alone ("User: …").
	speakerRoles = wordSet("user assistant system speaker customer agent interviewer interviewee host guest caller q a")
	firstPerson  = wordSet("i we me us i'm we're i've we've i'd we'd i'll we'll")
)

// narrative reports a text Split keeps whole whatever its clauses: speaker
// turns, reported speech, a first-person speaker.
func narrative(toks []token) bool {
	tags := 0
	for k, t := range toks {
		if speechWords[t.lower] || firstPerson[t.lower] {
			return true
		}
		// A speaker tag: a capitalised word (or two) ending in a colon at
		// the start of the text or of a sentence. One alone is a heading
		// ("Golf:"), unless it names a role ("User:"); two are turns.
		if strings.HasPrefix(t.trail, ":") && k+1 < len(toks) && startsUpperOrDigit(t.core) {
			if k == 0 || strings.ContainsAny(toks[k-1].trail, ".!?") ||
				k == 1 && startsUpperOrDigit(toks[0].core) {
				tags++
				if tags == 2 || speakerRoles[t.lower] {
					return true
				}
			}
		}
	}
	return false
}

// titles and other short words end in a period without ending a sentence
// (beside abbreviations).
var titles = wordSet("mr mrs ms dr prof st mt no v vs etc inc ltd co corp jr sr e.g i.e approx dept est fig jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun")

// abbreviation reports whether t's period marks an abbreviation or an
// initial rather than a sentence end.
func abbreviation(t token) bool {
	if titles[t.lower] || abbreviations[t.lower] {
		return true
	}
	r, n := utf8.DecodeRuneInString(t.core)
	return n == len(t.core) && unicode.IsUpper(r)
}

// ErrSegments reports a proposed split that CheckSegments refuses.
var ErrSegments = errors.New("extract: invalid segments")

// CheckSegments checks a proposed split of text — All-Mem's executor-side
// validation of a Split plan (App. B.5): at least two segments, at most
// MaxSegments; each non-empty after trimming white space and an exact
// substring of text; in order and without overlap (each is looked for
// after the end of the one before it); and covering the text but for
// joins that hold only white space, punctuation, the words and, but,
// while, whereas, also and plus and sequence words such as then, later,
// so and because (before the first segment, also a heading
// of at most six words ending in a colon and filler words: "Release
// notes:", "fyi", "ok so"). It returns the segments with their
// offsets (and keys, when [Key] finds one), or an error wrapping
// ErrSegments that says which rule failed.
func CheckSegments(text string, segs []string) ([]Segment, error) {
	if len(segs) < 2 || len(segs) > MaxSegments {
		return nil, fmt.Errorf("%w: %d segments, want 2 to %d", ErrSegments, len(segs), MaxSegments)
	}
	out := make([]Segment, 0, len(segs))
	at := 0
	for i, s := range segs {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Errorf("%w: segment %d is empty", ErrSegments, i)
		}
		k := strings.Index(text[at:], s)
		if k < 0 {
			if strings.Contains(text, s) {
				return nil, fmt.Errorf("%w: segment %d overlaps or is out of order", ErrSegments, i)
			}
			return nil, fmt.Errorf("%w: segment %d is not an exact substring of the text", ErrSegments, i)
		}
		if gap := text[at : at+k]; !joinOnly(gap) && (i > 0 || !leadOnly(gap)) {
			return nil, fmt.Errorf("%w: the text before segment %d is not covered (%q)", ErrSegments, i, excerptOf(text[at:at+k]))
		}
		seg := Segment{Start: at + k, End: at + k + len(s), Text: s}
		seg.Fact, seg.Keyed = Key(s)
		out = append(out, seg)
		at = seg.End
	}
	if !joinOnly(text[at:]) {
		return nil, fmt.Errorf("%w: the end of the text is not covered (%q)", ErrSegments, excerptOf(text[at:]))
	}
	return out, nil
}

// leadOnly reports whether s, before a text's first segment, holds only a
// heading and filler words (see Split).
func leadOnly(s string) bool {
	toks := tokenize(s)
	k := 0
	for h := 0; h < min(maxHeading, len(toks)); h++ {
		if strings.HasPrefix(toks[h].trail, ":") {
			k = h + 1
			break
		}
		if strings.ContainsAny(toks[h].trail, ".;!?,") {
			break
		}
	}
	for k < len(toks) && (fillerWords[toks[k].lower] || gapWords[toks[k].lower]) {
		k++
	}
	return k == len(toks)
}

// joinOnly reports whether s holds only white space, punctuation and
// joining words.
func joinOnly(s string) bool {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) {
		if lw := strings.ToLower(w); !gapWords[lw] && !sequenceWords[lw] {
			return false
		}
	}
	return true
}

func excerptOf(s string) string {
	if len(s) <= 40 {
		return s
	}
	return strings.ToValidUTF8(s[:40], "") + "…"
}
