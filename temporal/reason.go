package temporal

import "fmt"

// Reason is a machine-readable code for why a candidate was removed before
// ranking. The article's codes (Temporal RAG, "Knowing why something was
// rejected": EXPIRED_VERSIONED_DOC, STALE_STATIC_DOC, HARD_EXPIRED_EVENT,
// BELOW_RELEVANCE_GATE, OUT_OF_TIME_RANGE, PAIR_PARTNER_NOT_FOUND) are kept
// verbatim; tidemark adds the bi-temporal and filter codes.
type Reason uint8

// Reason codes. ReasonNone marks a candidate that was kept.
const (
	ReasonNone Reason = iota
	// ReasonNotYetRecorded: recorded after the query's transaction time.
	ReasonNotYetRecorded
	// ReasonSuperseded: retired in transaction time (superseded, merged or
	// withdrawn) at or before the query's transaction time.
	ReasonSuperseded
	// ReasonFilteredKind: the query's kind filter excludes it.
	ReasonFilteredKind
	// ReasonFilteredStatus: the query's status filter excludes it.
	ReasonFilteredStatus
	// ReasonNotYetValid: its valid time starts after the reference time.
	ReasonNotYetValid
	// ReasonExpiredStatic: a static memory whose validity window closed.
	ReasonExpiredStatic
	// ReasonExpiredVersioned: a versioned memory whose window closed.
	ReasonExpiredVersioned
	// ReasonExpiredEvent: an event whose window closed.
	ReasonExpiredEvent
	// ReasonOutOfTimeRange: created outside the query's time range.
	ReasonOutOfTimeRange
	// ReasonBelowRelevanceGate: raw cosine below the relevance gate.
	ReasonBelowRelevanceGate
	// ReasonStaleStatic: a static memory whose decay fell below the stale
	// threshold.
	ReasonStaleStatic
	// ReasonStale: any other memory whose decay fell below the threshold.
	ReasonStale
	// ReasonPairPartnerNotFound: a weak memory that needed a fresher partner
	// and had none.
	ReasonPairPartnerNotFound
	numReasons
)

var reasonNames = [...]string{
	"NONE",
	"NOT_YET_RECORDED",
	"SUPERSEDED",
	"FILTERED_KIND",
	"FILTERED_STATUS",
	"NOT_YET_VALID",
	"EXPIRED_STATIC_DOC",
	"EXPIRED_VERSIONED_DOC",
	"HARD_EXPIRED_EVENT",
	"OUT_OF_TIME_RANGE",
	"BELOW_RELEVANCE_GATE",
	"STALE_STATIC_DOC",
	"STALE_DOC",
	"PAIR_PARTNER_NOT_FOUND",
}

// NumReasons is the number of reason codes, for per-code counters.
const NumReasons = int(numReasons)

// String returns the code's upper-case name.
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// MarshalText implements encoding.TextMarshaler.
func (r Reason) MarshalText() ([]byte, error) {
	if r >= numReasons {
		return nil, fmt.Errorf("temporal: invalid reason %d", uint8(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Reason) UnmarshalText(b []byte) error {
	for i, n := range reasonNames {
		if string(b) == n {
			*r = Reason(i)
			return nil
		}
	}
	return fmt.Errorf("temporal: unknown reason %q", b)
}

// ExpiredReason returns the EXPIRED_* code for a memory of kind k.
func ExpiredReason(k Kind) Reason {
	switch k {
	case Event:
		return ReasonExpiredEvent
	case Versioned:
		return ReasonExpiredVersioned
	}
	return ReasonExpiredStatic
}
