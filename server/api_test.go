package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
)

// The wire's enumerations name exactly the engine's values, and a bad key
// policy is refused with the engine's words.
func TestWireEnumsMatchEngine(t *testing.T) {
	var outcomes []api.Outcome
	for o := tidemark.Outcome(0); !strings.HasPrefix(o.String(), "Outcome("); o++ {
		outcomes = append(outcomes, api.Outcome(o.String()))
	}
	if want := []api.Outcome{api.OutcomeStored, api.OutcomeReinforced, api.OutcomeUnchanged, api.OutcomeRejected}; !slices.Equal(outcomes, want) {
		t.Errorf("engine outcomes %q, api's %q", outcomes, want)
	}
	var rules []api.Rule
	for r := tidemark.Rule(0); !strings.HasPrefix(r.String(), "Rule("); r++ {
		rules = append(rules, api.Rule(r.String()))
	}
	if want := []api.Rule{api.RuleLifecycle, api.RuleExpired, api.RuleSameKey, api.RuleRipple, api.RuleMerge, api.RuleLineage,
		api.RuleSimilar, api.RuleTopicConflict, api.RuleContradicted, api.RuleSplit, api.RuleUpdate, api.RuleRetract, api.RulePurge}; !slices.Equal(rules, want) {
		t.Errorf("engine rules %q, api's %q", rules, want)
	}
	var keys []api.KeyPolicy
	for k := tidemark.KeyPolicy(0); !strings.HasPrefix(k.String(), "KeyPolicy("); k++ {
		keys = append(keys, api.KeyPolicy(k.String()))
	}
	if want := []api.KeyPolicy{api.KeysAuto, api.KeysExplicit}; !slices.Equal(keys, want) {
		t.Errorf("engine key policies %q, api's %q", keys, want)
	}
	var splits []api.SplitPolicy
	for p := tidemark.SplitPolicy(0); !strings.HasPrefix(p.String(), "SplitPolicy("); p++ {
		splits = append(splits, api.SplitPolicy(p.String()))
	}
	if want := []api.SplitPolicy{api.SplitAuto, api.SplitOff}; !slices.Equal(splits, want) {
		t.Errorf("engine split policies %q, api's %q", splits, want)
	}
	for _, s := range []string{"auto", "off", "", "Off", "never"} {
		var ep tidemark.SplitPolicy
		var ap api.SplitPolicy
		eerr, aerr := ep.UnmarshalText([]byte(s)), ap.UnmarshalText([]byte(s))
		if (eerr == nil) != (aerr == nil) || eerr != nil && eerr.Error() != aerr.Error() || eerr == nil && string(ap) != ep.String() {
			t.Errorf("split policy %q: engine %v %v, api %q %v", s, ep, eerr, ap, aerr)
		}
	}
	for _, s := range []string{"auto", "explicit", "", "Auto", "sometimes"} {
		var ek tidemark.KeyPolicy
		var ak api.KeyPolicy
		eerr, aerr := ek.UnmarshalText([]byte(s)), ak.UnmarshalText([]byte(s))
		if (eerr == nil) != (aerr == nil) || eerr != nil && eerr.Error() != aerr.Error() || eerr == nil && string(ak) != ek.String() {
			t.Errorf("key policy %q: engine %v %v, api %q %v", s, ek, eerr, ak, aerr)
		}
	}
}
