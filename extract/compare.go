package extract

import (
	"fmt"
	"strings"

	"github.com/tidemark/tidemark/temporal"
)

// Verdict is what [Compare] finds between two statements.
type Verdict uint8

const (
	// Unrelated: different facts, or too little evidence to say more.
	Unrelated Verdict = iota
	// Conflict: the same statement with one short span changed after the
	// main verb, where the span is not clearly the single value of a fact
	// (a plain object, a negation): the two may contradict each other,
	// but neither retires the other.
	Conflict
	// Update: the same single-valued fact restated with another value
	// (MemStrata's marker-free update): the newer retires the older.
	Update
)

var verdictNames = [...]string{"unrelated", "conflict", "update"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// Change is what Compare found.
type Change struct {
	Verdict Verdict
	// Subject and Relation key the fact both statements state, normalised
	// like Fact's: the words before the main verb, and the rest without
	// the changed span. Old and New are the changed span of each, as
	// spelt.
	Subject, Relation string
	Old, New          string
	// Rule says why: "value" (a value-shaped span: a number, a name, a
	// code value), "complement" (plain words completing a copula),
	// "agent" (a passive's definite agent), "noun phrase" (a definite
	// noun phrase), "place" (the object of the predicate's own phrase:
	// "is held in the east wing lobby"), "definite" (a definite noun
	// phrase completing a copula after a definite subject), "count" (the
	// count that opens the sentence), for an Update; "plain" (plain words
	// after a verb of choice) or "negation" (one statement negates the
	// other), for a Conflict.
	Rule string
}

// maxChange is the most tokens a changed value may span.
const maxChange = 7

// Compare compares an older statement with a newer one, word by word.
// They state one fact with two values (Update) when they are the same
// plain statement except for one contiguous span after the main verb —
// the subject and the verb are the same — and that span is, on both
// sides, a value: a number with its unit, a date, a version, a code
// value or a name, or the plain complement of a copula ("is enabled",
// "is main"). Update is refused — precision before recall, since a
// wrong update hides a true fact — when the span
//
//   - is a qualifier: it sits in a placing phrase ("for contractors", "in
//     France") while the predicate holds another value ("Annual leave is
//     25 days for contractors");
//   - belongs to a relation that holds many values at once ("speaks
//     French", "accepts Aetna", "is a nurse", "is available in Spanish")
//     and is not a code value;
//   - follows a passive participle that changed ("is serviced by" / "is
//     made by": two relations);
//   - is longer than a few words, or either text is not one plain
//     statement (a question, a negation, a hedge, two sentences).
//
// Two statements that differ by a negation after the verb, or by the
// plain object of a verb of choice ("prefers tabs" / "prefers spaces"),
// are a Conflict. Everything else is Unrelated. A modal shared by both
// ("should last 8 hours") is allowed, unlike in Key. Compare is a pure
// function, safe for concurrent use.
func Compare(older, newer string) Change {
	ch, _ := compare(older, newer)
	return ch
}

// compare is Compare, with the reason it found no Update or Conflict.
func compare(older, newer string) (Change, string) {
	a, b := parse(older), parse(newer)
	if a == nil || b == nil {
		return Change{}, "not one sentence"
	}
	na, nb := len(a.toks), len(b.toks)
	p := 0
	for p < na && p < nb && sameTok(a, b, p, p) {
		p++
	}
	suf := 0
	for suf < na-p && suf < nb-p && sameTok(a, b, na-1-suf, nb-1-suf) {
		suf++
	}
	ea, eb := na-suf, nb-suf
	if ea == p && eb == p {
		return Change{}, "the same words"
	}
	if (ea == p || eb == p) && p > 0 {
		// Words added inside a value ("four hours" / "four and a half
		// hours") change the whole value.
		p = min(p, a.valueStart(min(p, na-1)), b.valueStart(min(p, nb-1)))
	}
	if ea == p || eb == p {
		return negationConflict(a, b, p, ea, eb), "words added or removed"
	}
	if !a.statementExcept(true, p, ea) || !b.statementExcept(true, p, eb) {
		return Change{}, "not a plain statement"
	}
	if !a.findVerb() || !b.findVerb() || a.mv < 0 || a.mv != b.mv || a.copular != b.copular {
		return Change{}, "no common main verb"
	}
	if p == 0 && ea == 1 && eb == 1 && a.mv > 1 {
		// A count that opens the sentence ("Three engineers staff the
		// night shift" / "Two engineers …"): the rest is the fact. Not a
		// house number ("18 Wren Lane has a garage").
		if countWord(a.toks[0].lower) && countWord(b.toks[0].lower) && a.word(1) && isLower(a.toks[1].core) {
			return Change{Verdict: Update, Rule: "count", Subject: a.keyWords(1, a.mv, nil),
				Relation: a.keyWords(a.mv, na, nil), Old: a.toks[0].core, New: b.toks[0].core}, ""
		}
	}
	_, pred := a.verbGroup()
	if _, pb := b.verbGroup(); pb != pred || pred > p {
		return Change{}, "change in the subject or verb" // the change is in the subject or the verb
	}
	// Grow the change to whole values: "Maria Lopez" → "Kenji Lopez"
	// changes the name, not one word of it.
	start := min(a.valueStart(p), b.valueStart(p))
	suf = min(suf, na-a.valueEnd(ea), nb-b.valueEnd(eb))
	ea, eb = na-suf, nb-suf
	if start < pred || ea-start > maxChange || eb-start > maxChange {
		return Change{}, "change too long or before the predicate"
	}
	ch := Change{Subject: a.keyWords(0, a.mv, nil), Relation: a.keyWords(a.mv, na, &span{i: start, j: ea}),
		Old: a.textOf(start, ea), New: b.textOf(start, eb)}
	if ch.Subject == "" || ch.Relation == "" || pronounSubjects[ch.Subject] ||
		temporal.NormalizeObject(ch.Old) == temporal.NormalizeObject(ch.New) {
		return Change{}, "no subject or relation, or the same value"
	}
	if a.pinnedName(start, ea) != b.pinnedName(start, eb) {
		return Change{}, "two pinned packages" // numpy==1.24.0 and pydantic==2.4.2 pin two packages
	}
	coded := a.coded(start, ea) && b.coded(start, eb)
	if a.manyValuedSlot(start, ea, coded) || b.manyValuedSlot(start, eb, coded) {
		return Change{}, "many-valued slot"
	}
	if a.qualifier(start, ea, pred) || b.qualifier(start, eb, pred) {
		return Change{}, "qualifier"
	}
	switch va, vb := a.valueShaped(start, ea), b.valueShaped(start, eb); {
	case va && vb:
		ch.Verdict, ch.Rule = Update, "value"
	case a.complement(start, ea, pred) && b.complement(start, eb, pred):
		ch.Verdict, ch.Rule = Update, "complement"
	case a.agent(start, ea, pred) && b.agent(start, eb, pred) && (a.definiteAgent(start) || b.definiteAgent(start)):
		ch.Verdict, ch.Rule = Update, "agent"
	case (va || a.nounPhrase(start, ea) || a.ledNounPhrase(start, ea)) && (vb || b.nounPhrase(start, eb) || b.ledNounPhrase(start, eb)):
		ch.Verdict, ch.Rule = Update, "noun phrase"
	case a.placeValue(start, ea, pred) && b.placeValue(start, eb, pred),
		a.placePhrase(start, ea, pred) && b.placePhrase(start, eb, pred):
		ch.Verdict, ch.Rule = Update, "place"
	case a.definiteComplement(start, ea, pred) && b.definiteComplement(start, eb, pred):
		ch.Verdict, ch.Rule = Update, "definite"
	case !a.copular && preferenceVerbs[lastPart(a.toks[a.mv].lower)] && a.plainObject(start, ea) && b.plainObject(start, eb):
		ch.Verdict, ch.Rule = Conflict, "plain"
	default:
		return Change{}, "not a value, complement, agent or noun phrase"
	}
	return ch, ""
}

// complementPP reports a preposition at k that opens the predicate's own
// phrase: right after a verb of one value ("runs on", "takes place in"),
// right after a copula ("is on the ground floor") or after a copula and a
// participle of placing or making ("is held in", "is made of"). Its
// object is the fact's value, not a scope; a phrase after another value
// or object is a qualifier ("is 25 days for contractors").
func (s *sentence) complementPP(k, pred int) bool {
	if k == pred || !s.copular && k == pred+1 && idiomObjects[s.toks[pred].lower] && s.word(pred) ||
		s.copular && k == pred-1 && k-1 > s.mv && placeParticiples[s.toks[k-1].lower] {
		return true // "is held at": the verb group took the preposition
	}
	return s.copular && k == pred+1 && s.word(pred) && placeParticiples[s.toks[pred].lower]
}

// placeHead reports a noun that names a place ("floor", "boardroom").
func placeHead(w string) bool {
	w = strings.TrimSuffix(w, "s")
	if placeHeads[w] {
		return true
	}
	for _, h := range []string{"room", "house", "hall", "yard", "office"} {
		if strings.HasSuffix(w, h) {
			return true
		}
	}
	return false
}

// placePhrase is placeValue for a change that opens with its preposition
// ("is in the basement" / "is on the ground floor").
func (s *sentence) placePhrase(i, j, pred int) bool {
	return i+1 < j && s.word(i) && placePreps[s.toks[i].lower] && s.placeValue(i+1, j, pred)
}

// ledNounPhrase is nounPhrase for a change that opens with its article
// ("Room 112" / "the east wing lobby").
func (s *sentence) ledNounPhrase(i, j int) bool {
	return i+1 < j && s.word(i) && s.toks[i].lower == "the" && s.toks[i].trail == "" && s.nounPhrase(i+1, j)
}

// placeValue reports plain words, a name or a code that are the whole
// object of the predicate's own phrase (complementPP) and end the
// sentence: "is made of stainless steel", "runs on HVO biofuel", "is held
// in the east wing lobby". At most four words after an optional
// determiner, with no verb, conjunction, negation or other preposition.
func (s *sentence) placeValue(i, j, pred int) bool {
	k := i - 1
	for k >= pred && s.word(k) && definites[s.toks[k].lower] {
		k--
	}
	if k <= s.mv || !s.word(k) || !prepositions[s.toks[k].lower] || s.toks[k].lower == "of" && k == pred || s.toks[k].lower == "by" ||
		!s.complementPP(k, pred) {
		return false
	}
	if s.recurring(i, len(s.toks)) {
		return false // a schedule may hold several times ("held on Saturday mornings")
	}
	if !s.copular && spreadVerbs[lastPart(s.toks[s.mv].lower)] {
		return false // "comes in navy", "pays for books": one of several
	}
	if s.copular && k == pred && !placeHead(s.toks[len(s.toks)-1].lower) {
		return false // "is in the woodland scheme": one membership of several; "is on the second floor": a place
	}
	led := i > k+1 // a determiner opens the phrase: its words are nouns ("the music block")
	if i < j && s.word(i) && definites[s.toks[i].lower] {
		i++
		led = true
	}
	n, of := 0, false
	for m := i; m < len(s.toks); m++ {
		t := s.toks[m]
		if s.word(m) && t.lower == "of" && !of && m > i && m+1 < len(s.toks) {
			// "the basement of the east wing": the place of a place.
			of = true
			if definites[s.toks[m+1].lower] || quantifiers[s.toks[m+1].lower] {
				m++
			}
			continue
		}
		if s.word(m) {
			if _, verb := verbForm(t.lower); verb && !led || prepositions[t.lower] || conjunctions[t.lower] || negations[t.lower] ||
				determiners[t.lower] || !hasLetter(t.core) {
				return false
			}
		}
		n++
		if m < len(s.toks)-1 && t.trail != "" {
			return false
		}
	}
	return n >= 1 && n <= 5 && j <= len(s.toks)
}

// recurring reports a time that recurs among toks[i:j] ("on Saturday
// mornings"): a schedule may hold several.
func (s *sentence) recurring(i, j int) bool {
	for k := i; k < j; k++ {
		w := s.toks[k].lower
		if strings.HasSuffix(w, "s") && (weekdays[strings.TrimSuffix(w, "s")] || dayParts[strings.TrimSuffix(w, "s")]) {
			return true
		}
	}
	return false
}

// definiteComplement reports a definite noun phrase that completes a
// plain copula and ends the sentence, after a definite subject: "The
// meeting point for the tour is the fountain in Plaza Real", "The
// deadline is the last Friday of May". The subject names one thing, so
// the phrase is its one value. At most seven words, one preposition
// inside, no verb, conjunction or negation.
func (s *sentence) definiteComplement(i, j, pred int) bool {
	if !s.copular || pred != s.mv+1 || !s.word(0) || !definites[s.toks[0].lower] || j != len(s.toks) ||
		i != pred && !(i == pred+1 && s.toks[pred].lower == "the") || j-pred > 7 {
		return false
	}
	preps := 0
	for k := pred; k < j; k++ {
		t := s.toks[k]
		if k < j-1 && strings.ContainsAny(t.trail, ",;") {
			return false
		}
		if !s.word(k) {
			if sp := s.spans[s.spanOf[k]]; sp.kind == kindNumber || sp.cls == code {
				return false // an amount, then its scope: "is 5 percent on renewals"
			}
			continue
		}
		switch {
		case k == pred && !definites[t.lower] && !s.ownerOf(k):
			return false // "is senior analyst": a complement; "is a nurse": a class
		case prepositions[t.lower]:
			preps++
			if preps > 1 || k == j-1 {
				return false
			}
		case conjunctions[t.lower] || negations[t.lower] || indefinites[t.lower]:
			return false
		}
		if _, verb := verbForm(t.lower); verb && k == pred+1 {
			return false
		}
	}
	return true
}

// ownerOf reports a possessive at k ("St Jude's church hall").
func (s *sentence) ownerOf(k int) bool {
	w := s.toks[k].lower
	return strings.HasSuffix(w, "'s") || strings.HasSuffix(w, "’s")
}

// negationConflict handles two statements where one has words the other
// lacks: a Conflict when those words are one negation after the main
// verb of a plain statement ("The cache is enabled" / "The cache is not
// enabled").
func negationConflict(a, b *sentence, p, ea, eb int) Change {
	pos, neg, end := a, b, eb
	if eb == p {
		pos, neg, end = b, a, ea
	}
	if end-p != 1 || !negations[neg.toks[p].lower] || !pos.statement(true) || !pos.findVerb() || pos.mv < 0 {
		return Change{}
	}
	if _, pred := pos.verbGroup(); pred > p && !(pos.copular && p == pos.mv+1) {
		return Change{}
	}
	subject := pos.keyWords(0, pos.mv, nil)
	if subject == "" || pronounSubjects[subject] {
		return Change{}
	}
	old, nw := "", neg.toks[p].core
	if neg == a {
		old, nw = nw, ""
	}
	return Change{Verdict: Conflict, Rule: "negation", Subject: subject,
		Relation: pos.keyWords(pos.mv, len(pos.toks), nil), Old: old, New: nw}
}

// countWord reports a number written as a word or in digits.
func countWord(w string) bool {
	return numberWords[w] && !ordinals[w] || w != "" && isDigit(w[0]) && !strings.ContainsAny(w, ":/-")
}

// sameTok reports whether a.toks[i] and b.toks[j] are the same word with
// the same punctuation (a sentence's final stop aside).
func sameTok(a, b *sentence, i, j int) bool {
	x, y := a.toks[i], b.toks[j]
	tx, ty := x.trail, y.trail
	if i == len(a.toks)-1 {
		tx = strings.TrimRight(tx, ".!")
	}
	if j == len(b.toks)-1 {
		ty = strings.TrimRight(ty, ".!")
	}
	return (x.lower == y.lower || plural(x.lower, y.lower) || plural(y.lower, x.lower)) && x.lead == y.lead && tx == ty
}

// plural reports a word and its regular plural ("point", "points"): a
// count noun that follows the number it counts changes with it.
func plural(w, ws string) bool {
	return len(w) >= 3 && isLower(w) && ws == w+"s"
}

// valueStart and valueEnd widen a change to the value spans it cuts.
func (s *sentence) valueStart(k int) int {
	if k < len(s.toks) && s.spanOf[k] >= 0 {
		return s.spans[s.spanOf[k]].i
	}
	return k
}

func (s *sentence) valueEnd(k int) int {
	if k > 0 && s.spanOf[k-1] >= 0 {
		return s.spans[s.spanOf[k-1]].j
	}
	return k
}

// textOf is the text of toks[i:j] without the punctuation around it.
func (s *sentence) textOf(i, j int) string {
	return strings.Join(strings.Fields(s.text[s.toks[i].start:s.toks[j-1].end]), " ")
}

// valueShaped reports a change made of values: every token in a value
// span (a number, a date, a version, a code value, a name), but for an
// article first and connectors inside ("Office of Rural Development",
// "Mondays and Thursdays").
func (s *sentence) valueShaped(i, j int) bool {
	if s.dayList(i, j) {
		return true // "Tuesdays and Fridays"
	}
	if i < j && s.word(i) && articles[s.toks[i].lower] {
		i++
	}
	if i >= j {
		return false
	}
	for k := i; k < j; k++ {
		if !s.word(k) {
			continue
		}
		if k == i || k == j-1 {
			return false
		}
		w := s.toks[k].lower
		if rangeWords[w] && s.coded(k-1, k) && s.coded(k+1, k+2) {
			continue
		}
		// Connectors join names: the values on both sides, past other
		// connectors, are names ("Office of the Comptroller"), not a value
		// and a qualifier ("$85,000 for the 2024 financial year").
		l, r := k-1, k+1
		for l > i && s.word(l) && connectors[s.toks[l].lower] {
			l--
		}
		for r < j-1 && s.word(r) && connectors[s.toks[r].lower] {
			r++
		}
		if !connectors[w] || !s.isName(l) || !s.isName(r) {
			return false
		}
	}
	return true
}

// pinnedName is the package of the pinned requirements in toks[i:j]
// ("numpy" of numpy==1.24.0), which names the fact rather than its value.
func (s *sentence) pinnedName(i, j int) string {
	var names []string
	for k := i; k < j; k++ {
		if !s.word(k) && s.spans[s.spanOf[k]].pinned != "" && s.spans[s.spanOf[k]].i == k {
			names = append(names, strings.ToLower(s.spans[s.spanOf[k]].pinned))
		}
	}
	return strings.Join(names, " ")
}

// dayList reports weekdays or months joined by "and": one schedule.
func (s *sentence) dayList(i, j int) bool {
	for k := i; k < j; k++ {
		w := strings.TrimSuffix(s.toks[k].lower, "s")
		if !weekdays[w] && !months[s.toks[k].lower] && !(k > i && k < j-1 && s.toks[k].lower == "and") {
			return false
		}
	}
	return j > i
}

// isName reports a token in a name span (not a number, a weekday or a
// month: "Brookfield on Mondays" is a place and a time, not one name).
func (s *sentence) isName(k int) bool {
	if s.word(k) || weekdays[strings.TrimSuffix(s.toks[k].lower, "s")] || months[s.toks[k].lower] {
		return false
	}
	sp := s.spans[s.spanOf[k]]
	return sp.cls == name && sp.kind == kindName
}

// nounPhrase reports plain words after "the" that name a place, a role or
// a thing ("the main bus terminal", "the controller", "the ground
// floor"): the change and what follows it to the end of the sentence or
// clause, at most four words, with no preposition, verb or value.
func (s *sentence) nounPhrase(i, j int) bool {
	if i == 0 || s.toks[i-1].lower != "the" {
		return false
	}
	end := i
	for end < len(s.toks) && end-i < 4 {
		t := s.toks[end]
		_, verb := verbForm(t.lower)
		if prepositions[t.lower] || conjunctions[t.lower] || negations[t.lower] || verb || !hasLetter(t.core) ||
			!s.word(end) && !s.isName(end) {
			break
		}
		end++
		if t.trail != "" {
			break
		}
	}
	if groups[s.toks[end-1].lower] && s.toks[i-2].lower != "to" {
		return false // one body among several the subject may belong to ("sits on the defense committee"), not a destination ("go to the platform team")
	}
	if end > j {
		// The change is a modifier of a noun both share ("the water bill",
		// "the broadband bill"): two things, not two values of one.
		return false
	}
	return end >= j && (end == len(s.toks) || strings.ContainsAny(s.toks[end-1].trail, ",;") ||
		prepositions[s.toks[end].lower] && s.toks[end].lower != "of")
}

// definiteAgent reports an agent at i that is a name or opens with a
// definite determiner.
func (s *sentence) definiteAgent(i int) bool {
	return !s.word(i) || definites[s.toks[i].lower] || definites[s.toks[i-1].lower]
}

// agent reports plain words naming who does a copula's passive verb:
// "is approved by the shift manager", where the words after "by" changed.
func (s *sentence) agent(i, j, pred int) bool {
	k := i - 1
	for k >= pred && s.word(k) && articles[s.toks[k].lower] {
		k--
	}
	if !s.copular || k < pred+1 || k > pred+2 || s.toks[k].lower != "by" || !s.word(k) || !s.word(k-1) || j-i > 5 {
		return false
	}
	// An agent is a person, a role or a body: a name, or a noun phrase
	// with a definite determiner ("the shift manager"); bare nouns after
	// "by" are a means ("paid by cheque"), one of several.
	// "by a scribe" names one of several people in a role (Compare
	// accepts it when the other side names one: "by the HR business
	// partner" / "by an external consultant").
	if s.word(i) && !definites[s.toks[i-1].lower] && !definites[s.toks[i].lower] && !indefinites[s.toks[i-1].lower] && !indefinites[s.toks[i].lower] {
		return false
	}
	for m := i; m < j; m++ {
		t := s.toks[m]
		if s.word(m) && (prepositions[t.lower] && !(t.lower == "of" && m > i && m < j-1) || negations[t.lower] || !hasLetter(t.core)) ||
			m < j-1 && strings.ContainsAny(t.trail, ",;") {
			return false // "the director of nursing" is one agent
		}
	}
	// The agent's noun phrase may go on past the change ("by the platform
	// team" / "by the data reliability team": the team is the value).
	for n := 0; n < 3 && j < len(s.toks) && s.word(j) && !prepositions[s.toks[j].lower] && isLower(s.toks[j].lower) &&
		!strings.ContainsAny(s.toks[j-1].trail, ",;"); n++ {
		j++
	}
	return j == len(s.toks) || prepositions[s.toks[j].lower] || strings.ContainsAny(s.toks[j-1].trail, ",;")
}

// complement reports plain words that complete a copula right after it
// ("is enabled", "is main", "is open to the public") and end the
// sentence or a clause before a preposition.
func (s *sentence) complement(i, j, pred int) bool {
	if !s.copular {
		return false
	}
	k := pred
	for k < i && s.word(k) && articles[s.toks[k].lower] {
		k++
	}
	if k != i || j-i > 3 || participle(s.toks[i].lower) && !statusWords[s.toks[i].lower] && j-i > 1 {
		return false // "is paid monthly" / "is calculated daily": two relations
	}
	for k := i; k < j; k++ {
		t := s.toks[k]
		if !s.word(k) || t.cls != word || prepositions[t.lower] || conjunctions[t.lower] || !hasLetter(t.core) ||
			k < j-1 && t.trail != "" {
			return false
		}
	}
	for k := j; k < len(s.toks); k++ {
		if !s.word(k) {
			return false // "is payable within ten days" / "is refundable within ten days": the value comes later, the word is the relation
		}
	}
	if j < len(s.toks) && s.toks[j].lower == "by" && (j+1 == len(s.toks) || s.toks[j+1].lower != "default") {
		return false // a passive verb: "is serviced by X" and "is made by X" are two relations
	}
	if w := s.toks[i].lower; j-i == 1 && j < len(s.toks) && prepositions[s.toks[j].lower] &&
		(strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "en")) && !statusWords[w] {
		return false // "are loaded at Dock 3" and "are weighed at Dock 3": two relations
	}
	if j < len(s.toks) && !prepositions[s.toks[j].lower] && !strings.ContainsAny(s.toks[j-1].trail, ",;") {
		// A head noun both share may end the sentence ("is senior analyst"
		// / "is principal analyst", "is set to manual mode").
		for k := j; k < len(s.toks); k++ {
			if t := s.toks[k]; k-j >= 2 || !isLower(t.core) || conjunctions[t.lower] || negations[t.lower] ||
				k < len(s.toks)-1 && t.trail != "" {
				return false
			}
			if _, verb := verbForm(s.toks[k].lower); verb {
				return false
			}
		}
		return true
	}
	return true
}

// plainObject reports plain words (no preposition, conjunction or
// negation) in a change.
func (s *sentence) plainObject(i, j int) bool {
	if j-i > 3 {
		return false
	}
	for k := i; k < j; k++ {
		t := s.toks[k].lower
		if prepositions[t] || conjunctions[t] || negations[t] {
			return false
		}
	}
	return i > 0 && !prepositions[s.toks[i-1].lower]
}

// qualifier reports a change inside a prepositional phrase ("for
// contractors", "in France", "on Tuesdays") when the predicate holds a
// value before it: the phrase then scopes the fact rather than stating
// its value. Plain words after a preposition are a qualifier too ("on
// weekdays"), unless they name a passive verb's agent (agent).
func (s *sentence) qualifier(i, j, pred int) bool {
	k := i - 1
	for k >= pred && s.word(k) && articles[s.toks[k].lower] {
		k--
	}
	if k < pred || !s.word(k) || !prepositions[s.toks[k].lower] {
		return false
	}
	if s.complementPP(k, pred) {
		return false // the verb's own phrase: "is held in Room 112", "runs on red diesel"
	}
	if s.copular && k == pred+1 && s.word(pred) && !singlePassives[s.toks[pred].lower] && s.toks[k].lower != "by" &&
		!s.hasValue(pred, j) && !s.valueShaped(i, j) {
		return true // a rule's scope: "masks are required in the operating theatre"
	}
	if !s.valueShaped(i, j) && !s.nounPhrase(i, j) {
		return !s.agent(i, j, pred)
	}
	// A deadline ends the sentence: "must reach the GP within 48 hours"
	// states the one limit of reaching the GP.
	if (s.toks[k].lower == "within" || s.toks[k].lower == "after") && j == len(s.toks) && s.duration(i, j) {
		return false
	}
	// Another value in the predicate before the change, not right beside
	// it (which would be one phrase with it: "the third Saturday"); a
	// value after it is placed by it, not the other way round ("departs
	// from Terminal B in Port Everglades").
	for _, sp := range s.spans {
		if sp.i >= pred && sp.j < i {
			return true
		}
	}
	return false
}

// hasValue reports a value span in toks[i:j].
func (s *sentence) hasValue(i, j int) bool {
	for k := i; k < j; k++ {
		if !s.word(k) {
			return true
		}
	}
	return false
}

// duration reports a number and a unit of time, and nothing else, in
// toks[i:j] ("48 hours", "ten working days").
func (s *sentence) duration(i, j int) bool {
	unit := false
	for k := i; k < j; k++ {
		w := s.toks[k].lower
		switch {
		case timeUnits[w] || timeUnits[unitWord(w)]:
			unit = true
		case !s.word(k) && s.spans[s.spanOf[k]].kind == kindNumber, w == "working" || w == "business" || w == "calendar":
		default:
			return false
		}
	}
	return unit
}
