package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidemark/tidemark/temporal"
)

// Fact is the key of one single-valued fact: Subject and Relation name
// the fact, normalised as [temporal.NormalizeKeyPart] does (lower-case,
// articles and punctuation removed, one space between words); Object is
// its value as the sentence spells it, with runs of white space made one
// space.
type Fact struct {
	Subject  string
	Relation string
	Object   string
	// Rule names the rule that chose the value slot: "code" (a code
	// value of the predicate), "apposition", "inversion", "name" (a name
	// of the predicate), "placed" (a value inside a placing phrase) or
	// "bare" (a bare-word complement). It is for explanations; it is not
	// part of the key.
	Rule string
}

// Limits beyond which a text is not one sentence stating one fact.
const (
	maxBytes  = 1000
	maxTokens = 60
)

// Key extracts the fact key of a sentence that states one single-valued
// fact, or returns false. Two sentences that state the same fact with
// different values get the same Subject and Relation and different
// Objects; sentences about different facts get different keys. When the
// value slot is missing or ambiguous — no value, several coordinated
// values, a question, a negation, a hedge, several clauses — Key returns
// false rather than guess. The rules are in the package documentation.
//
// Key is a pure function, safe for concurrent use.
func Key(text string) (Fact, bool) {
	s := parse(text)
	if s == nil {
		return Fact{}, false
	}
	if !s.statement(false) || !s.findVerb() {
		return Fact{}, false
	}
	f, ok := s.key()
	// An apposition or an inversion keys the name of the subject, not an
	// object of the verb: how many objects the verb takes does not matter.
	if !ok || f.Rule != "apposition" && f.Rule != "inversion" && s.manyValued() {
		return Fact{}, false
	}
	return f, true
}

// parse tokenizes text into a sentence with its values, or returns nil
// when it is too long or too short to be one statement.
func parse(text string) *sentence {
	if len(text) > maxBytes {
		return nil
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	toks := tokenize(text)
	if len(toks) < 2 || len(toks) > maxTokens {
		return nil
	}
	s := &sentence{text: text, toks: toks, spans: findSpans(toks)}
	s.spanOf = make([]int, len(toks))
	for k := range s.spanOf {
		s.spanOf[k] = -1
	}
	for i, sp := range s.spans {
		for k := sp.i; k < sp.j; k++ {
			s.spanOf[k] = i
		}
	}
	return s
}

// sentence is one sentence being keyed.
type sentence struct {
	text   string
	toks   []token
	spans  []span
	spanOf []int // token → index into spans, or -1
	// mv is the main verb's first token (-1: none found); copular says
	// whether it is a copula group ("is", "is set to", "must be", "has
	// been").
	mv      int
	copular bool
	// rule names the rule that chose the value (Fact.Rule); slot is the
	// value's span.
	rule string
	slot span
}

// word reports whether toks[k] is an ordinary word outside every value.
func (s *sentence) word(k int) bool { return s.spanOf[k] < 0 }

// statement rejects what is not a plain statement: a question, several
// sentences or clauses joined by a semicolon, a negation, and — unless
// hedged is set — a hedge or a condition. A stop after an honorific or an
// initial ("Dr. Reyes", "J. Smith") does not end a sentence.
func (s *sentence) statement(hedged bool) bool {
	return s.statementExcept(hedged, -1, -1)
}

// statementExcept is statement, except that with hedged set a negation
// outside toks[lo:hi] is allowed: Compare's two statements share it ("The
// maximum stay without a visa is 90 days" / "… 30 days").
func (s *sentence) statementExcept(hedged bool, lo, hi int) bool {
	n := len(s.toks)
	if questionOpen[s.toks[0].lower] {
		return false
	}
	for k, t := range s.toks {
		if strings.Contains(t.trail, "?") {
			return false
		}
		if k < n-1 {
			if strings.Contains(t.trail, ";") {
				return false
			}
			if strings.ContainsAny(t.trail, ".!") && startsUpperOrDigit(s.toks[k+1].core) &&
				!(t.trail == "." && (honorifics[t.lower] || utf8.RuneCountInString(t.core) == 1 || strings.Contains(t.core, "."))) {
				return false
			}
		}
		negation := negations[t.lower] || strings.HasSuffix(t.lower, "n't") || strings.HasSuffix(t.lower, "n’t")
		if hedged && lo >= 0 && (k < lo || k >= hi) {
			negation = false
		}
		if s.word(k) && (negation || !hedged && hedges[t.lower]) {
			return false
		}
	}
	return true
}

func startsUpperOrDigit(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r) || unicode.IsDigit(r)
}

// findVerb finds the main verb: the sentence's one copula (outside
// relative clauses and values; two copulas are two clauses, and a past
// copula makes the sentence history), else its first third-person verb,
// else its first base-form verb, else its first word ending in -s after
// the subject. It reports false when the sentence cannot be a statement
// of a present value.
func (s *sentence) findVerb() bool {
	s.mv = -1
	copulas := 0
	for k, t := range s.toks {
		if !s.word(k) || k > 0 && relativePronouns[s.toks[k-1].lower] {
			continue
		}
		if pastCopulas[t.lower] {
			return false
		}
		if isCopula(t.lower) {
			if k == 0 {
				return false
			}
			copulas++
			if s.mv < 0 {
				s.mv = k
			}
		}
	}
	switch {
	case copulas > 1:
		return false
	case copulas == 1:
		s.copular = true
		if p := s.mv - 1; p > 0 && s.word(p) {
			switch lw := s.toks[s.mv].lower; {
			case lw == "been" && (s.toks[p].lower == "has" || s.toks[p].lower == "have"),
				lw == "be" && (s.toks[p].lower == "must" || s.toks[p].lower == "can"):
				s.mv = p
			}
		}
		return true
	}
	// A base form is a verb only after a plural subject ("Employees
	// receive"), not inside a compound ("Decision record").
	// A plain word right after a modal is a verb ("may claim", "should
	// go", "must not exceed"), known or not.
	for k := 1; k < len(s.toks); k++ {
		if !s.word(k-1) || !modals[s.toks[k-1].lower] || s.toks[k-1].trail != "" {
			continue
		}
		v := k
		if v+1 < len(s.toks) && s.word(v) && s.toks[v].lower == "not" {
			v++
		}
		if s.word(v) && isLower(s.toks[v].lower) && !articles[s.toks[v].lower] && !prepositions[s.toks[v].lower] && !negations[s.toks[v].lower] {
			s.mv = v
			return true
		}
	}
	// A verb after a subordinator ("… after the agreement ends") is in a
	// clause, not the sentence's main verb.
	sub := len(s.toks)
	for k := 1; k < len(s.toks); k++ {
		if s.word(k) && subordinators[s.toks[k].lower] {
			sub = k
			break
		}
	}
	// A verb form right after a number is more likely a plural noun ("earn
	// two points"): it is the verb only when no other is found.
	afterNumber := -1
	for _, third := range []bool{true, false} {
		for k := 1; k < sub; k++ {
			th, ok := verbForm(s.toks[k].lower)
			if !ok || th != third || !s.word(k) || !s.verbPosition(k) ||
				!third && !pluralNoun(s.toks[k-1]) && !modals[s.toks[k-1].lower] && !s.pluralSubject(k) {
				continue
			}
			if s.toks[k-1].kind == kindNumber {
				if afterNumber < 0 {
					afterNumber = k
				}
				continue
			}
			s.mv = k
			return true
		}
	}
	// An -s word after the first value of the predicate is more likely a
	// plural noun ("prefetch 4 tasks"): then no verb is found. Values among
	// the first three words are the subject's ("The Harrow 400 machine
	// comes with…").
	limit := min(sub, len(s.toks))
	for _, sp := range s.spans {
		if sp.i >= 3 {
			limit = min(limit, sp.i)
			break
		}
	}
	if afterNumber >= 0 {
		limit = min(limit, afterNumber-1)
	}
	for k := 2; k < limit; k++ {
		w := s.toks[k].lower
		if s.word(k) && s.verbPosition(k) && len(w) >= 4 && strings.HasSuffix(w, "s") && isLower(w) &&
			!strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") &&
			!prepositions[s.toks[k-1].lower] && !conjunctions[s.toks[k-1].lower] {
			s.mv = k
			return true
		}
	}
	if afterNumber >= 0 {
		s.mv = afterNumber
	}
	return true
}

// isCopula reports a present-tense copula.
func isCopula(w string) bool { return copulas[w] }

// pluralNoun reports a word that may be a plural noun: it ends in -s and
// is not a possessive ("the group's return flight").
func pluralNoun(t token) bool {
	return strings.HasSuffix(t.lower, "s") && !strings.HasSuffix(t.lower, "'s") && !strings.HasSuffix(t.lower, "’s")
}

// pluralSubject reports a base-form verb at k after a subject whose head
// is plural and whose modifiers follow it ("Final exams for the spring
// semester begin", "Residents at Greyfriars Point pay"): the subject opens
// with a plural word and a preposition follows it before k, and the word
// before k is not a determiner, a preposition or "to".
func (s *sentence) pluralSubject(k int) bool {
	p := s.toks[k-1].lower
	if determiners[p] || prepositions[p] || conjunctions[p] || s.toks[k-1].kind == kindNumber {
		return false // "three sample pods": a noun after a number
	}
	for h := 0; h < k-1 && h < 4; h++ {
		w := s.toks[h].lower
		if s.word(h) && isLower(w) && len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
			h+1 < k && prepositions[s.toks[h+1].lower] {
			return true
		}
	}
	return false
}

// verbPosition reports whether toks[k] may be a main verb: not right after
// a determiner ("the default"), a relative pronoun ("that runs") or "to".
// (Nor after a number: "two points" is a plural noun; findVerb checks.)
func (s *sentence) verbPosition(k int) bool {
	p := s.toks[k-1].lower
	return !determiners[p] && !relativePronouns[p] && p != "to"
}

func isLower(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// verbGroup returns the main verb group's normal form and the token after
// it: a copula group ("is", "are", "is set to", "has been configured as",
// "equals") is "is", "must be" and "can be" keep their modal, "defaults
// to" is one verb, and any other verb is itself.
func (s *sentence) verbGroup() (string, int) {
	k, n := s.mv, len(s.toks)
	lw := s.toks[k].lower
	if !s.copular {
		if (lw == "defaults" || lw == "default") && k+1 < n && s.toks[k+1].lower == "to" && s.word(k+1) {
			return "defaults to", k + 2
		}
		return lw, k + 1
	}
	out := "is"
	switch lw {
	case "must", "can":
		out = lw + " be"
		k += 2
	case "has", "have":
		k += 2
	default:
		k++
	}
	for k < n && s.word(k) && timeAdverbs[s.toks[k].lower] {
		k++
	}
	if k+1 < n && s.word(k) && s.word(k+1) {
		a, b := s.toks[k].lower, s.toks[k+1].lower
		if assignParticiples[a] && assignPreps[b] || a == "equal" && b == "to" {
			k += 2
		}
	}
	return out, k
}

// candidate is a value of the predicate with what its position says.
type candidate struct {
	span    int
	context bool // inside a placing phrase (in config.py, via the Stripe API)
}

// key picks the value slot and builds the key around it.
func (s *sentence) key() (Fact, bool) {
	n := len(s.toks)
	pred := 0
	if s.mv >= 0 {
		_, pred = s.verbGroup()
	}
	appo, typeEnd := s.apposition()
	if s.mv < 0 && appo >= 0 {
		pred = s.spans[appo].j
	}
	var cands []candidate
	from, to := false, false
	for i, sp := range s.spans {
		if sp.i < pred {
			continue
		}
		switch s.prevWord(sp.i, pred) {
		case "from":
			from = true
		case "to":
			to = true
		}
		if s.isTarget(sp) || s.isModifier(i) {
			continue
		}
		cands = append(cands, candidate{span: i, context: s.isContext(sp, pred)})
	}
	if from && to {
		return Fact{}, false // from X to Y: two values
	}
	for c := 1; c < len(cands); c++ {
		if s.coordinated(s.spans[cands[c-1].span], s.spans[cands[c].span]) {
			return Fact{}, false
		}
	}
	if s.mv < 0 && appo < 0 && len(cands) > 1 {
		return Fact{}, false // no verb to tell the subject's names from the value
	}
	if s.mv < 0 && appo < 0 && len(cands) == 1 && s.spans[cands[0].span].i <= 1 && s.spans[cands[0].span].j < n-1 {
		// No verb, a value among the first two words and words after it:
		// it is likely in the subject ("Aisle 7 stocks cleaning supplies").
		return Fact{}, false
	}
	var codeMain, nameMain, codeCtx, nameCtx []int
	for _, c := range cands {
		switch sp := s.spans[c.span]; {
		case sp.cls == code && !c.context:
			codeMain = append(codeMain, c.span)
		case sp.cls == code:
			codeCtx = append(codeCtx, c.span)
		case !c.context:
			nameMain = append(nameMain, c.span)
		default:
			nameCtx = append(nameCtx, c.span)
		}
	}
	one := func(list []int) (int, bool) {
		if len(list) == 1 {
			return list[0], true
		}
		return -1, false
	}
	switch {
	case len(codeMain) > 1:
		return Fact{}, false
	case len(codeMain) == 1:
		s.rule = "code"
		return s.predicateKey(s.withSource(s.mergeName(codeMain[0], pred)))
	case appo >= 0:
		if len(nameMain) > 0 {
			return Fact{}, false // "The module billing_core uses Stripe": which is the value?
		}
		sp := s.spans[appo]
		s.rule = "apposition"
		return s.build(s.keyWords(0, typeEnd, nil), s.keyWords(sp.j, n, nil), sp)
	}
	s.rule = "inversion"
	if f, ok := s.inversion(pred); ok {
		return f, true
	}
	for l, list := range [][]int{nameMain, codeCtx, nameCtx} {
		if len(list) > 1 {
			return Fact{}, false
		}
		if i, ok := one(list); ok {
			s.rule = "name"
			if l > 0 {
				s.rule = "placed"
			}
			return s.predicateKey(s.spans[i])
		}
	}
	s.rule = "bare"
	return s.bareComplement(pred)
}

// prevWord returns the word before toks[i], skipping articles, if it is
// at or after floor.
func (s *sentence) prevWord(i, floor int) string {
	k := i - 1
	for k >= floor && s.word(k) && articles[s.toks[k].lower] {
		k--
	}
	if k >= floor && s.word(k) {
		return s.toks[k].lower
	}
	return ""
}

// isContext reports a value inside a placing phrase: a context preposition
// before it, past articles and at most one more word ("in config.py", "via
// the Stripe API", "in version 2.3").
func (s *sentence) isContext(sp span, floor int) bool {
	k := sp.i - 1
	skip := func() {
		for k >= floor && s.word(k) && articles[s.toks[k].lower] {
			k--
		}
	}
	skip()
	if k >= floor && s.skippable(k) && !contextPreps[s.toks[k].lower] {
		k--
		skip()
	}
	return k >= floor && s.word(k) && contextPreps[s.toks[k].lower]
}

// skippable reports a plain word that may stand between a preposition and
// its value ("in version 2.3", "named 'tag'").
func (s *sentence) skippable(k int) bool {
	t := s.toks[k]
	_, verb := verbForm(t.lower)
	return s.word(k) && t.trail == "" && t.lead == "" && !prepositions[t.lower] && !conjunctions[t.lower] &&
		!isCopula(t.lower) && !verb
}

// isTarget reports a named setting followed by the value it is set to:
// python_requires in "sets python_requires to >=3.8".
func (s *sentence) isTarget(sp span) bool {
	k := sp.j
	if k >= len(s.toks) || s.toks[k-1].trail != "" || !s.word(k) || !setTargets[s.toks[k].lower] {
		return false
	}
	for k++; k < len(s.toks) && s.word(k) && articles[s.toks[k].lower]; k++ {
	}
	return k < len(s.toks) && !s.word(k) && s.spans[s.spanOf[k]].i == k && !s.isModifier(s.spanOf[k])
}

// isModifier reports a value that only qualifies what follows it: a name
// used attributively before a plain noun ("the PDF renderer", "a REST
// API"), or a package before its version ("github.com/gin-gonic/gin
// v1.9.1", "eslint 9.4.0" has a plain word there already).
func (s *sentence) isModifier(i int) bool {
	sp := s.spans[i]
	if sp.j >= len(s.toks) || s.toks[sp.j-1].trail != "" || s.toks[sp.j].lead != "" {
		return false
	}
	if s.word(sp.j) {
		t := s.toks[sp.j]
		_, verb := verbForm(t.lower)
		return sp.cls == name && t.cls == word && isLower(t.core) && !verb && !prepositions[t.lower] &&
			!conjunctions[t.lower] && !isCopula(t.lower) && !articles[t.lower] && !timeAdverbs[t.lower] &&
			!relativePronouns[t.lower] && !units[t.lower]
	}
	next := s.spans[i+1]
	return sp.cls == code && sp.kind != kindNumber && next.i == sp.j && next.kind == kindNumber
}

// withSource extends a value to the code value of a "from" phrase right
// after it: "imports parse_money from billing.money" states one import, and
// either name may be the part that changes, so the value is the pair.
func (s *sentence) withSource(sp span) span {
	k := sp.j
	if k >= len(s.toks) || s.toks[k-1].trail != "" || !s.word(k) || s.toks[k].lower != "from" {
		return sp
	}
	for k++; k < len(s.toks) && s.word(k) && articles[s.toks[k].lower]; k++ {
	}
	if k >= len(s.toks) || s.word(k) {
		return sp
	}
	src := s.spans[s.spanOf[k]]
	if src.i != k || src.cls != code || src.pinned != "" || sp.pinned != "" {
		return sp
	}
	sp.j, sp.end = src.j, src.end
	return sp
}

// coordinated reports two values joined by a conjunction or a comma:
// "80 and 443", "Redis for caching and Postgres for storage".
func (s *sentence) coordinated(a, b span) bool {
	for k := a.j - 1; k < b.i; k++ {
		if strings.Contains(s.toks[k].trail, ",") || k >= a.j && s.word(k) && conjunctions[s.toks[k].lower] {
			return true
		}
	}
	return false
}

// mergeName joins a name to the number that follows it when both open a
// copula's complement: "is Python 3.11", "is PostgreSQL 16".
func (s *sentence) mergeName(i, pred int) span {
	sp := s.spans[i]
	if !s.copular || sp.kind != kindNumber || i == 0 {
		return sp
	}
	prev := s.spans[i-1]
	start := pred
	for start < len(s.toks) && s.word(start) && articles[s.toks[start].lower] {
		start++
	}
	if prev.cls != name || prev.kind != kindName || prev.j != sp.i || prev.i != start || s.toks[prev.j-1].trail != "" {
		return sp
	}
	sp.i, sp.start = prev.i, prev.start
	return sp
}

// apposition finds "[Det] noun… [named|called] VALUE predicate": a code
// value right after one to three plain nouns at the start, before the
// main verb. It returns the span and the end of the nouns, or -1.
func (s *sentence) apposition() (int, int) {
	k, n := 0, len(s.toks)
	if determiners[s.toks[0].lower] {
		k = 1
	}
	start := k
	for k < n && k-start < 3 && s.word(k) && s.toks[k].cls == word && s.toks[k].trail == "" &&
		isLower(s.toks[k].core) && !prepositions[s.toks[k].lower] && !conjunctions[s.toks[k].lower] &&
		!isCopula(s.toks[k].lower) && !relativePronouns[s.toks[k].lower] && !(s.mv >= 0 && k >= s.mv) {
		k++
	}
	if k == start || k >= n {
		return -1, 0
	}
	if (s.toks[k].lower == "named" || s.toks[k].lower == "called") && s.word(k) && k+1 < n {
		k++
	}
	end := k
	if s.word(k) {
		return -1, 0
	}
	i := s.spanOf[k]
	sp := s.spans[i]
	if sp.i != k || sp.cls != code || sp.j >= n || s.mv >= 0 && s.mv < sp.j {
		return -1, 0
	}
	if t := s.toks[sp.j]; sp.kind == kindNumber && s.word(sp.j) && sp.j != s.mv && isLower(t.lower) && !prepositions[t.lower] && !isCopula(t.lower) {
		if _, verb := verbForm(t.lower); !verb {
			return -1, 0 // "The size 10 jeans": the value modifies a noun, it does not name the subject
		}
	}
	return i, end
}

// inversion keys "VALUE is the NOUN…" ("8080 is the metrics port"): a
// copula whose complement is a definite description without values, after
// a subject that holds exactly one code value. The description is the
// subject; the rest of the original subject joins the relation.
func (s *sentence) inversion(pred int) (Fact, bool) {
	if !s.copular || pred >= len(s.toks) || s.toks[pred].lower != "the" {
		return Fact{}, false
	}
	val := -1
	for i, sp := range s.spans {
		switch {
		case sp.i >= pred && sp.cls == code:
			return Fact{}, false
		case sp.i < s.mv && sp.cls == code:
			if val >= 0 {
				return Fact{}, false
			}
			val = i
		}
	}
	if val < 0 {
		return Fact{}, false
	}
	sp := s.spans[val]
	if val > 0 {
		if prev := s.spans[val-1]; prev.cls == name && prev.kind == kindName && prev.j == sp.i && sp.kind == kindNumber {
			sp.i, sp.start = prev.i, prev.start
		}
	}
	g, _ := s.verbGroup()
	rel := temporal.NormalizeKeyPart(g + " " + s.keyWords(0, s.mv, &sp))
	return s.build(s.keyWords(pred, len(s.toks), nil), rel, sp)
}

// bareComplement keys a copula, "uses" or "defaults to" followed by one to
// three plain words that end the sentence: "The default branch is main",
// "The frontend uses pnpm". A subject that holds a verb of its own is a
// second clause, and gets no key.
func (s *sentence) bareComplement(pred int) (Fact, bool) {
	if s.mv < 0 {
		return Fact{}, false
	}
	g, _ := s.verbGroup()
	if !s.copular && g != "uses" && g != "use" && g != "defaults to" {
		return Fact{}, false
	}
	for k := 0; k < s.mv; k++ {
		if th, ok := verbs[s.toks[k].lower]; ok && th && s.word(k) && k > 0 && s.verbPosition(k) ||
			conjunctions[s.toks[k].lower] {
			return Fact{}, false
		}
	}
	k, n := pred, len(s.toks)
	for k < n && s.word(k) && articles[s.toks[k].lower] {
		k++
	}
	if n-k < 1 || n-k > 3 {
		return Fact{}, false
	}
	if participle(s.toks[k].lower) && !statusWords[s.toks[k].lower] {
		// "is paid monthly", "has been prescribed metformin": the
		// participle is the relation, not the value.
		return Fact{}, false
	}
	if _, ok := ingBase(s.toks[k].lower); ok && strings.HasSuffix(s.toks[k].lower, "ing") && n-k > 1 {
		return Fact{}, false // "is hiring drivers": a verb and its object
	}
	for j := k; j < n; j++ {
		t := s.toks[j]
		_, verb := verbForm(t.lower)
		if !s.word(j) || t.cls != word || t.lead != "" || j < n-1 && t.trail != "" ||
			prepositions[t.lower] || conjunctions[t.lower] || pronounSubjects[t.lower] || verb && j == k ||
			!hasLetter(t.core) {
			return Fact{}, false
		}
	}
	sp := span{i: k, j: n, cls: word, start: s.toks[k].start, end: s.toks[n-1].end}
	return s.build(s.keyWords(0, s.mv, nil), temporal.NormalizeKeyPart(g), sp)
}

// predicateKey keys a value of the predicate: the subject is what precedes
// the main verb, the relation is the rest without the value. With no main
// verb, the words before the value are the subject and those after it
// the relation.
func (s *sentence) predicateKey(sp span) (Fact, bool) {
	n := len(s.toks)
	if s.mv >= 0 {
		return s.build(s.keyWords(0, s.mv, nil), s.keyWords(s.mv, n, &sp), sp)
	}
	before, after := s.keyWords(0, sp.i, nil), s.keyWords(sp.i, n, &sp)
	if before == "" || after == "" {
		w := strings.Fields(before + " " + after)
		if len(w) < 2 {
			return Fact{}, false
		}
		before, after = w[0], strings.Join(w[1:], " ")
	}
	return s.build(before, after, sp)
}

// build assembles the fact, refusing an empty or pronoun subject, an
// empty relation and a blank value.
func (s *sentence) build(subject, relation string, sp span) (Fact, bool) {
	obj := strings.Join(strings.Fields(s.text[sp.start:sp.end]), " ")
	if subject == "" || relation == "" || pronounSubjects[subject] || temporal.NormalizeObject(obj) == "" {
		return Fact{}, false
	}
	s.slot = sp
	return Fact{Subject: subject, Relation: relation, Object: obj, Rule: s.rule}, true
}

// keyWords joins toks[from:to] into a normalised key part: the value slot
// left out (a pinned requirement leaves its name), the verb group in its
// normal form, articles and time adverbs dropped.
func (s *sentence) keyWords(from, to int, slot *span) string {
	var b []string
	for k := from; k < to; {
		switch {
		case slot != nil && k == slot.i:
			if slot.pinned != "" {
				b = append(b, slot.pinned)
			}
			k = slot.j
			continue
		case k == s.mv:
			g, next := s.verbGroup()
			b = append(b, g)
			k = next
			continue
		}
		if t := s.toks[k]; !s.word(k) || !articles[t.lower] && !timeAdverbs[t.lower] {
			b = append(b, t.lower)
		}
		k++
	}
	return temporal.NormalizeKeyPart(strings.Join(b, " "))
}

// coded reports a value in toks[i:j] that is a quantity or a code value
// (a number with its unit, a version, an identifier, a path, a quoted
// string), not a name or plain words: such values are taken to be single
// whatever the verb. A number right after a name is part of a name ("ISO
// 27001", "Building 4"), not a quantity.
func (s *sentence) coded(i, j int) bool {
	for k := i; k < j; k++ {
		if s.word(k) {
			continue
		}
		sp := s.spans[s.spanOf[k]]
		// "ISO 27001 certification", "the Building 4 lobby": an integer
		// between a name and a plain noun names a thing ("JDK 17" and
		// "Node 22 in production" are versions).
		named := sp.i > 0 && !s.word(sp.i-1) && s.toks[sp.i-1].trail == "" &&
			s.spans[s.spanOf[sp.i-1]].cls == name && s.spans[s.spanOf[sp.i-1]].kind == kindName &&
			sp.j < len(s.toks) && s.word(sp.j) && s.toks[sp.j-1].trail == "" && isLower(s.toks[sp.j].lower) &&
			!prepositions[s.toks[sp.j].lower] && !conjunctions[s.toks[sp.j].lower] && !strings.Contains(s.toks[sp.i].core, ".")
		if sp.cls == code && !(sp.kind == kindNumber && named) || sp.kind == kindNumber && !named {
			return true
		}
	}
	return false
}

// manyValued reports a key whose relation can hold several values at
// once, so that another value is another fact, not a replacement: a verb
// of manyVerbs or an adjective of manyAdjectives whose value is not a
// code value ("The clinic accepts Aetna insurance", "The runbook is
// available in Spanish") and class membership ("Alice is a nurse"). Such
// sentences get no key: a key would make each new value retire the last
// (precision before recall).
func (s *sentence) manyValued() bool {
	return s.manyValuedSlot(s.slot.i, s.slot.j, s.coded(s.slot.i, s.slot.j))
}

// manyValuedSlot is manyValued for the value in toks[i:j]; coded says it
// is a code value (a number, a version, an identifier, a quoted string),
// whose relation is taken to be single-valued whatever the verb
// ("Errors carry the text in the field 'reason'").
func (s *sentence) manyValuedSlot(i, j int, coded bool) bool {
	if s.copular && s.mv >= 0 {
		// An indefinite complement right after the copula is a class the
		// subject is one of: "is a nurse", "is a member of the chess club"
		// (not "is a fine-tuned distilbert-base-uncased", where the value
		// follows the article's noun phrase without a preposition; not "is a
		// Volvo V60", a name; not "is available for a fee of $40", inside a
		// phrase).
		_, pred := s.verbGroup()
		k := pred
		if k < len(s.toks) && s.word(k) && indefinites[s.toks[k].lower] && k <= i && (k == i || k == i-1 || s.hasPreposition(k+1, i)) {
			named := k == i && i+1 < j && !s.word(i+1) || k == i-1 && !s.word(i)
			if !named {
				return true
			}
		}
	}
	if s.copular && s.mv >= 0 {
		for k := s.mv + 1; k < i; k++ {
			w := s.toks[k].lower
			if !s.word(k) {
				continue
			}
			// "is certified under ISO 9001", "is compatible with iOS",
			// "is grown in Assam": one of many, whatever the value's shape.
			if manyStanding[w] {
				return true
			}
			// A progressive is its verb: "is hiring drivers" is "hires".
			if k == s.mv+1 && strings.HasSuffix(w, "ing") {
				if b, ok := ingBase(w); ok && !singleVerbs[b] {
					return true
				}
			}
		}
	}
	if s.copular && s.mv >= 0 && s.closedOn(i) {
		return true // "closed on Mondays", "open on public holidays"
	}
	if s.timeValue(i, j) {
		return false // a schedule: "collected on Thursdays", "reviewed every January"
	}
	if coded {
		if s.copular && s.mv >= 0 && i >= 2 && s.toks[i-1].lower == "by" || i >= 3 && s.toks[i-2].lower == "by" && articles[s.toks[i-1].lower] {
			// "is served by the 14 bus": a passive's agent is a name
			// whatever its shape.
			return s.manyPassive(i)
		}
		return s.manyCoded(i, j)
	}
	if s.copular && s.mv >= 0 {
		for k := s.mv + 1; k < i; k++ {
			// "available in Spanish", "admitted to the bar in Ontario",
			// but not "sold to Brightgrid" or "approved by the CFO"
			if s.word(k) && manyAdjectives[s.toks[k].lower] && placePreps[s.prevWord(i, k+1)] {
				return true
			}
		}
		return s.manyPassive(i)
	}
	if s.copular {
		return false
	}
	if s.mv < 0 {
		// No verb found: the relation is unknown ("Solenne Air flies to
		// Reykjavik": "flies" is not in the verb list), so a name or plain
		// value may be one of many.
		return true
	}
	v := lastPart(s.toks[s.mv].lower)
	if sourceVerbs[v] && s.toks[s.mv+1].lower == "from" && s.mv+1 < i {
		return false // "ships from our Leeds warehouse": one source (it ships to many)
	}
	if (v == "has" || v == "have") && s.attributeOf(i) && s.valueShaped(i, j) {
		return false // "has an energy rating of B"
	}
	if manyVerbs[v] || !singleVerbs[v] {
		return true
	}
	if i > 0 && s.word(i-1) && indefinites[s.toks[i-1].lower] {
		return true // "requires a badge": one kind of thing among several
	}
	// The value must follow the verb closely: "leaves from Pier 3", not
	// "leaves bequests to the shelter" ("takes place in" is one verb), or
	// be what an attribute of the object is ("requires a quorum of five
	// directors").
	if s.attributeOf(i) {
		return false
	}
	for k := s.mv + 1; k < i; k++ {
		w := s.toks[k].lower
		if s.word(k) && !prepositions[w] && !articles[w] && !timeAdverbs[w] && !quantifiers[w] &&
			!(k == s.mv+1 && idiomObjects[w] && (v == "takes" || v == "take")) {
			return true
		}
	}
	return false
}

// manyCoded is manyValuedSlot for a code value or a quantity. After a
// copula, a verb of one value or a verb the lists do not know, it is one
// value ("is 30 days", "retails for $129"). After a verb of many values
// it is one only as the amount of the verb's object: right after the verb
// or a bound ("has 12 partitions", "covers up to $150"), or as the amount
// an attribute of the object has ("has a range of 60 kilometres", "incurs
// a fee of $75") — not a number named in a phrase ("allows inbound
// traffic on port 443"). Identifiers, paths and quoted field names are
// one value, but a quoted title after a verb of membership is one of many
// ("The reading list includes \"Middlemarch\"").
func (s *sentence) manyCoded(i, j int) bool {
	if s.copular || s.mv < 0 {
		return false
	}
	v := lastPart(s.toks[s.mv].lower)
	switch {
	case s.quoted(i, j) && memberVerbs[v]:
		return true
	case !manyVerbs[v], !s.quantity(i, j):
		return false // an identifier, a path, a field name: one value
	case i > 0 && s.toks[i-1].lower == "for" && (v == "sells" || v == "sell" || v == "rents" || v == "rent"):
		return false // a price: "sells for £6.80 a bag"
	}
	return !s.amountOf(i)
}

// amountOf reports a value that is the amount of the main verb's object:
// only articles, quantifiers, time adverbs and bounds ("up to", "at
// most") between them, or "a/an/the [words] of" before the value ("a
// range of 60 km").
func (s *sentence) amountOf(i int) bool {
	k := s.mv + 1
	for k < i && s.word(k) && (articles[s.toks[k].lower] || quantifiers[s.toks[k].lower] || timeAdverbs[s.toks[k].lower] ||
		bounds[s.toks[k].lower]) {
		k++
	}
	if k == i {
		return true
	}
	if p := s.toks[i-1].lower; p == "within" || p == "least" || p == "most" || p == "to" && i >= 2 && s.toks[i-2].lower == "up" {
		return true // a bound on the object: "covers competitors within 10 miles"
	}
	return s.attributeOf(i)
}

// attributeOf reports a value that is what an attribute of the main verb's
// object is: "[a/an/the] WORDS of/for VALUE" right after the verb ("has a
// range of 60 km", "requires a quorum of five directors", "has capacity
// for 40 patients").
func (s *sentence) attributeOf(i int) bool {
	k := s.mv + 1
	if k >= i || !s.word(k) || !(s.toks[i-1].lower == "of" || s.toks[i-1].lower == "for") || i-k > 5 {
		return false
	}
	if articles[s.toks[k].lower] {
		k++
	}
	for ; k < i-1; k++ {
		if !s.word(k) || prepositions[s.toks[k].lower] {
			return false
		}
	}
	return true
}

// quantity reports a number (with its unit) in toks[i:j].
func (s *sentence) quantity(i, j int) bool {
	for k := i; k < j; k++ {
		if !s.word(k) && s.spans[s.spanOf[k]].kind == kindNumber && !version(s.toks[s.spans[s.spanOf[k]].i].core) {
			return true
		}
	}
	return false
}

// version reports a version rather than an amount: 4.2.1, v2, >=3.11.
func version(w string) bool {
	return strings.Count(w, ".") >= 2 || len(w) > 1 && (w[0] == 'v' || w[0] == 'V') && isDigit(w[1]) ||
		strings.ContainsAny(w[:1], "=<>~^")
}

// closedOn reports "closed on", "open on" right before the value at i.
func (s *sentence) closedOn(i int) bool {
	k := i - 1
	for k > s.mv && s.word(k) && articles[s.toks[k].lower] {
		k--
	}
	return k > s.mv+1 && s.toks[k].lower == "on" && closures[s.toks[k-1].lower]
}

// manyPassive reports a passive verb that relates its subject to many
// values: its agent ("by …") when the participle is one of manyPassives
// ("is stocked by", "is attended by") without a modal ("must be signed
// by the general counsel" is a rule) or a particle ("signed off by",
// "carried out by"); any other complement ("is deployed in Dublin", "is
// shown on Channel 5") unless the participle is one of singlePassives
// ("is located in", "is held on") or states a setting.
func (s *sentence) manyPassive(i int) bool {
	for k := s.mv + 1; k < i; k++ {
		w := s.toks[k].lower
		if !s.word(k) || !participle(w) && !singlePassives[w] && !manyPassives[w] {
			continue
		}
		n := k + 1
		particle := n < i && (s.toks[n].lower == "off" || s.toks[n].lower == "out")
		if particle {
			n++
		}
		if n < len(s.toks) && s.toks[n].lower == "by" {
			return manyPassives[w] && !particle && !modals[s.toks[s.mv].lower]
		}
		return !singlePassives[w] && !placeParticiples[w] && !statusWords[w]
	}
	return false
}

// timeValue reports a value in toks[i:j] that is a time and nothing
// else: weekdays, months, clock times, dates, numbers with a unit of time
// ("Thursdays", "every January", "10:00", "2 hours", "June 30").
func (s *sentence) timeValue(i, j int) bool {
	found := false
	for k := i; k < j; k++ {
		w := strings.TrimSuffix(s.toks[k].lower, "s")
		switch {
		case weekdays[w] || months[w] || w == "midnight" || w == "noon" || w == "midday":
			found = true
		case s.word(k) && (articles[w] || connectors[s.toks[k].lower] || quantifiers[w]):
		case s.word(k):
			return false
		default:
			sp := s.spans[s.spanOf[k]]
			if sp.kind != kindNumber {
				return false
			}
			if sp.j > sp.i+1 && timeUnits[s.toks[sp.j-1].lower] || strings.Contains(s.toks[sp.i].core, ":") {
				found = true
			}
		}
	}
	return found
}

// quoted reports a quoted value in toks[i:j].
func (s *sentence) quoted(i, j int) bool {
	for k := i; k < j; k++ {
		if !s.word(k) && s.spans[s.spanOf[k]].kind == kindQuoted {
			return true
		}
	}
	return false
}

// participle reports a past participle: a regular -ed or -en form or an
// irregular one.
func participle(w string) bool {
	return irregularParticiples[w] || len(w) >= 5 && isLower(w) && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "en"))
}

// hasPreposition reports a preposition among the words toks[i:j].
func (s *sentence) hasPreposition(i, j int) bool {
	for k := i; k < j; k++ {
		if s.word(k) && prepositions[s.toks[k].lower] {
			return true
		}
	}
	return false
}

// lastPart is a hyphenated word's last part ("bulk-loads" → "loads").
// ingBase is the base of a verb's -ing form the verb lists know
// ("hiring" → "hire", "running" → "run").
func ingBase(w string) (string, bool) {
	stem := strings.TrimSuffix(w, "ing")
	for _, b := range []string{stem, stem + "e", stem[:max(len(stem)-1, 0)]} {
		if _, ok := verbs[b]; ok && b != "" {
			return b, true
		}
		if manyVerbs[b] || singleVerbs[b] {
			return b, true
		}
	}
	return "", false
}

func lastPart(w string) string {
	if i := strings.LastIndexByte(w, '-'); i >= 0 {
		return w[i+1:]
	}
	return w
}
