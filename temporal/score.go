package temporal

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Method names a scoring preset (DESIGN "Scoring": "Named methods are
// presets of these parameters").
type Method uint8

// Methods.
const (
	// MethodTidemark is the engine's own default: hard masks (expired and
	// superseded memories never appear), the event boost and gate, decay
	// floors, and SmartVector's four signals combined relevance first
	// ([CombineGated] with [TidemarkWeights]); a versioned memory's
	// confidence does not decay with age (HoldVersioned: supersession
	// retires it). A static memory's confidence signal in the score keeps
	// SmartVector's age decay, which acts as a recency prior among
	// unversioned documents (VDD's real-fact protocol without version
	// metadata ranks 0.404 with it and 0.386 without); the confidence the
	// engine reports and lifecycles by holds (ConfidenceParams.Reported).
	MethodTidemark Method = iota
	// MethodPlain is cosine only — naive RAG, SmartVector §9.2 M1.
	MethodPlain
	// MethodTemporal is 0.6·sim + 0.4·temporal (SmartVector §9.2 M2).
	MethodTemporal
	// MethodConfidence is 0.6·sim + 0.4·confidence (SmartVector §9.2 M3).
	MethodConfidence
	// MethodSmartVector is the four-signal score with the default weights
	// (0.35, 0.25, 0.25, 0.15) (SmartVector §4, §9.2 M4).
	MethodSmartVector
	// MethodArticle is the Temporal RAG article's reranker with its demo
	// configuration (w = 0.40, boost 1.2, event floor 0.20, relevance
	// threshold 0.15 on the pool-normalised score).
	MethodArticle
	// MethodVDD is VDD's Eq. 1, sim · exp(−λ(t)·Δt), with λ(t) from the
	// drift detector of the memory's group.
	MethodVDD
	numMethods
)

var methodNames = [...]string{"tidemark", "plain", "temporal", "confidence", "smartvector", "article", "vdd"}

// String returns the method's name.
func (m Method) String() string {
	if m < numMethods {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// MarshalText implements encoding.TextMarshaler.
func (m Method) MarshalText() ([]byte, error) {
	if m >= numMethods {
		return nil, fmt.Errorf("temporal: invalid method %d", uint8(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *Method) UnmarshalText(b []byte) error {
	v, err := ParseMethod(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// ParseMethod parses a method name (any case).
func ParseMethod(s string) (Method, error) {
	for i, n := range methodNames {
		if strings.EqualFold(s, n) {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("temporal: unknown method %q (want one of %s)", s, strings.Join(methodNames[:], ", "))
}

// Methods returns every method in a fixed order.
func Methods() []Method {
	out := make([]Method, numMethods)
	for i := range out {
		out[i] = Method(i)
	}
	return out
}

// Weights are the four signal weights of SmartVector §4.
type Weights struct {
	Sim, Time, Conf, Rel float64
}

// SmartVectorWeights are SmartVector §4's defaults (0.35, 0.25, 0.25, 0.15).
var SmartVectorWeights = Weights{Sim: 0.35, Time: 0.25, Conf: 0.25, Rel: 0.15}

// TidemarkWeights are tidemark's own weights (0.75, 0.05, 0.15, 0.05),
// used with [CombineGated]: once the masks have removed what is no longer
// true, similarity decides, and confidence, freshness and links can lift a
// score by at most a third (1/0.75) — enough to put a trusted source ahead
// of a slightly more similar chat message, or a successor ahead of a
// near-identical restatement, not enough to let a fresh but unrelated
// memory win. Trust weighs three times freshness because the masks
// already deal with staleness; SmartVector's own tuning (§10.3) and
// ablation (§10.2) also moved weight from time to similarity.
var TidemarkWeights = Weights{Sim: 0.75, Time: 0.05, Conf: 0.15, Rel: 0.05}

// Sum returns the total weight.
func (w Weights) Sum() float64 { return w.Sim + w.Time + w.Conf + w.Rel }

// Combine is how the signals become one score.
type Combine uint8

const (
	// CombineSum is the weighted sum of the four signals (SmartVector §4,
	// the article's hybrid reranker).
	CombineSum Combine = iota
	// CombineProduct is sim × temporal (VDD Eq. 1); weights are ignored.
	CombineProduct
	// CombineGated is relevance first: the similarity scaled by the other
	// signals, s × (w_sim + w_time·temporal + w_conf·confidence +
	// w_rel·relational). A memory with no similarity scores 0 however
	// fresh, trusted or linked it is, and the other signals reorder
	// memories of comparable similarity: a pair whose similarities differ
	// by a factor r is reordered only when the other signals differ by
	// more than r. tidemark's own preset uses it (the weighted sum lets an
	// unrelated but fresh memory outrank a relevant old one: on the
	// versioned-policy benchmark the sum reaches 9% top-1 without a first
	// stage).
	CombineGated
)

// Params configure the fused scoring stage. Build them with [Preset] and
// adjust fields; every field documents the value the presets use. Thresholds
// that are ≤ 0 are off, as in the article ("Set to 0.0 to disable").
type Params struct {
	Method  Method
	Weights Weights
	Combine Combine

	// MaskExpired removes candidates outside their validity window at the
	// reference valid time (reasons NOT_YET_VALID and EXPIRED_*). When
	// false, their temporal signal is OutOfWindow instead.
	MaskExpired bool
	// MaskRetired removes candidates not visible at the query's transaction
	// time (reasons NOT_YET_RECORDED and SUPERSEDED).
	MaskRetired bool
	// OutOfWindow is the temporal signal of an unmasked candidate outside
	// its window: SmartVector §4's floor 0.05.
	OutOfWindow float64
	// IgnoreValidity gives an unmasked candidate outside its window the
	// temporal signal of one inside it (its decay), for methods with no
	// notion of validity: VDD's Eq. 1 decays every memory by its age, so a
	// superseded version must not keep a floor its successor decays below.
	IgnoreValidity bool

	// NormalizeSim uses the pool min–max normalised cosine as the sim signal
	// (the article's vector_score) instead of the raw cosine.
	NormalizeSim bool
	// PoolRecency multiplies the temporal signal by the article's
	// pool-relative recency_score.
	PoolRecency bool
	// AdaptiveDecay uses each candidate's drift λ (VDD) instead of
	// ln 2 / HalfLife.
	AdaptiveDecay bool

	// EventBoost is the validity multiplier of a Temporal (open event)
	// candidate: the article's validity_boost, 1.2.
	EventBoost float64
	// EventFloor is the article's event_min_raw_vector_score (0.20 for
	// sparse embeddings, 0.35–0.50 for dense ones): an open event whose raw
	// cosine is below it has its temporal signal multiplied by
	// EventGateFactor (0.5, "temporal boost halved").
	EventFloor      float64
	EventGateFactor float64

	// RelevanceThreshold is the article's min_vector_score on the pool
	// normalised cosine (0.15); a candidate below it has its score
	// multiplied by RelevancePenalty (0.3).
	RelevanceThreshold float64
	RelevancePenalty   float64

	// MinSim is a hard relevance gate on the raw cosine: candidates below
	// it are removed (BELOW_RELEVANCE_GATE). Off in every preset.
	MinSim float64
	// StaleBelow removes candidates whose decay is below it (STALE_*).
	// Off in every preset.
	StaleBelow float64

	// Confidence holds the ConfidenceEngine constants.
	Confidence ConfidenceParams
}

// Preset returns the parameters of a named method.
func Preset(m Method) Params {
	p := Params{
		Method:          m,
		Combine:         CombineSum,
		OutOfWindow:     0.05,
		EventBoost:      1,
		EventGateFactor: 1,
		Confidence:      DefaultConfidence(),
	}
	switch m {
	case MethodPlain:
		p.Weights = Weights{Sim: 1}
	case MethodTemporal:
		p.Weights = Weights{Sim: 0.6, Time: 0.4}
	case MethodConfidence:
		p.Weights = Weights{Sim: 0.6, Conf: 0.4}
	case MethodSmartVector:
		p.Weights = SmartVectorWeights
	case MethodArticle:
		p.Weights = Weights{Sim: 0.6, Time: 0.4}
		p.MaskExpired, p.MaskRetired = true, true
		p.NormalizeSim, p.PoolRecency = true, true
		p.EventBoost, p.EventFloor, p.EventGateFactor = 1.2, 0.20, 0.5
		p.RelevanceThreshold, p.RelevancePenalty = 0.15, 0.3
	case MethodVDD:
		p.Weights = Weights{Sim: 1, Time: 1}
		p.Combine = CombineProduct
		p.AdaptiveDecay = true
		p.IgnoreValidity = true
	default: // MethodTidemark
		p.Method = MethodTidemark
		p.Weights = TidemarkWeights
		p.Combine = CombineGated
		p.MaskExpired, p.MaskRetired = true, true
		p.EventBoost, p.EventFloor, p.EventGateFactor = 1.2, 0.20, 0.5
		p.Confidence.HoldVersioned = true
	}
	return p
}

// WithTemporalWeight returns p with the temporal weight set to w and the
// other weights rescaled to share 1 − w in their old proportions: the
// article's query-dependent weight ([TemporalIntent]) applied to any preset.
// For the article's (1 − w, w) this is exactly its formula.
func (p Params) WithTemporalWeight(w float64) Params {
	rest := p.Weights.Sim + p.Weights.Conf + p.Weights.Rel
	if rest > 0 {
		s := (1 - w) / rest
		p.Weights.Sim *= s
		p.Weights.Conf *= s
		p.Weights.Rel *= s
	}
	p.Weights.Time = w
	return p
}

// MaxWeight bounds each of the four weights: far above any meaningful
// ratio between signals, far below where a weighted sum of scores in
// [−1, 2] could overflow float64 (weights of 1e308 made every score
// infinite).
const MaxWeight = 1e6

// Validate reports the first parameter that is not finite or out of range.
func (p Params) Validate() error {
	fields := []struct {
		name string
		v    float64
	}{
		{"Weights.Sim", p.Weights.Sim}, {"Weights.Time", p.Weights.Time},
		{"Weights.Conf", p.Weights.Conf}, {"Weights.Rel", p.Weights.Rel},
		{"OutOfWindow", p.OutOfWindow}, {"EventBoost", p.EventBoost},
		{"EventFloor", p.EventFloor}, {"EventGateFactor", p.EventGateFactor},
		{"RelevanceThreshold", p.RelevanceThreshold}, {"RelevancePenalty", p.RelevancePenalty},
		{"MinSim", p.MinSim}, {"StaleBelow", p.StaleBelow},
		{"Confidence.HalfLife", p.Confidence.HalfLife}, {"Confidence.AlphaPos", p.Confidence.AlphaPos},
		{"Confidence.AlphaNeg", p.Confidence.AlphaNeg}, {"Confidence.Beta", p.Confidence.Beta},
		{"Confidence.Min", p.Confidence.Min}, {"Confidence.Max", p.Confidence.Max},
	}
	for _, f := range fields {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: Params.%s is %v", ErrInvalid, f.name, f.v)
		}
	}
	if p.Weights.Sim < 0 || p.Weights.Time < 0 || p.Weights.Conf < 0 || p.Weights.Rel < 0 {
		return fmt.Errorf("%w: Params.Weights has a negative weight %+v", ErrInvalid, p.Weights)
	}
	if w := p.Weights; max(w.Sim, w.Time, w.Conf, w.Rel) > MaxWeight {
		return fmt.Errorf("%w: Params.Weights has a weight above %g %+v (weights are relative: scale them down)", ErrInvalid, float64(MaxWeight), p.Weights)
	}
	// A confidence below zero would void CombineGated's score bound for
	// negative similarities (and means nothing in SmartVector §5).
	if c := p.Confidence; c.Min < 0 || c.Max < c.Min || c.Beta < 0 || c.AlphaPos < 0 || c.AlphaNeg < 0 {
		return fmt.Errorf("%w: Params.Confidence needs 0 ≤ Min ≤ Max and non-negative Beta, AlphaPos, AlphaNeg, got %+v", ErrInvalid, c)
	}
	// A boost below zero, or a gate or penalty outside [0, 1], turns a
	// reward into a punishment (and would void the fast paths' score
	// bounds); the sources use 1.2, 0.5 and 0.3.
	switch {
	case p.EventBoost < 0:
		return fmt.Errorf("%w: Params.EventBoost = %v, want ≥ 0", ErrInvalid, p.EventBoost)
	case p.EventGateFactor < 0 || p.EventGateFactor > 1:
		return fmt.Errorf("%w: Params.EventGateFactor = %v, want within [0, 1]", ErrInvalid, p.EventGateFactor)
	case p.RelevancePenalty < 0 || p.RelevancePenalty > 1:
		return fmt.Errorf("%w: Params.RelevancePenalty = %v, want within [0, 1]", ErrInvalid, p.RelevancePenalty)
	case p.OutOfWindow < 0:
		return fmt.Errorf("%w: Params.OutOfWindow = %v, want ≥ 0", ErrInvalid, p.OutOfWindow)
	}
	if p.Combine > CombineGated {
		return fmt.Errorf("%w: Params.Combine is %d", ErrInvalid, p.Combine)
	}
	return nil
}

// Query is the per-query context of the fused stage: its reference times,
// time range and filters.
type Query struct {
	// At is the reference valid time in days: validity windows are tested
	// at At, and ages are At − CreatedAt. For "what was true at T" set it
	// to T; otherwise it is now.
	At float64
	// TxAt is the reference transaction time: only memories recorded at or
	// before it and not retired by it are visible. Usually now; set it to a
	// past time to ask "what did tidemark believe then".
	TxAt float64
	// Range, when HasRange, keeps only memories created inside it (the
	// article's time-range filter; see [ParseTimeRange]).
	Range    Window
	HasRange bool
	// Kinds and Statuses filter candidates; the zero sets allow all.
	Kinds    KindSet
	Statuses StatusSet
}

// At returns a query at one reference time for both axes.
func At(now float64) Query { return Query{At: now, TxAt: now} }

// Candidate is one memory as the fused stage sees it. Times are days since
// the caller's epoch; open bounds are ±Open.
type Candidate struct {
	ID uint64
	// Sim is the raw cosine similarity to the query.
	Sim    float64
	Kind   Kind
	Status Status
	// CreatedAt is when the memory was authored (the article's created_at):
	// ages are measured from it.
	CreatedAt float64
	// Valid is the valid-time window [ValidFrom, ValidTo).
	Valid Window
	// Recorded is the transaction-time window [RecordedAt, RetiredAt).
	Recorded Window
	// HalfLife in days and Floor of the decay signal (from the memory's
	// Profile and [DecayFloor]); Lambda is its group's drift λ(t) per day,
	// used when Params.AdaptiveDecay.
	HalfLife, Floor, Lambda float64
	// BaseConfidence is C0 (the source's authority prior, adjusted by
	// ripples). ConfidenceFrom is when the confidence clock starts: the last
	// validation, or CreatedAt.
	BaseConfidence, ConfidenceFrom float64
	// Access, Positive and Negative are the feedback counters.
	Access, Positive, Negative float64
	// Degree is the number of typed links (the relational signal).
	Degree float64
}

// Validate reports the first field that is NaN, an infinite time that must
// be finite, or a negative counter.
func (c *Candidate) Validate() error {
	finite := []struct {
		name string
		v    float64
	}{
		{"Sim", c.Sim}, {"CreatedAt", c.CreatedAt}, {"Floor", c.Floor}, {"Lambda", c.Lambda},
		{"BaseConfidence", c.BaseConfidence}, {"ConfidenceFrom", c.ConfidenceFrom},
		{"Access", c.Access}, {"Positive", c.Positive}, {"Negative", c.Negative}, {"Degree", c.Degree},
	}
	for _, f := range finite {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: candidate %d: %s is %v", ErrInvalid, c.ID, f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Valid.From", c.Valid.From}, {"Valid.To", c.Valid.To}, {"Recorded.From", c.Recorded.From}, {"Recorded.To", c.Recorded.To}, {"HalfLife", c.HalfLife}} {
		if math.IsNaN(f.v) {
			return fmt.Errorf("%w: candidate %d: %s is NaN", ErrInvalid, c.ID, f.name)
		}
	}
	if c.Access < 0 || c.Positive < 0 || c.Negative < 0 || c.Degree < 0 || c.Lambda < 0 || c.HalfLife < 0 {
		return fmt.Errorf("%w: candidate %d: negative counter, degree, λ or half-life", ErrInvalid, c.ID)
	}
	if c.Floor < 0 || c.Floor > 1 {
		return fmt.Errorf("%w: candidate %d: decay floor %v outside [0, 1]", ErrInvalid, c.ID, c.Floor)
	}
	if c.Kind >= numKinds || c.Status >= numStatuses {
		return fmt.Errorf("%w: candidate %d: kind %d or status %d out of range", ErrInvalid, c.ID, c.Kind, c.Status)
	}
	return nil
}

// Signals are a kept candidate's per-signal scores, the explanation of its
// final score.
type Signals struct {
	// Sim is the raw cosine; SimNorm its pool min–max normalisation.
	Sim, SimNorm float64
	// Age in days at the reference time.
	Age float64
	// Decay = max(floor, exp(−λ·age)); Recency is the pool recency (1 when
	// Params.PoolRecency is off).
	Decay, Recency float64
	State          ValidityState
	// EventGated is true when an open event's boost was cut by the event
	// floor.
	EventGated bool
	// Temporal, Confidence and Relational are the signals entering the
	// weighted sum.
	Temporal, Confidence, Relational float64
	// Penalty is the semantic penalty multiplier (1 or RelevancePenalty).
	Penalty float64
}

// Scored is a kept candidate with its score.
type Scored struct {
	ID uint64
	// Score is the method's score, the ranking order; under pooled
	// parameters ([Params.Pooled], the article's reranker) it is relative
	// to the pool.
	Score float64
	// PoolFree is [PoolFreeScore]: Score without its pool-relative inputs,
	// comparable across pools; equal to Score when the parameters are not
	// pooled.
	PoolFree float64
	Signals  Signals
}

// Removed is a masked candidate with the reason it was removed.
type Removed struct {
	ID     uint64
	Reason Reason
}

// Result is the outcome of scoring one pool.
type Result struct {
	// Ranked holds the kept candidates by descending score, ties broken by
	// ascending ID.
	Ranked []Scored
	// Removed holds the masked candidates in input order.
	Removed []Removed
}

// Mask returns why a candidate is removed before scoring, or ReasonNone.
// The tests run in this order, and the first that fails names the reason:
// transaction time, kind filter, status filter, valid time, time range,
// relevance gate. The stale test needs the decay and is applied by
// [ScorePool] after it.
func Mask(q Query, p *Params, c *Candidate) Reason {
	if p.MaskRetired {
		if q.TxAt < c.Recorded.From {
			return ReasonNotYetRecorded
		}
		if q.TxAt >= c.Recorded.To {
			return ReasonSuperseded
		}
	}
	if !q.Kinds.Has(c.Kind) {
		return ReasonFilteredKind
	}
	if !q.Statuses.Has(c.Status) {
		return ReasonFilteredStatus
	}
	if p.MaskExpired && Validity(c.Kind, c.Valid, q.At) == Expired {
		if q.At < c.Valid.From {
			return ReasonNotYetValid
		}
		return ExpiredReason(c.Kind)
	}
	if q.HasRange && !q.Range.Contains(c.CreatedAt) {
		return ReasonOutOfTimeRange
	}
	if p.MinSim > 0 && c.Sim < p.MinSim {
		return ReasonBelowRelevanceGate
	}
	return ReasonNone
}

// candidateDecay returns the decay signal of c at age.
func candidateDecay(p *Params, c *Candidate, age float64) float64 {
	lambda := Lambda(c.HalfLife)
	if p.AdaptiveDecay {
		lambda = c.Lambda
	}
	return Decay(lambda, age, c.Floor)
}

// ScorePool is the reference of the fused scoring stage (DESIGN "Scoring")
// over one candidate pool:
//
//  1. masks ([Mask]; then decay < StaleBelow → STALE_*);
//  2. sim = raw cosine; sim_norm = min–max of sim over the kept pool;
//  3. decay = max(floor, exp(−λ·age)), λ = ln 2/half-life or the drift λ;
//  4. temporal = decay × recency × validity multiplier × event gate, where
//     recency is the article's pool recency (when PoolRecency), the
//     multiplier is 1 (VALID) or EventBoost (TEMPORAL), and the gate is
//     EventGateFactor for an open event with raw sim < EventFloor; an
//     unmasked candidate outside its window has temporal = OutOfWindow
//     (decay × recency under IgnoreValidity);
//  5. confidence = the ConfidenceEngine at age At − ConfidenceFrom (0 for
//     a versioned memory under Confidence.HoldVersioned, and for a static
//     one under Confidence.HoldStatic);
//  6. relational = min(0.3, 0.1·ln(1+degree));
//  7. score = penalty × (w_sim·s + w_time·temporal + w_conf·confidence +
//     w_rel·relational), s = sim_norm when NormalizeSim else sim; penalty =
//     RelevancePenalty when sim_norm < RelevanceThreshold, else 1; with
//     CombineProduct, score = penalty × s × temporal (VDD Eq. 1); with
//     CombineGated, score = penalty × s × (w_sim + w_time·temporal +
//     w_conf·confidence + w_rel·relational);
//  8. order by score descending, ties by ascending ID.
//
// Each kept candidate also carries its [PoolFreeScore], the score without
// the pool-relative inputs of steps 2, 4 and 7.
//
// With the article preset this is the article's reranker exactly:
// penalty × [(1−w)·vector_score + w·(decay·recency·validity·event_gate)].
func ScorePool(q Query, p Params, cands []Candidate) (Result, error) {
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	for i := range cands {
		if err := cands[i].Validate(); err != nil {
			return Result{}, err
		}
	}
	var res Result
	kept := make([]int, 0, len(cands))
	ages := make([]float64, len(cands))
	decays := make([]float64, len(cands))
	for i := range cands {
		c := &cands[i]
		r := Mask(q, &p, c)
		if r == ReasonNone {
			ages[i] = math.Max(0, q.At-c.CreatedAt)
			decays[i] = candidateDecay(&p, c, ages[i])
			if p.StaleBelow > 0 && decays[i] < p.StaleBelow {
				r = ReasonStale
				if c.Kind == Static {
					r = ReasonStaleStatic
				}
			}
		}
		if r != ReasonNone {
			res.Removed = append(res.Removed, Removed{ID: c.ID, Reason: r})
			continue
		}
		kept = append(kept, i)
	}
	if len(kept) == 0 {
		return res, nil
	}
	minSim, maxSim := math.Inf(1), math.Inf(-1)
	minAge, maxAge := math.Inf(1), math.Inf(-1)
	for _, i := range kept {
		minSim, maxSim = math.Min(minSim, cands[i].Sim), math.Max(maxSim, cands[i].Sim)
		minAge, maxAge = math.Min(minAge, ages[i]), math.Max(maxAge, ages[i])
	}
	res.Ranked = make([]Scored, 0, len(kept))
	for _, i := range kept {
		c := &cands[i]
		s := Signals{Sim: c.Sim, Age: ages[i], Decay: decays[i], Recency: 1, Penalty: 1}
		s.SimNorm = MinMax(c.Sim, minSim, maxSim)
		if p.PoolRecency {
			s.Recency = Recency(ages[i], minAge, maxAge)
		}
		s.State = Validity(c.Kind, c.Valid, q.At)
		s.EventGated = s.State == Temporal && p.EventFloor > 0 && c.Sim < p.EventFloor
		s.Temporal = temporalSignal(&p, s.State, s.Decay, s.Recency, s.EventGated)
		s.Confidence = LiveConfidence(p.Confidence, c, q.At)
		s.Relational = RelationalBonus(c.Degree)
		if p.RelevanceThreshold > 0 && s.SimNorm < p.RelevanceThreshold {
			s.Penalty = p.RelevancePenalty
		}
		sim := c.Sim
		if p.NormalizeSim {
			sim = s.SimNorm
		}
		score := combine(&p, s.Penalty, sim, s.Temporal, s.Confidence, s.Relational)
		res.Ranked = append(res.Ranked, Scored{ID: c.ID, Score: score, PoolFree: PoolFreeScore(&p, &s), Signals: s})
	}
	sort.SliceStable(res.Ranked, func(a, b int) bool { return Less(res.Ranked[a], res.Ranked[b]) })
	return res, nil
}

// temporalSignal is step 4 of [ScorePool]: the temporal signal of a kept
// candidate in validity state st with decay, pool recency and event gate.
func temporalSignal(p *Params, st ValidityState, decay, recency float64, gated bool) float64 {
	switch st {
	case Expired:
		if p.IgnoreValidity {
			return decay * recency
		}
		return p.OutOfWindow
	case Temporal:
		gate := 1.0
		if gated {
			gate = p.EventGateFactor
		}
		return decay * recency * p.EventBoost * gate
	}
	return decay * recency
}

// combine is step 7 of [ScorePool]: the signals into one score.
func combine(p *Params, penalty, sim, temporal, conf, rel float64) float64 {
	w := p.Weights
	switch p.Combine {
	case CombineProduct:
		return penalty * sim * temporal
	case CombineGated:
		return penalty * sim * (w.Sim + w.Time*temporal + w.Conf*conf + w.Rel*rel)
	}
	return penalty * (w.Sim*sim + w.Time*temporal + w.Conf*conf + w.Rel*rel)
}

// Pooled reports whether a score depends on the other candidates of its
// pool: through the min–max normalised similarity (NormalizeSim), the pool
// recency (PoolRecency) or the semantic penalty, which tests the normalised
// similarity (RelevanceThreshold > 0). Of the presets only MethodArticle
// pools, as the article's reranker does.
func (p Params) Pooled() bool {
	return p.NormalizeSim || p.PoolRecency || p.RelevanceThreshold > 0
}

// PoolFreeScore is a kept candidate's score with its pool-relative inputs
// replaced by what they are for the candidate alone: the raw cosine s.Sim
// in place of sim_norm, a pool recency of 1 (the temporal signal is
// decay × validity multiplier × event gate) and no semantic penalty.
// Every remaining input — the cosine, the age, the validity state, the
// confidence, the degree — belongs to the memory and the query's times, so
// the same memory at the same cosine gets the same pool-free score in any
// result set, and scores of different queries compare. The min–max value
// of one result set does not: its best hit scores as if its cosine were 1,
// however weak it is.
//
// It is the score tidemark shows (the engine's Hit.Score). A pooled method
// still ranks by its own score ([Scored].Score, the article's published
// formula), so under [Params.Pooled] the shown scores of a ranking need
// not be in descending order. For parameters that are not pooled it is
// exactly the ranking score.
func PoolFreeScore(p *Params, s *Signals) float64 {
	t := s.Temporal
	if p.PoolRecency {
		t = temporalSignal(p, s.State, s.Decay, 1, s.EventGated)
	}
	return combine(p, 1, s.Sim, t, s.Confidence, s.Relational)
}

// Less is the ranking order: higher score first, then lower ID.
func Less(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

// TopK returns the first k of r.Ranked (all of them when k ≤ 0 or k exceeds
// the count).
func (r Result) TopK(k int) []Scored {
	if k <= 0 || k > len(r.Ranked) {
		return r.Ranked
	}
	return r.Ranked[:k]
}
