package extract

import "strings"

// The closed word lists the rules use. They are lists of English function
// words, units and common verbs, not of any corpus's vocabulary.

// wordSet builds a set from space-separated words.
func wordSet(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

var (
	// articles are dropped from subjects and relations.
	articles = wordSet("the a an")
	// determiners may open an apposition ("The function NAME …").
	determiners = wordSet("the a an this our its their each every")
	// relativePronouns open a clause whose verb is not the main verb.
	relativePronouns = wordSet("that which who whom whose where")
	// pronounSubjects carry no identity of their own: a fact about "it"
	// cannot be keyed.
	pronounSubjects = wordSet("it this that these those they them he she we you i there here one")

	// copulas link a subject to its value. "be" and "been" follow a modal
	// or "has"; "equals" and "=" are copulas too.
	copulas = wordSet("is are be been equals =")
	// pastCopulas make the sentence historical: no key.
	pastCopulas = wordSet("was were")
	// assignParticiples with to/at/as after a copula assign the value:
	// "is set to", "is pinned at", "is configured as".
	assignParticiples = wordSet("set configured pinned fixed kept held capped limited")
	assignPreps       = wordSet("to at as")
	// timeAdverbs say nothing about the fact and are dropped from the
	// relation, so "X is 5" and "X is currently 5" key alike.
	timeAdverbs = wordSet("now currently still presently today")

	// contextPreps introduce a phrase that places a fact (in a file, for a
	// workload, via a service) rather than stating its value. A value in
	// such a phrase is the slot only when no better candidate exists.
	contextPreps = wordSet("in inside within under from for via across throughout during per of with into")
	// setTargets separate a named setting from the value it is set to:
	// "sets python_requires to >=3.8".
	setTargets = wordSet("to as at =")
	// conjunctions join coordinated values ("80 and 443"): ambiguous.
	conjunctions = wordSet("and or but nor plus while whereas versus vs")
	// prepositions end a bare-word value.
	prepositions = wordSet("in inside within under from for via across throughout during per of with into on at by to as over after before since until between about against through without than like")

	// negations, modals and conditionals make a sentence something other
	// than a plain statement of a value.
	negations    = wordSet("not never no none nothing nobody neither nor cannot without")
	hedges       = wordSet("may might could would should shall will maybe perhaps probably possibly likely unlikely if unless whether whenever")
	questionOpen = wordSet("what which who whom whose where when why how is are was were do does did can could should would will has have shall may")

	// booleans are values.
	booleans = wordSet("true false")
	// httpMethods followed by a path form one value ("GET /api/v1/users").
	httpMethods = wordSet("GET POST PUT PATCH DELETE HEAD OPTIONS")
	// abbreviations look like file names but are not values.
	abbreviations = wordSet("e.g i.e etc vs cf approx a.k.a")
	// slashWords look like paths but are ordinary words.
	slashWords = wordSet("and/or either/or read/write input/output yes/no on/off true/false client/server")

	// units of measure belong to the value: "30 seconds" and "2 minutes"
	// are two values of one fact. Count nouns ("replicas", "workers") are
	// not units: they name the fact and stay in the relation.
	units = wordSet(`ns µs us ms s sec secs second seconds min mins minute minutes h hr hrs hour hours
		nanoseconds microseconds milliseconds kilobytes megabytes gigabytes terabytes
		d day days wk wks week weeks month months yr yrs year years night nights
		b byte bytes kb kib mb mib gb gib tb tib pb bit bits kbit mbit gbit kbps mbps gbps mb/s gb/s kb/s
		hz khz mhz ghz % percent pct usd eur gbp dollars euros cents
		utc gmt cet cest pst pdt est edt
		mm cm m km kg g w kw °c °f a.m p.m am pm times mg mcg ml l lb lbs oz ft sq miles mph kph`)

	// numberWords are numbers spelt out, ordinals and clock words: values
	// like digits ("eight nodes", "the third Saturday", "at midnight").
	// "one" is a number only before a word other than "of" (it is a
	// pronoun as often); none is a number after "per" or "a" ("per
	// second"); see tokenize.
	numberWords = wordSet(`two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
		sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand
		million billion dozen once twice thrice
		hourly daily nightly weekly fortnightly biweekly monthly quarterly annually yearly
		first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth
		midnight noon midday`)
	// ordinals are ranks, not counts.
	ordinals = wordSet("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth last once twice thrice")
	// months open a date ("June 30").
	months = wordSet("january february march april may june july august september october november december")
	// honorifics end with a stop that does not end the sentence.
	honorifics = wordSet("dr mr mrs ms prof st no mt ft gen col capt sgt lt rev hon jr sr inc ltd co corp vs")
)

// verbBases are common verbs of technical and policy prose, in their base
// form; their third-person forms are derived. A sentence's main verb is
// its copula when it has one, else the first of these it finds.
const verbBases = `accept accrue adopt allocate allow alert apply approve archive assign authenticate authorize
	back batch belong benchmark bind block boot buffer build bump
	arrive begin
	cache call cap carry charge check choose chunk close compile compress compute configure connect
	consume contain convert correspond cost count cover create
	decode declare default define delete depart depend deploy disable dispatch display downgrade drop
	end fall go happen leave live meet move occur operate work
	attend embark invest escalate exchange protect come survive lose exceed
	subscribe recognize recognise
	earn embed emit enable encode encrypt enforce evaluate exceed execute expire export expose
	fetch filter fire flag flush format forward
	generate get give grant
	handle hash have hold host
	ignore import include index ingest install invoke
	gate join keep
	label last launch limit lint list listen live load lock log look
	manage map mark match measure merge mirror monitor mount
	name need notify
	offer open output own
	page parse partition pay pick pin point poll prefer print process produce provide proxy publish pull push
	query queue
	rank reach read receive record redirect reference refer reimburse reject release rely render renew
	replicate report require reserve reside resolve retain retry return rotate round route run
	sample scale schedule score select send serialize serve set shard ship show sign sit skip sleep sort
	spawn specify spend split standardise standardize start stop store stream subscribe support sync
	tag take target test throttle throw time tokenize track train transform translate trigger trim truncate
	update upgrade use
	validate wait wake weigh wrap write
	sell collect seat mature rehearse unload mow compete become account rent lapse
	embark disembark gather assemble`

// verbForm looks a word up in verbs, reading a hyphenated word by its
// last part ("re-indexes", "bulk-loads"): whether it is a known verb and
// whether it is the third-person form.
func verbForm(w string) (third, ok bool) {
	if i := strings.LastIndexByte(w, '-'); i >= 0 {
		w = w[i+1:]
	}
	third, ok = verbs[w]
	return third, ok
}

// verbs maps every form of verbBases the rules recognise to whether it is
// the third-person form.
var verbs = func() map[string]bool {
	m := make(map[string]bool)
	for _, b := range strings.Fields(verbBases) {
		m[b] = false
		m[thirdPerson(b)] = true
	}
	m["has"] = true
	// Past forms of decisions, as decision records state them ("ADR-015
	// chose Buildkite").
	for _, w := range strings.Fields("chose picked selected adopted") {
		m[w] = true
	}
	return m
}()

// thirdPerson is the English third-person singular of a base verb.
func thirdPerson(b string) string {
	switch {
	case b == "have":
		return "has"
	case strings.HasSuffix(b, "y") && len(b) > 1 && !strings.ContainsRune("aeiou", rune(b[len(b)-2])):
		return b[:len(b)-1] + "ies"
	case strings.HasSuffix(b, "s"), strings.HasSuffix(b, "sh"), strings.HasSuffix(b, "ch"),
		strings.HasSuffix(b, "x"), strings.HasSuffix(b, "z"), strings.HasSuffix(b, "o"):
		return b + "es"
	}
	return b + "s"
}

var (
	// manyVerbs relate a subject to many values at once ("The clinic
	// accepts Aetna" does not retire "The clinic accepts Cigna"): a new
	// value of such a verb is another fact unless it is a quantity.
	manyVerbs = func() map[string]bool {
		m := wordSet(`accept offer support sell include provide cover serve treat teach stock host feature
			contain list allow speak carry integrate play visit attend like publish handle have hire employ
			welcome enjoy collect produce grow manufacture distribute sponsor fund hold subscribe ship
			recognize recognise track measure monitor cater partner sponsor donate license borrow lend
			operate name stop export cross invest border practise practice issue hedge maintain`)
		for w := range m {
			m[thirdPerson(w)] = true
		}
		return m
	}()
	// indefinites before a complement make it a class the subject belongs
	// to ("Alice is a nurse"), one of many.
	indefinites = wordSet("a an another one some")
	// manyAdjectives after a copula relate the subject to many values
	// ("The runbook is available in Spanish", "She is admitted to the bar
	// in New York").
	manyAdjectives = wordSet(`available admitted licensed certified registered fluent offered sold spoken taught
		accepted supported allowed permitted listed included covered represented published stocked served
		eligible approved accredited insured translated valid open compatible`)
	// singleVerbs relate a subject to one value at a time when the value
	// follows them closely ("reports to Bob", "runs on Node 22", "leaves
	// from Pier 3", "meets on Tuesdays"). With a value that is a name or
	// plain words, a verb that is not in this list, or one with an object
	// between it and the value ("leaves bequests to X"), is taken to be
	// many-valued: no key, no update (precision before recall). Numbers
	// and code values need no such verb.
	singleVerbs = func() map[string]bool {
		m := wordSet(`close open start begin end last take expire meet run depart leave arrive land report use
			cost pay charge weigh renew change match happen occur fall go move belong reside follow equal
			default point route redirect send target need prefer require live listen connect become
			remain stay forward resolve come select pick choose chose adopt standardise standardize
			embark disembark rehearse gather assemble`)
		for w := range m {
			m[thirdPerson(w)] = true
		}
		return m
	}()
	// placeParticiples after a copula place or make the subject, with one
	// value at a time: "is held in Room 112", "is made of stainless steel".
	placeParticiples = wordSet(`located based situated housed held stored kept parked made built filled upholstered
		powered fuelled fueled charged processed dispatched scheduled planned due set fixed paid
		submitted filed lodged`)
	// fractions follow "and a" in a number spelt out ("four and a half").
	fractions = wordSet("half quarter third")
	// sourceVerbs have one source ("ships from"), many destinations.
	sourceVerbs = wordSet("ship ships dispatch dispatches source sources")
	// dayParts recur when plural ("on Thursday afternoons").
	dayParts = wordSet("morning afternoon evening night weekend weekday")
	// spreadVerbs take one value of several through their own phrase
	// ("comes in navy", "pays for books", "comes from licensing").
	spreadVerbs = wordSet("come comes pay pays")
	// placeHeads end a noun phrase that names a place: "is on the second
	// floor", "is in the east wing".
	placeHeads = wordSet(`floor level room wing lobby hall building block basement yard bay berth gate dock hub office desk
		entrance reception centre center terminal platform garage annex annexe suite mezzanine corridor ward
		warehouse depot site campus store shop counter aisle stand booth kiosk quay pier wharf car park lot plant`)
	// statusWords are participles that state a setting, not an action:
	// "is enabled for all accounts" / "is disabled for all accounts".
	statusWords = wordSet(`enabled disabled activated deactivated locked unlocked blocked unblocked allowed
		permitted prohibited forbidden suspended paused archived published unpublished required waived
		closed opened hidden shown encrypted unencrypted mandated restricted unrestricted capped uncapped
		included excluded exempted outsourced frozen unfrozen`)
	// groups end a noun phrase naming a body one belongs to among others
	// ("sits on the defense committee", "plays for the rowing team").
	groups = wordSet("committee committees club clubs team teams board boards panel panels council councils society association group groups list network program programme")
	// singlePassives are participles that relate a subject to one place,
	// time or setting ("is located in", "is held on", "is sold to").
	singlePassives = wordSet(`located based held hosted housed headquartered situated owned managed run led headed
		chaired administered overseen supervised approved operated governed scheduled capped limited priced rated
		valued assigned handled chosen selected elected appointed set fixed pinned configured kept made
		manufactured built designed written authored insured audited powered fuelled fueled heated cooled
		reimbursed paid charged billed taxed calculated measured weighted staffed coached captained leased
		contracted sold assembled booked planned addressed arranged resolved stored parked registered filed
		printed processed issued produced supplied provided maintained conducted serviced underwritten
		curated decided changed renewed reviewed collected restocked done handed sent routed directed
		played consolidated docked moored staged filmed recorded escalated referred forwarded addressed
		delegated transferred protected exchanged
		named called known labelled labeled numbered coded dated timed due`)
	// manyPassives are participles whose agent or object is one of many:
	// "is stocked by", "is attended by", "is twinned with", "is drawn
	// from", "has been prescribed", "is signed by".
	manyPassives = wordSet(`stocked attended signed drawn twinned prescribed visited used supported endorsed
		recommended sponsored funded followed read watched shared accepted frequented joined served
		spoken offered listed featured included cited referenced translated distributed
		exported imported partnered linked paired matched connected affiliated associated involved`)
	// manyStanding are standings a subject holds with many bodies,
	// standards or places at once ("is certified under ISO 9001", "is
	// compatible with iOS", "is grown in Assam").
	manyStanding = wordSet("certified accredited compliant compatible affiliated grown farmed cultivated")
	// placePreps open the places a many-valued adjective ranges over
	// ("available in", "licensed across").
	placePreps = wordSet("in at on across throughout within from")
	// weekdays and timeUnits make a value a time ("on Thursdays", "every
	// 30 minutes").
	weekdays  = wordSet("monday tuesday wednesday thursday friday saturday sunday weekday weekend")
	timeUnits = wordSet(`s sec secs second seconds min mins minute minutes h hr hrs hour hours d day days wk wks week
		weeks month months yr yrs year years a.m p.m am pm utc gmt`)
	// irregularParticiples are past participles without -ed.
	irregularParticiples = wordSet(`held paid sold run led made built written drawn overseen given taken sent kept set
		done seen known shown brought bought taught found won met put read spent lent told said gone begun
		chosen driven eaten fallen flown forgotten frozen hidden ridden risen shaken spoken stolen sworn torn
		worn woven bound fed felt fought hung laid left lost meant paid sat slept sold sought split spread
		stood struck stuck swept swung understood upheld withdrawn withheld`)
	// memberVerbs make even a quoted value one member of many ("The
	// reading list includes \"Middlemarch\"").
	memberVerbs = wordSet("include includes contain contains list lists feature features offer offers stock stocks")
	// subordinators open a clause whose verb is not the main verb.
	subordinators = wordSet("after before when whenever until once while because since unless although though whereas")
	// definites pick out one thing ("the shift manager", "our CFO").
	definites = wordSet("the this our its their your my his her")
	// bounds qualify an amount ("up to 120", "at most 3", "over €50").
	bounds = wordSet("up to at most least over under above below more less than no fewer maximum minimum max min about around approximately roughly nearly almost some")
	// quantifiers may stand between a verb and its value ("changes every
	// Monday"); idiomObjects make one verb with "take" ("takes place in").
	quantifiers  = wordSet("every each other")
	idiomObjects = wordSet("place effect")
	// closures are states a place is in on many days at once ("closed on
	// Mondays", "open on holidays").
	closures = wordSet("closed open shut")
	// connectors may join the words of one value ("Office of Rural
	// Development", "Mondays and Thursdays", "Hartwell & Pryce").
	connectors = wordSet("of and de du des la le el von van der the & on for da das do dos di del della y")
	// rangeWords join two numbers into one value ("8 a.m. to 6 p.m.").
	rangeWords = wordSet("to through until and")
	// periods after "every" are the value of a schedule ("every month").
	periods = wordSet(`day days week weeks month months quarter quarters year years weekday weekdays weekend weekends
		morning mornings evening evenings night nights hour hours minute minutes shift shifts semester semesters
		term terms season seasons fortnight fortnights`)
	// streets end an address that follows a number ("12 Market Square").
	streets = wordSet("street st road rd avenue ave square sq lane ln boulevard blvd way drive dr place pl court ct plaza parkway pkwy row")
	// preferenceVerbs choose one of several options: a plain object that
	// changes after one ("prefers tabs" / "prefers spaces") may contradict.
	preferenceVerbs = wordSet("prefers prefer uses use requires require recommends recommend mandates mandate targets target follows follow favors favours")
	// modals may open a shared verb group ("should last", "must be"): a
	// base-form verb after one is the main verb.
	modals = wordSet("should must will shall can may might could would")
)
