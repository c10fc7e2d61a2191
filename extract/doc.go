// Package extract turns a sentence that states one single-valued fact into
// a (subject, relation, object) fact key, by deterministic rules.
//
// # Basics
//
// [Key] returns a [Fact] or false. Two sentences that state the same fact
// with different values key to the same Subject and Relation and
// different Objects, so a memory engine that supersedes on the key
// (MemStrata's assertion path, [temporal.Resolve]) retires the older
// sentence; the same Object is a duplicate.
//
//	f, ok := extract.Key("The SESSION_TIMEOUT setting is 1800 seconds in config.py.")
//	// f = {Subject: "session timeout setting", Relation: "is in config py", Object: "1800 seconds"}
//
// Subject and Relation are normalised like [temporal.NormalizeKeyPart]
// (lower-case, punctuation folded to single spaces) after the articles
// a/an/the and the time adverbs now/currently/still/presently/today are
// dropped and the verb
// group is put in a normal form ("is", "are", "is set to", "has been
// configured as", "equals" and "=" are all "is"; "must be" and "can be"
// keep their modal; "defaults to" is one verb). The Object keeps its
// spelling, with white space collapsed.
//
// # Values
//
// A value is found by its shape first:
//
//   - code values: numbers with an optional unit of measure (42, 0.85,
//     1800 seconds, 512MiB, 80%, $5, 02:00 UTC, 2025-06-01), versions
//     (1.26.4, v2, >=3.11, ^18.2.0), pinned requirements (numpy==1.26.4:
//     the name joins the relation, "==1.26.4" is the Object; react@18.2.0
//     and pkg=1.2 give the bare version), CLI flags (--workers), code
//     identifiers (fetch_user(uid) with its arguments, snake_case,
//     camelCase, SESSION_TIMEOUT, a::b, words with letters and digits such
//     as p99, gpt-4o, us-east-1), paths and URLs (/api/v2/users,
//     s3://bucket/key, src/app.ts, models/tokenizer — but not read/write
//     or CI/CD), METHOD PATH (GET /api/v1/users), file
//     and module names (settings.yaml, os.path), e-mail addresses,
//     handles and channels (@team, #ops), and anything quoted ('tag',
//     "two words", `flag`), whose Object is the text inside the quotes;
//   - names: capitalised or mixed-case words after the first word
//     (Redis, PostgreSQL, iOS), acronyms (JWT, UTC), runs of them (Stripe
//     API), words with two or more hyphens (bge-reranker-base), and
//     true/false. A name right before a plain noun is attributive, not a
//     value ("the PDF renderer", "a REST API");
//   - bare words: one to three plain words that end a sentence after a
//     copula, "uses" or "defaults to" ("The default branch is main").
//
// Units of measure (time, size, rate, currency, percent, time zones)
// belong to the value, so "30 seconds" and "2 minutes" are two values of
// one fact; count nouns ("replicas", "workers", "requests") stay in the
// relation, so "3 replicas" and "3 workers" are different facts.
//
// # Sentence shapes
//
// The main verb splits subject from predicate: the sentence's one present
// copula (is, are, be, been, equals, =; not one inside a relative clause
// "that is"), else its first third-person verb from a list of common
// verbs (uses, pins, sets, listens, returns…; "re-indexes" is read as
// "indexes"), else a base-form verb from that list after a plural noun
// ("Employees receive…"), else the first word ending in -s before any
// value. Values before the main verb are names inside the subject ("The
// SESSION_TIMEOUT setting is …") and part of the key. With no main verb
// the sentence must hold exactly one value; the words before it are the
// subject and those after it the relation.
//
// The value slot is chosen among the values of the predicate, in this
// order, and a tie at the first level that has any is ambiguous:
//
//  1. a code value outside a placing phrase: copular "X is V", "X is set
//     to V", "X defaults to V", "X pins V", "X listens on port V", "X sets
//     Y to V" (Y, followed by to/as/at/= and a value, is a name, not the
//     slot), and a package before its version ("requires
//     github.com/gin-gonic/gin v1.9.1": the path is a name); a name right
//     before a number that opens a copula's complement joins it ("is
//     Python 3.11"), and a code value in a "from" phrase right after it
//     joins it too ("imports parse_money from money_v1": the import is one
//     value, whichever half changes);
//  2. apposition: "The function NAME(args) does Z" — a code value right
//     after one to three nouns at the start, with no name competing after
//     the verb. The value is the named thing, the nouns are the subject
//     and the whole predicate is the relation, so "The function
//     fetch_user(uid) looks up a user record" keys (function, looks up
//     user record, fetch_user(uid));
//  3. inversion: "8080 is the metrics port" — a code value in the subject
//     and a definite description after the copula; the description is the
//     subject;
//  4. a name outside a placing phrase ("X uses Redis for caching");
//  5. a code value, then a name, inside a placing phrase — one that opens
//     with in, from, for, via, of, with, under, within, during, per…
//     ("The service is deployed in us-east-1"); when another candidate
//     exists such phrases only place the fact ("… is 1800 seconds in
//     config.py" keys on config.py as part of the relation);
//  6. a bare-word complement.
//
// # Updates
//
// [Compare] tells a marker-free update of one single-valued fact (the
// same statement with one value changed after the verb: "The API rate
// limit is 100 requests per minute." / "… 250 …") from two different facts
// that share their wording: another subject, a scope beside another value
// ("25 days for contractors"), another relation ("opens" / "closes",
// "serviced by" / "made by"), or a relation of many values ("speaks
// French", "accepts Aetna", "is stocked by", "is a member of", a verb the
// lists do not know with a name after it, a standing held with many
// bodies: "is certified under", "is compatible with", a progressive "is
// hiring"), or a rule's scope ("masks are required in the recovery
// ward"). A value is a number with its unit (spelt out, with a fraction:
// "four and a half hours"; with a possessive: "two months' rent"), a
// date, a code value, a name, a copula's plain complement, a passive's
// definite agent, a definite noun phrase completing a copula after a
// definite subject ("The meeting point is the fountain in Plaza Real"),
// or the object of the predicate's own phrase — right after a verb of one
// value, a copula ("is on the ground floor"), or a participle of placing
// or making ("is held in the east wing lobby", "is made of stainless
// steel") — unless it recurs ("on Saturday mornings"). Key refuses the
// many-valued kinds too: a key would make each new value retire the
// last. The engine keys text
// with both at ingest (tidemark.KeysAuto). Precision and recall on pairs
// written apart from these rules are measured by internal/heldout.
//
// # Caveats
//
// The rules were written against MemStrata's examples and checked on a
// held-out table of sentences from other domains (extract_test.go), whose
// hit rate the tests log and bound. Known misses: a direct object that is
// a code value wins over a value in a phrase after it ("caches
// node_modules for 7 days" keys on node_modules), and complements of more
// than three plain words ("is materialized as a view") get no key.
//
// Key returns false — no key beats a wrong key — for questions; sentences
// with a negation (not, never, no, n't), a hedge or condition (may,
// should, will, if, unless); a past copula (was, were); two copulas or
// two sentences; coordinated values ("80 and 443", "3.10, 3.11"); from X
// to Y; a name competing with an apposition; a pronoun subject; and texts
// over 1000 bytes or 60 words. It has no parser: the main verb is found
// from a word list and suffixes, so a plural noun before the verb may be
// taken for it ("The audit logs retain…"). That moves the line between
// Subject and Relation but not the key's identity, which is the whole
// sentence without its value. A rename of the name inside a subject
// ("The setting SESSION_TTL is 30 seconds" after "… SESSION_TIMEOUT …")
// is a different key, not a supersession: the name is the fact's
// identity unless the sentence puts it in the value slot.
package extract
