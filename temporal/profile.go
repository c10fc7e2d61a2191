package temporal

import (
	"fmt"
	"sort"
)

// Profile is a content type's decay profile: how fast its relevance halves
// and how much time should weigh against meaning for it (Temporal RAG, "Not
// All Content Decays at the Same Rate"; advanced.py DECAY_PROFILES).
type Profile struct {
	Name string
	// HalfLife in days: the decay signal halves every HalfLife days.
	HalfLife float64
	// TemporalWeight is the article's w, the share of the score given to
	// the temporal component for this content type.
	TemporalWeight float64
}

// Lambda returns the profile's decay rate λ = ln 2 / HalfLife per day.
func (p Profile) Lambda() float64 { return Lambda(p.HalfLife) }

// The article's seven profiles.
var profiles = []Profile{
	{"breaking_news", 1, 0.70},
	{"news", 7, 0.55},
	{"policy", 90, 0.45},
	{"research", 180, 0.35},
	{"legal", 365, 0.25},
	{"reference", 1825, 0.10},
	{"mathematics", 36500, 0.01},
}

// DefaultProfile is the profile used for an unknown content type: the
// article's get_profile falls back to "reference".
const DefaultProfile = "reference"

// SmartVectorHalfLife is SmartVector's default half-life H in days (§4, §5).
const SmartVectorHalfLife = 30.0

// Profiles returns the article's decay profiles, fastest first:
// breaking_news 1 d / 0.70, news 7 d / 0.55, policy 90 d / 0.45,
// research 180 d / 0.35, legal 365 d / 0.25, reference 1825 d / 0.10,
// mathematics 36500 d / 0.01.
func Profiles() []Profile { return append([]Profile(nil), profiles...) }

// LookupProfile returns the named profile.
func LookupProfile(name string) (Profile, error) {
	for _, p := range profiles {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("temporal: unknown profile %q", name)
}

// ProfileFor returns the named profile, or the article's fallback
// ("reference") for a name it does not know.
func ProfileFor(name string) Profile {
	if p, err := LookupProfile(name); err == nil {
		return p
	}
	p, _ := LookupProfile(DefaultProfile)
	return p
}

// decayFloors is the article's DECAY_FLOORS, keyed by (profile, kind):
// "mathematics/STATIC floor at 0.95, reference/STATIC at 0.70,
// research/STATIC at 0.10. Documents without a floor entry decay freely."
var decayFloors = map[floorKey]float64{
	{"mathematics", Static}: 0.95,
	{"reference", Static}:   0.70,
	{"research", Static}:    0.10,
}

type floorKey struct {
	profile string
	kind    Kind
}

// DecayFloor returns the minimum decay for a (profile, kind) pair, 0 when the
// pair has no floor (Temporal RAG, DECAY_FLOORS).
func DecayFloor(profile string, k Kind) float64 { return decayFloors[floorKey{profile, k}] }

// FloorEntry is one row of the decay-floor table.
type FloorEntry struct {
	Profile string
	Kind    Kind
	Floor   float64
}

// DecayFloors returns the decay-floor table, sorted by profile then kind.
func DecayFloors() []FloorEntry {
	out := make([]FloorEntry, 0, len(decayFloors))
	for k, v := range decayFloors {
		out = append(out, FloorEntry{k.profile, k.kind, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Profile != out[j].Profile {
			return out[i].Profile < out[j].Profile
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}
