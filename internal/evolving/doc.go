// Package evolving rebuilds the marker-free evolving benchmarks of
// MemStrata (Appendix B) and its static project-fact set, as datasets in
// package eval's contract.
//
// # Basics
//
// [Evolving] returns the four evolving benchmarks in a fixed order —
// code_mutation (30 scenarios: function renames, endpoint moves, config
// names, imports, dependencies; B.3), config_migration (20; B.4),
// dependency_bump (20; B.5) and api_evolution (20; B.6). A [Scenario] is a
// state-A text, a state-B text identical to it except for one mutated
// value, a question, and both values; the gold answer is ValueB. The first
// three scenarios of each benchmark are the paper's examples verbatim; the
// rest are drawn from this package's templates and value pools with a
// seeded PCG generator, so one seed gives one dataset on every machine.
//
// [ProjectFacts] returns 50 static facts (ports, model names, config
// flags, thresholds, decision records; B.7 "domain") with a question each
// and no contradictions, for measuring recall preservation.
//
// [Benchmark.Corpus] and [FactsCorpus] write a benchmark as eval corpus
// and query lines: every state-A line, then every state-B line, one hour
// apart; one query per scenario a day after the last line, whose gold is
// the B line and whose stale answer is the A line. With keys, each line
// carries the fact key of [extract.Key], so an engine can supersede on it.
//
//	for _, b := range evolving.Evolving(evolving.DefaultSeed) {
//		corpus, queries := b.Corpus(start, true)
//		// write them as JSONL, run eval …
//	}
//
// # Marker-free invariant
//
// No state text holds a word that tells which state is the later one:
// [Marker] finds old, new, current(ly), previous(ly), deprecated, legacy,
// outdated, latest, former(ly), updated, "no longer", now, anymore,
// replaced, renamed, changed, upgraded, obsolete and a few inflections, on
// word boundaries and in any case. The only currency signal is the order
// in which the lines are recorded (MemStrata B.1, B.2). The tests enforce
// it, and that A and B differ in exactly one span that is the value, that
// no question holds its values, and that no scenario's text holds another
// scenario's value.
//
// # Caveats
//
// The templates are this package's own: they follow the shapes of the
// paper's examples, not its unpublished scenario lists, so scores on them
// are comparable with each other, not with the paper's numbers. The
// datasets carry no vectors; an embedder is the caller's choice. Scenario
// values are distinct within a benchmark, not across benchmarks.
//
// With keys, supersession depends on [extract.Key] keying both states
// alike (the tests log the rates). One code_mutation template, "The
// billing module imports parse_money from {v}", used to defeat it (2.6%
// of code_mutation scenarios over 41 seeds): the extractor keyed on the
// imported name, not on the module that changes. It now takes "NAME from
// MODULE" as one value.
package evolving
