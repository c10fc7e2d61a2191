package temporal

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Kind is a memory's document kind: the second axis of the Temporal RAG
// article ("AXIS 2 — Document kind").
type Kind uint8

// Document kinds.
const (
	// Static is a timeless fact (a definition, a theorem, a published finding).
	Static Kind = iota
	// Versioned is replaced by newer versions (policies, tutorials, specs).
	Versioned
	// Event is true only inside a time window (announcements, outages); it
	// is the only kind that reaches the [Temporal] validity state.
	Event
	numKinds
)

var kindNames = [...]string{"static", "versioned", "event"}

// String returns the kind's lower-case name.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MarshalText implements encoding.TextMarshaler.
func (k Kind) MarshalText() ([]byte, error) {
	if k >= numKinds {
		return nil, fmt.Errorf("temporal: invalid kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; it accepts any case.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// ParseKind parses a kind name ("static", "versioned", "event"; any case).
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if strings.EqualFold(s, n) {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("temporal: unknown kind %q (want static, versioned or event)", s)
}

// KindSet is a set of kinds; the zero value means "every kind".
type KindSet uint8

// KindsOf returns the set holding ks.
func KindsOf(ks ...Kind) KindSet {
	var s KindSet
	for _, k := range ks {
		s |= 1 << k
	}
	return s
}

// Has reports whether k is in the set (always true for the zero set).
func (s KindSet) Has(k Kind) bool { return s == 0 || s&(1<<k) != 0 }

// Status is a memory's lifecycle stage (SmartVector §3.3, "The Five-Stage
// Lifecycle"): unconsolidated → active ↔ dormant; deprecated → archived.
type Status uint8

// Lifecycle statuses.
const (
	// Unconsolidated is a fresh write: queryable, not yet cross-referenced.
	Unconsolidated Status = iota
	// Active has been consolidated.
	Active
	// Dormant has live confidence below the dormant threshold (0.15).
	Dormant
	// Deprecated has been replaced and awaits archival.
	Deprecated
	// Archived is off the visible surface; kept as evidence, never deleted.
	Archived
	numStatuses
)

var statusNames = [...]string{"unconsolidated", "active", "dormant", "deprecated", "archived"}

// String returns the status's lower-case name.
func (s Status) String() string {
	if s < numStatuses {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// MarshalText implements encoding.TextMarshaler.
func (s Status) MarshalText() ([]byte, error) {
	if s >= numStatuses {
		return nil, fmt.Errorf("temporal: invalid status %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; it accepts any case.
func (s *Status) UnmarshalText(b []byte) error {
	v, err := ParseStatus(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseStatus parses a status name (any case).
func ParseStatus(s string) (Status, error) {
	for i, n := range statusNames {
		if strings.EqualFold(s, n) {
			return Status(i), nil
		}
	}
	return 0, fmt.Errorf("temporal: unknown status %q", s)
}

// StatusSet is a set of statuses; the zero value means "every status".
type StatusSet uint8

// StatusesOf returns the set holding ss.
func StatusesOf(ss ...Status) StatusSet {
	var s StatusSet
	for _, x := range ss {
		s |= 1 << x
	}
	return s
}

// Has reports whether st is in the set (always true for the zero set).
func (s StatusSet) Has(st Status) bool { return s == 0 || s&(1<<st) != 0 }

// Source is where a memory came from; its authority sets the memory's base
// confidence prior (SmartVector §3.2, Table 1).
type Source uint8

// Sources, from most to least authoritative.
const (
	SourceUnknown    Source = iota // uncategorised: 0.20
	SourceOfficialDB               // CRM, ERP, product DB: 0.95
	SourcePolicy                   // HR, compliance: 0.90
	SourceTechDoc                  // API reference, RFC: 0.85
	SourceWiki                     // Confluence page: 0.75
	SourceEmail                    // archived thread: 0.50
	SourceMeeting                  // transcript: 0.45
	SourceChat                     // Slack message: 0.30
	numSources
)

var sourceNames = [...]string{"unknown", "official_db", "policy", "tech_doc", "wiki", "email", "meeting", "chat"}

// sourcePriors is SmartVector Table 1, "Default source-authority priors used
// to initialize base_confidence".
var sourcePriors = [...]float64{0.20, 0.95, 0.90, 0.85, 0.75, 0.50, 0.45, 0.30}

// Authority returns the source's base-confidence prior (SmartVector Table 1):
// official_db 0.95, policy 0.90, tech_doc 0.85, wiki 0.75, email 0.50,
// meeting 0.45, chat 0.30, unknown 0.20.
func (s Source) Authority() float64 {
	if s < numSources {
		return sourcePriors[s]
	}
	return sourcePriors[SourceUnknown]
}

// String returns the source's snake_case name.
func (s Source) String() string {
	if s < numSources {
		return sourceNames[s]
	}
	return fmt.Sprintf("Source(%d)", uint8(s))
}

// MarshalText implements encoding.TextMarshaler.
func (s Source) MarshalText() ([]byte, error) {
	if s >= numSources {
		return nil, fmt.Errorf("temporal: invalid source %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Source) UnmarshalText(b []byte) error {
	v, err := ParseSource(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSource parses a source name. It accepts the snake_case names, any
// case, with '-' or ' ' for '_' ("official-DB" is official_db), and "slack"
// as chat.
func ParseSource(s string) (Source, error) {
	n := strings.ToLower(strings.NewReplacer("-", "_", " ", "_").Replace(strings.TrimSpace(s)))
	if n == "slack" {
		return SourceChat, nil
	}
	for i, name := range sourceNames {
		if n == name {
			return Source(i), nil
		}
	}
	return 0, fmt.Errorf("temporal: unknown source %q", s)
}

// ValidityState is the first axis of the Temporal RAG article ("AXIS 1 —
// Validity state"): whether a memory is true at a reference time.
type ValidityState uint8

// Validity states.
const (
	// Valid is true with no active time constraint: scored normally.
	Valid ValidityState = iota
	// Temporal is an Event inside its window: boosted.
	Temporal
	// Expired is outside its window (before it or after it): removed before
	// ranking.
	Expired
)

var stateNames = [...]string{"VALID", "TEMPORAL", "EXPIRED"}

// String returns the article's upper-case name.
func (v ValidityState) String() string {
	if int(v) < len(stateNames) {
		return stateNames[v]
	}
	return fmt.Sprintf("ValidityState(%d)", uint8(v))
}

// MarshalText implements encoding.TextMarshaler.
func (v ValidityState) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (v *ValidityState) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n == string(b) {
			*v = ValidityState(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown validity state %q", ErrInvalid, b)
}

// Open is an open time bound: -Open for "since forever", +Open for "until
// further notice".
var Open = math.Inf(1)

// Day is the unit of every time inside the scoring math.
const Day = 24 * time.Hour

// Days converts t to days since epoch. The zero time.Time is an open bound
// and converts to open (pass -Open for a lower bound, +Open for an upper).
func Days(epoch, t time.Time, open float64) float64 {
	if t.IsZero() {
		return open
	}
	return float64(t.Sub(epoch)) / float64(Day)
}

// Window is a half-open interval of days [From, To); ±Open bounds are open.
type Window struct {
	From, To float64
}

// Always is the window that contains every time.
var Always = Window{From: -Open, To: Open}

// Contains reports whether From ≤ t < To.
func (w Window) Contains(t float64) bool { return w.From <= t && t < w.To }

// Bounded reports whether the window is anything but (−∞, +∞). An empty
// window such as [+∞, +∞) is bounded: it contains no time at all.
func (w Window) Bounded() bool { return !(math.IsInf(w.From, -1) && math.IsInf(w.To, 1)) }

// Validity classifies a memory at reference time t (Temporal RAG,
// Document.validity_state): with no bounded window it is Valid; outside its
// window [From, To) it is Expired; inside it an Event is Temporal and every
// other kind is Valid. The article's window is closed at the end
// (query_time > valid_until); tidemark's is half-open so that a successor
// valid from T and a predecessor valid to T never overlap.
func Validity(k Kind, w Window, t float64) ValidityState {
	if !w.Bounded() {
		return Valid
	}
	if !w.Contains(t) {
		return Expired
	}
	if k == Event {
		return Temporal
	}
	return Valid
}

// Recorded reports bi-temporal transaction-time visibility: a memory recorded
// at rec and retired at ret (+Open while believed) is visible to a query as
// of transaction time tx when rec ≤ tx < ret (DESIGN "Scoring" step 1;
// MemStrata §4.2's bi-temporal ledger).
func Recorded(rec, ret, tx float64) bool { return rec <= tx && tx < ret }
