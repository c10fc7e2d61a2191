package api

import (
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// ConsolidationReport says what one consolidation run did: the answer of
// POST /v1/collections/{c}/consolidate (tidemark.ConsolidationReport).
type ConsolidationReport struct {
	// Collection is the collection consolidated.
	Collection string `json:"collection"`
	// Seq is the log record holding the run's edits (0 when there were
	// none).
	Seq uint64 `json:"seq"`
	// Promoted, Dormant and Reactivated count lifecycle changes; Expired
	// the memories moved off the surface; Contradictions the pairs
	// flagged; Ripples the memories penalised; Merged the near-duplicates
	// folded; Dependencies the depends_on edges added.
	Promoted       int `json:"promoted"`
	Dormant        int `json:"dormant"`
	Reactivated    int `json:"reactivated"`
	Expired        int `json:"expired"`
	Contradictions int `json:"contradictions"`
	Ripples        int `json:"ripples"`
	Merged         int `json:"merged"`
	Dependencies   int `json:"dependencies"`
	// Contradicted counts the memories penalised for losing a topic
	// conflict's vote.
	Contradicted int `json:"contradicted"`
	// Split counts the memories split into siblings; Updated the
	// planner's updates applied.
	Split   int `json:"split"`
	Updated int `json:"updated"`
	// PlannerAsked counts the memories the planner was asked about,
	// PlannerRejected its proposals refused (below the threshold or
	// failing a check), PlannerFailed its failed requests (the rules
	// decided instead).
	PlannerAsked    int `json:"planner_asked"`
	PlannerRejected int `json:"planner_rejected"`
	PlannerFailed   int `json:"planner_failed"`
	// Orphans lists superseded memories no current memory reaches
	// through version links; empty unless something is broken.
	Orphans []string `json:"orphans,omitempty"`
	// Truncated is true when the run stopped at its edit limit.
	Truncated bool `json:"truncated"`
	// DurationMs is the run's wall time in milliseconds.
	DurationMs float64 `json:"duration_ms"`
}

// LastConsolidation is the answer of GET /v1/collections/{c}/consolidate:
// the collection's last background run.
type LastConsolidation struct {
	// Error is the last background run's error ("" when it succeeded).
	Error string `json:"error"`
	// LastBackgroundRun is the collection's report of that run (null when
	// none ran for it).
	LastBackgroundRun *ConsolidationReport `json:"last_background_run"`
}

// AuditLog is the answer of GET /v1/collections/{c}/audit.
type AuditLog struct {
	// Audit holds the consolidation edits after the requested sequence
	// number, oldest first (null when there are none).
	Audit []AuditEntry `json:"audit"`
	// Next, when more entries remain, is the since that asks for them.
	Next uint64 `json:"next,omitempty"`
}

// AuditEntry is one audited change (tidemark.AuditEntry): a consolidation
// edit, a split, a retraction or a purge.
type AuditEntry struct {
	// Seq is the log record of the change; Time its transaction time.
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// Rule is the rule behind the change.
	Rule Rule `json:"rule"`
	// ID is the memory changed; Other the memory that caused it.
	ID    string `json:"id"`
	Other string `json:"other,omitempty"`
	// From and To are the statuses of a lifecycle change; Penalty the
	// base-confidence penalty of a ripple or a lost conflict.
	From    temporal.Status `json:"from"`
	To      temporal.Status `json:"to"`
	Penalty float64         `json:"penalty,omitempty"`
	// Reason is a machine-readable reason code; Prefer names the memory a
	// topic conflict's majority vote prefers.
	Reason string `json:"reason"`
	Prefer string `json:"prefer,omitempty"`
	// By names who retracted or purged the memory (the token).
	By string `json:"by,omitempty"`
}

// Rule names the consolidation rule behind an edit.
type Rule string

// The consolidation rules (tidemark.Rule).
const (
	// RuleLifecycle: a status change from the live confidence.
	RuleLifecycle Rule = "lifecycle"
	// RuleExpired: a memory whose valid window ended left the surface.
	RuleExpired Rule = "expired"
	// RuleSameKey: two versions of one fact key with different objects.
	RuleSameKey Rule = "same_key"
	// RuleRipple: a memory depending on a superseded one was penalised.
	RuleRipple Rule = "ripple"
	// RuleMerge: a near-exact duplicate was folded into an older memory.
	RuleMerge Rule = "merge"
	// RuleLineage: a document chunk depends on the document's first chunk.
	RuleLineage Rule = "lineage"
	// RuleSimilar: a new memory depends on a very similar older one.
	RuleSimilar Rule = "similar"
	// RuleTopicConflict: two memories about one topic contradict each
	// other.
	RuleTopicConflict Rule = "topic_conflict"
	// RuleContradicted: the losing side of a topic conflict was penalised.
	RuleContradicted Rule = "contradicted"
	// RuleSplit: a memory that stated several facts was split into
	// siblings (one entry per sibling, Other the sibling).
	RuleSplit Rule = "split"
	// RuleUpdate: the planner's update: the newer memory (Other)
	// supersedes the older.
	RuleUpdate Rule = "update"
	// RuleRetract: the memory was retracted (DELETE …/memories/{id}).
	RuleRetract Rule = "retract"
	// RulePurge: the memory's content was erased (?purge=true).
	RulePurge Rule = "purge"
)
