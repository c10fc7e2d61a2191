package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// class ranks how surely a token is a value.
type class uint8

const (
	// word is an ordinary word.
	word class = iota
	// name is a proper name, an acronym or a boolean: "Redis", "JWT",
	// "true". A value when no code value competes.
	name
	// code is a value by its shape alone: a number, version, identifier,
	// path, file name or quoted string.
	code
)

// kind is the shape of a value token.
type kind uint8

const (
	kindNone kind = iota
	kindNumber
	kindPinned // name==1.2.3: the name keys the fact, the version is the value
	kindIdent
	kindCall // fetch_user(uid)
	kindPath
	kindFile
	kindQuoted
	kindMethod     // GET (alone: a name)
	kindMethodPath // GET /api/v1/users
	kindName
	kindBool
)

const (
	leadPunct  = "([{\"'`“‘’«*"
	trailPunct = ".,;:!?)]}\"'`”’»*"
	openQuotes = "\"'`“‘’«"
	closeQuote = "\"'`”’»"
	maxQuoted  = 6 // tokens in one quoted value
	maxCall    = 6 // tokens in one call's argument list
)

// token is one whitespace-separated word of the sentence.
type token struct {
	core        string // the word without the punctuation around it
	lower       string // core, lower-case
	start, end  int    // core's byte range in the text
	lead, trail string // punctuation stripped before and after core
	cls         class
	kind        kind
}

// tokenize splits text at white space and classifies each word. The first
// word is never a name: its capital is the sentence's.
func tokenize(text string) []token {
	var toks []token
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		t := newToken(text, i, j)
		t.cls, t.kind = classify(t.core, len(toks) == 0)
		toks = append(toks, t)
		i = j
	}
	for k := range toks {
		t := &toks[k]
		prev, next := "", ""
		if k > 0 {
			prev = toks[k-1].lower
		}
		if k+1 < len(toks) {
			next = toks[k+1].lower
		}
		switch {
		case t.lower == "one" && k > 0 && (next != "" && next != "of" && t.trail == "" || next == "" && copulas[prev]),
			t.lower == "last" && prev == "the",
			prev == "every" && periods[t.lower] && t.cls == word:
			t.cls, t.kind = name, kindNumber
		case t.kind == kindNumber && numberWords[t.lower] && (prev == "per" || prev == "a" || prev == "an"):
			t.cls, t.kind = word, kindNone
		}
	}
	return toks
}

// newToken strips sentence punctuation from text[i:j], giving back closing
// brackets that balance the word ("load_config()." keeps its parentheses).
func newToken(text string, i, j int) token {
	raw := text[i:j]
	s, e := 0, len(raw)
	for s < e {
		r, n := utf8.DecodeRuneInString(raw[s:e])
		if !strings.ContainsRune(leadPunct, r) {
			break
		}
		s += n
	}
	for e > s {
		r, n := utf8.DecodeLastRuneInString(raw[s:e])
		if !strings.ContainsRune(trailPunct, r) {
			break
		}
		e -= n
	}
	for e < len(raw) {
		c := raw[e]
		if c == ')' && strings.Count(raw[s:e], "(") > strings.Count(raw[s:e], ")") ||
			c == ']' && strings.Count(raw[s:e], "[") > strings.Count(raw[s:e], "]") {
			e++
			continue
		}
		break
	}
	core := raw[s:e]
	return token{core: core, lower: strings.ToLower(core), start: i + s, end: i + e, lead: raw[:s], trail: raw[e:]}
}

// classify gives a word's value class and shape.
func classify(w string, first bool) (class, kind) {
	if w == "" || abbreviations[strings.ToLower(w)] {
		return word, kindNone
	}
	lw := strings.ToLower(w)
	switch {
	case httpMethods[w]:
		return name, kindMethod
	case isNumeric(w):
		return code, kindNumber
	case numberWords[lw] && !first,
		strings.Contains(lw, "-") && numberWords[lw[:strings.IndexByte(lw, '-')]] && !first: // "two-year"
		// A number spelt out is a value, but ranks as a name: a code
		// value beside it wins ("runs Elasticsearch 8.11 on three nodes").
		return name, kindNumber
	case pinnedAt(w) > 0:
		return code, kindPinned
	case strings.Contains(w, "@") && strings.Contains(w[strings.Index(w, "@"):], "."),
		(w[0] == '@' || w[0] == '#') && len(w) > 1 && isLetter(w[1:]):
		return code, kindIdent // e-mail, handle, channel
	case isPath(w, lw):
		return code, kindPath
	case isCall(w):
		return code, kindCall
	case strings.Contains(w, "_") && hasLetter(w), strings.Contains(w, "::"),
		strings.HasPrefix(w, "--") && len(w) > 2 && isASCIILetter(w[2]):
		return code, kindIdent
	case isDotted(w):
		return code, kindFile
	case hasLetter(w) && hasDigit(w):
		return code, kindIdent // p99, gpt-4o, us-east-1, ADR-017
	case booleans[lw]:
		return name, kindBool
	}
	// A camelCase identifier has a hump: a lower-case letter, then an
	// upper-case one followed by a lower-case one (getUserById); iOS and
	// macOS are names.
	letters, upper := 0, 0
	hump := false
	var p2, p1 rune
	for _, r := range w {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
			if unicode.IsLower(p2) && unicode.IsUpper(p1) && unicode.IsLower(r) {
				hump = true
			}
		}
		p2, p1 = p1, r
	}
	first0, _ := utf8.DecodeRuneInString(w)
	switch {
	case letters == 0:
		return word, kindNone
	case hump && unicode.IsLower(first0):
		return code, kindIdent // camelCase
	case upper == letters && letters >= 2:
		return name, kindName // acronym
	case (unicode.IsUpper(first0) || upper > 0) && (upper > 1 || !first) && w != "I":
		return name, kindName // Redis, PostgreSQL, iOS
	case strings.Count(w, "-") >= 2 && upper == 0:
		return name, kindName // bge-reranker-base
	}
	return word, kindNone
}

// isNumeric reports a number, version, size, time or date, with an
// optional comparison or currency prefix: 42, 0.85, 1.26.4, >=3.11, ^18.2,
// v2, $5, 30s, 512MiB, 80%, 02:00, 2025-06-01.
func isNumeric(w string) bool {
	w = strings.TrimLeft(w, "=<>~^!$€£+-−¥")
	if len(w) > 1 && (w[0] == 'v' || w[0] == 'V') && isDigit(w[1]) {
		w = w[1:]
	}
	if w == "" || !isDigit(w[0]) {
		return false
	}
	for _, r := range w {
		if !(r < utf8.RuneSelf && (isDigit(byte(r)) || isASCIILetter(byte(r)) || strings.ContainsRune(".,:%_/+-", r))) {
			return false
		}
	}
	return true
}

// pinOps are the operators of a pinned requirement, longest first.
var pinOps = []string{"==", ">=", "<=", "~=", "!=", "@", "="}

// pinnedAt returns the byte index of the operator of a pinned requirement
// such as numpy==1.26.4 or react@18.2.0, or -1.
func pinnedAt(w string) int {
	for i := 1; i < len(w); i++ {
		for _, op := range pinOps {
			if !strings.HasPrefix(w[i:], op) {
				continue
			}
			rest := w[i+len(op):]
			if isNameLike(w[:i]) && rest != "" && !strings.ContainsAny(rest[:1], "=<>~^!$€£+-") && isNumeric(rest) {
				return i
			}
			break // only the longest operator at i
		}
	}
	return -1
}

// isNameLike reports a package or setting name: a letter, then letters,
// digits and _ . - [ ].
func isNameLike(s string) bool {
	if s == "" || !isASCIILetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIILetter(c) || isDigit(c) || strings.IndexByte("_.-[]", c) >= 0) {
			return false
		}
	}
	return true
}

// isPath reports a file-system path, URL or route: /api/v2/users, ./bin,
// s3://bucket/key, src/app.ts.
func isPath(w, lw string) bool {
	if slashWords[lw] || !strings.Contains(w, "/") || !hasLetterOrDigit(w) {
		return false
	}
	switch {
	case strings.HasPrefix(w, "/"), strings.HasPrefix(w, "./"), strings.HasPrefix(w, "../"),
		strings.HasPrefix(w, "~/"), strings.Contains(w, "://"):
		return true
	}
	if strings.Count(w, "/") >= 2 || hasDigit(w) || strings.Contains(w, ".") {
		return true
	}
	// A relative path of lower-case segments (models/tokenizer); CI/CD and
	// TCP/IP are names, read/write a word.
	for _, seg := range strings.Split(w, "/") {
		if seg == "" || !isNameLike(seg) || strings.ToLower(seg) != seg {
			return false
		}
	}
	return true
}

// isCall reports a call or signature: fetch_user(uid), load_config().
func isCall(w string) bool {
	i := strings.IndexByte(w, '(')
	if i <= 0 {
		return false
	}
	head := w[:i]
	if !isASCIILetter(head[0]) && head[0] != '_' {
		return false
	}
	for j := 0; j < len(head); j++ {
		c := head[j]
		if !(isASCIILetter(c) || isDigit(c) || strings.IndexByte("_.:$", c) >= 0) {
			return false
		}
	}
	return true
}

// isDotted reports a file or module name: letters or digits on both sides
// of an inner dot (config.py, os.path, Node.js).
func isDotted(w string) bool {
	i := strings.LastIndexByte(w, '.')
	if i <= 0 || i == len(w)-1 {
		return false
	}
	return hasLetter(w[:i]) && hasLetter(w[i+1:]) && isNameLike(w)
}

func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }
func hasDigit(s string) bool  { return strings.IndexFunc(s, unicode.IsDigit) >= 0 }
func isLetter(s string) bool  { r, _ := utf8.DecodeRuneInString(s); return unicode.IsLetter(r) }
func hasLetterOrDigit(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// unitWord is a unit without its possessive ("month's rent", "two
// nights' rate").
func unitWord(w string) string {
	for _, suf := range []string{"'s", "’s", "'", "’"} {
		if strings.HasSuffix(w, suf) {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

// span is a value: one or more tokens that together are one value.
type span struct {
	i, j  int // tokens [i, j)
	cls   class
	kind  kind
	start int // the value's byte range in the text
	end   int
	// pinned is the name of a pinned requirement, which joins the
	// relation; the span's bytes are then the version alone.
	pinned string
}

// findSpans groups the tokens into values: a quoted run, a call with its
// arguments, a number with its unit, METHOD PATH, a run of names; every
// other code token alone.
func findSpans(toks []token) []span {
	var out []span
	for i := 0; i < len(toks); {
		t := toks[i]
		if strings.ContainsAny(t.lead, openQuotes) {
			if j := quoteEnd(toks, i); j >= 0 {
				if toks[j].end > t.start {
					out = append(out, span{i: i, j: j + 1, cls: code, kind: kindQuoted, start: t.start, end: toks[j].end})
				}
				i = j + 1
				continue
			}
		}
		switch {
		case t.cls == name && t.kind == kindNumber:
			sp := span{i: i, j: i + 1, cls: name, kind: kindNumber, start: t.start, end: t.end}
			if k := sp.j; k+2 < len(toks) && t.trail == "" && toks[k].lower == "and" && articles[toks[k+1].lower] &&
				fractions[toks[k+2].lower] && toks[k+1].trail == "" && toks[k+2].lead == "" {
				sp.j, sp.end = k+3, toks[k+2].end // "four and a half hours"
			}
			for sp.j < len(toks) && toks[sp.j-1].trail == "" && toks[sp.j].lead == "" && units[unitWord(toks[sp.j].lower)] {
				sp.end = toks[sp.j].end
				sp.j++
			}
			out = append(out, sp)
			i = sp.j
		case t.cls == code:
			sp := span{i: i, j: i + 1, cls: code, kind: t.kind, start: t.start, end: t.end}
			switch t.kind {
			case kindCall, kindIdent:
				if j, end := callEnd(toks, i); j > i {
					sp.j, sp.end, sp.kind = j+1, end, kindCall
				}
			case kindNumber:
				for sp.j < len(toks) && toks[sp.j-1].trail == "" && toks[sp.j].lead == "" && units[toks[sp.j].lower] {
					sp.end = toks[sp.j].end
					sp.j++
				}
				if e := addressEnd(toks, sp.j); e > sp.j {
					sp.end, sp.j = toks[e-1].end, e
				}
			case kindPinned:
				at := pinnedAt(t.core)
				op := t.core[at:]
				sp.pinned = t.core[:at]
				sp.start = t.start + at
				if strings.HasPrefix(op, "@") || strings.HasPrefix(op, "=") && !strings.HasPrefix(op, "==") {
					sp.start++ // react@18.2.0 and pkg=1.2 state the bare version
				}
			}
			out = append(out, sp)
			i = sp.j
		case t.cls == name:
			sp := span{i: i, j: i + 1, cls: name, kind: t.kind, start: t.start, end: t.end}
			if t.kind == kindMethod && i+1 < len(toks) && t.trail == "" && toks[i+1].lead == "" && toks[i+1].kind == kindPath {
				sp.j, sp.cls, sp.kind, sp.end = i+2, code, kindMethodPath, toks[i+1].end
			} else if months[t.lower] && i+1 < len(toks) && t.trail == "" && toks[i+1].lead == "" && toks[i+1].kind == kindNumber {
				// A date: "June 30", "March 2026", "June 30, 2026".
				sp.j, sp.cls, sp.kind, sp.end = i+2, code, kindNumber, toks[i+1].end
				if sp.j < len(toks) && toks[sp.j-1].trail == "," && toks[sp.j].kind == kindNumber && len(toks[sp.j].core) == 4 {
					sp.end = toks[sp.j].end
					sp.j++
				}
			} else if t.kind != kindBool {
				for sp.j < len(toks) && toks[sp.j-1].trail == "" && toks[sp.j].lead == "" {
					// "Hartwell & Pryce" is one name.
					if k := sp.j; toks[k].core == "&" && toks[k].trail == "" && k+1 < len(toks) && toks[k+1].lead == "" &&
						toks[k+1].cls == name && toks[k+1].kind == kindName {
						sp.j++
						continue
					}
					if toks[sp.j].cls != name || toks[sp.j].kind != kindName {
						break
					}
					sp.end = toks[sp.j].end
					sp.j++
				}
			}
			out = append(out, sp)
			i = sp.j
		default:
			i++
		}
	}
	return out
}

// quoteEnd returns the token that closes a quote opened at toks[i], or -1.
func quoteEnd(toks []token, i int) int {
	for j := i; j < len(toks) && j < i+maxQuoted; j++ {
		if j > i && strings.ContainsAny(toks[j].lead, openQuotes) {
			return -1
		}
		if strings.ContainsAny(toks[j].trail, closeQuote) {
			return j
		}
	}
	return -1
}

// callEnd extends a call whose argument list spans several words
// ("fetch_user(uid, org)") to the token that closes it; it returns that
// token and the byte after its closing parenthesis, or (i, 0).
func callEnd(toks []token, i int) (int, int) {
	depth := strings.Count(toks[i].core, "(") - strings.Count(toks[i].core, ")")
	if depth <= 0 {
		return i, 0
	}
	for j := i + 1; j < len(toks) && j <= i+maxCall; j++ {
		depth += strings.Count(toks[j].lead, "(") - strings.Count(toks[j].lead, ")")
		depth += strings.Count(toks[j].core, "(") - strings.Count(toks[j].core, ")")
		if k := strings.IndexByte(toks[j].trail, ')'); k >= 0 && depth-strings.Count(toks[j].trail, ")") <= 0 {
			return j, toks[j].end + k + 1
		}
		if depth <= 0 {
			return j, toks[j].end
		}
	}
	return i, 0
}

// addressEnd returns the end of a street name that follows a house
// number at toks[i] ("12 Market Square"), or i.
func addressEnd(toks []token, i int) int {
	for k := i; k < len(toks) && k-i < 4 && toks[k-1].trail == "" && toks[k].lead == "" && toks[k].cls == name && toks[k].kind == kindName; k++ {
		if streets[toks[k].lower] {
			return k + 1
		}
	}
	return i
}
