package tidemark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// ContextOptions configure AssembleContext. A nil pointer means the
// defaults.
type ContextOptions struct {
	// TokenBudget bounds the block (default DefaultTokenBudget, 2000
	// tokens; at least what the instructions alone take, at most
	// MaxTokenBudget). Tokens are estimated as one per four bytes of
	// UTF-8, rounded up — the usual rule of thumb for English with BPE
	// tokenizers; leave headroom for others.
	TokenBudget int
}

// ContextOptions' default and limit.
const (
	DefaultTokenBudget = 2000
	MaxTokenBudget     = 1 << 24
)

// Validate reports the first invalid field, by name, in an error wrapping
// ErrInvalid; a nil o is valid. It does not change o.
func (o *ContextOptions) Validate() error {
	if o == nil || o.TokenBudget == 0 {
		return nil
	}
	if least := estimateTokens(contextHeader); o.TokenBudget < least || o.TokenBudget > MaxTokenBudget {
		return fmt.Errorf("%w: ContextOptions.TokenBudget = %d, want %d (the instructions alone) … %d (or 0 for the default %d)",
			ErrInvalid, o.TokenBudget, least, MaxTokenBudget, DefaultTokenBudget)
	}
	return nil
}

// WithDefaults returns a copy of o with every zero field set to its
// default; a nil o gives every default. It does not validate.
func (o *ContextOptions) WithDefaults() ContextOptions {
	var r ContextOptions
	if o != nil {
		r = *o
	}
	if r.TokenBudget == 0 {
		r.TokenBudget = DefaultTokenBudget
	}
	return r
}

// ContextDoc is one memory in an assembled context block.
type ContextDoc struct {
	Rank    int             `json:"rank"`
	ID      string          `json:"id"`
	Source  temporal.Source `json:"source"`
	DocID   string          `json:"doc_id,omitempty"`
	Version int             `json:"version,omitempty"`
	Status  temporal.Status `json:"status"`
	Created time.Time       `json:"created"`
	// ValidFrom and ValidTo are the valid window believed now (zero:
	// open).
	ValidFrom time.Time `json:"valid_from,omitzero"`
	ValidTo   time.Time `json:"valid_to,omitzero"`
	// The per-signal scores and the final score (SmartVector §8).
	Sim        float64 `json:"sim"`
	Temporal   float64 `json:"temporal"`
	Confidence float64 `json:"confidence"`
	Relational float64 `json:"relational"`
	Score      float64 `json:"score"`
	Edges      int     `json:"edges"`
	Accesses   int64   `json:"accesses"`
	Positive   int64   `json:"positive"`
	Negative   int64   `json:"negative"`
	// ConflictsWith holds the ranks of the documents of this block this
	// one contradicts (another object for the same fact key, or a
	// contradiction consolidation flagged); Review the changed
	// dependencies a ripple flagged it against.
	ConflictsWith []int    `json:"conflicts_with,omitempty"`
	Review        []string `json:"review,omitempty"`
	Text          string   `json:"text"`
	Tokens        int      `json:"tokens"`
}

// ContextBlock is the annotated context handed to a generator.
type ContextBlock struct {
	Documents []ContextDoc `json:"documents"`
	// Warnings are the conflict and review notes, one line each.
	Warnings []string `json:"warnings,omitempty"`
	// Tokens is the estimate for the whole text block, Budget the limit;
	// Omitted counts ranked memories left out for the budget, Deduplicated
	// those left out as another version of a memory already in the block.
	Tokens       int `json:"tokens"`
	Budget       int `json:"budget"`
	Omitted      int `json:"omitted"`
	Deduplicated int `json:"deduplicated"`
}

// estimateTokens is the budget's token estimate for s.
func estimateTokens(s string) int { return (len(s) + 3) / 4 }

const contextHeader = `=== TIDEMARK RETRIEVAL CONTEXT ===
INSTRUCTIONS:
- Documents are ranked by relevance, recency, confidence and relational importance.
- Confidence reflects source authority and user feedback; static facts do not lose it with age.
- If conflict warnings are present, prefer the higher-confidence source.
- Always cite the document id, source, version and date.
`

// AssembleContext runs req (with explanations) and assembles the annotated
// LLM context block of SmartVector §8 from the hits, best first, within the
// token budget: each document with its source, version, status, dates,
// per-signal scores, edges, accesses and feedback, conflict flags and a
// citation id. Two versions of one fact never both reach the block
// (version-chain dedup): a hit linked by version links to a better-ranked
// hit is left out.
func (c *Collection) AssembleContext(ctx context.Context, req *SearchRequest, opts *ContextOptions) (*ContextBlock, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	budget := opts.WithDefaults().TokenBudget
	if req == nil {
		return nil, fmt.Errorf("%w: nil SearchRequest", ErrInvalid)
	}
	r := *req
	r.Explain = true
	res, err := c.Search(ctx, &r)
	if err != nil {
		return nil, err
	}
	blk := &ContextBlock{Budget: budget, Tokens: estimateTokens(contextHeader)}
	c.mu.RLock()
	defer c.mu.RUnlock()
	heads := map[int]bool{} // version chains already in the block, by newest member
	rankOf := map[int]int{} // row → rank in the block
	for _, h := range res.Hits {
		j, ok := c.rowOf(h.ID)
		if !ok {
			continue
		}
		head := c.chainHead(j)
		if heads[head] {
			blk.Deduplicated++
			continue
		}
		d := ContextDoc{Rank: len(blk.Documents) + 1, ID: h.ID, Source: h.Memory.Source, DocID: h.Memory.DocID,
			Version: h.Memory.Version, Status: h.Memory.Status, Created: h.Memory.Created,
			ValidFrom: h.Memory.ValidFrom, ValidTo: h.Memory.ValidTo, Score: h.Score, Edges: int(c.rows.at(j).degree),
			Accesses: h.Memory.Access, Positive: h.Memory.Positive, Negative: h.Memory.Negative,
			Review: h.Memory.Review, Text: h.Memory.Text}
		if s := h.Signals; s != nil {
			d.Sim, d.Temporal, d.Confidence, d.Relational = s.Sim, s.Temporal, s.Confidence, s.Relational
		}
		for o, rank := range rankOf {
			if c.conflict(j, o) {
				d.ConflictsWith = append(d.ConflictsWith, rank)
			}
		}
		slices.Sort(d.ConflictsWith)
		var warn []string
		for _, o := range d.ConflictsWith {
			od := &blk.Documents[o-1]
			warn = append(warn, fmt.Sprintf("CONFLICT: document %d (%s) contradicts document %d (%s); prefer the higher confidence (%.3f vs %.3f).",
				d.Rank, d.ID, o, od.ID, d.Confidence, od.Confidence))
		}
		if len(d.Review) > 0 {
			warn = append(warn, fmt.Sprintf("REVIEW: document %d (%s) depends on changed memories %s.", d.Rank, d.ID, strings.Join(d.Review, ", ")))
		}
		d.Tokens = estimateTokens(d.render())
		cost := d.Tokens
		for _, w := range warn {
			cost += estimateTokens(w + "\n")
		}
		if blk.Tokens+cost > budget {
			blk.Omitted++
			continue
		}
		heads[head] = true
		rankOf[j] = d.Rank
		blk.Tokens += cost
		blk.Documents = append(blk.Documents, d)
		blk.Warnings = append(blk.Warnings, warn...)
	}
	return blk, nil
}

// chainHead is the newest memory of row j's version chain (c.mu held).
func (c *Collection) chainHead(j int) int {
	for seen := 0; c.rows.at(j).supersededBy >= 0 && seen < c.rows.len(); seen++ {
		j = c.rows.at(j).supersededBy
	}
	return j
}

// conflict reports whether rows a and b contradict: the same fact key
// with different objects, or a contradiction consolidation flagged.
func (c *Collection) conflict(a, b int) bool {
	ra, rb := c.rows.at(a), c.rows.at(b)
	if !ra.key.IsZero() && ra.key == rb.key && temporal.NormalizeObject(ra.mem.Object) != temporal.NormalizeObject(rb.mem.Object) {
		return true
	}
	return slices.Contains(ra.contradicts, b)
}

// render is one document as the text block shows it.
func (d *ContextDoc) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n--- Document %d [%s]", d.Rank, d.ID)
	for _, o := range d.ConflictsWith {
		fmt.Fprintf(&b, " (CONFLICTS WITH DOC %d)", o)
	}
	b.WriteString(" ---\n")
	ver := "-"
	if d.DocID != "" {
		ver = fmt.Sprintf("%s v%d", d.DocID, d.Version)
	}
	fmt.Fprintf(&b, "Source: %s | Version: %s | %s\n", d.Source, ver, strings.ToUpper(d.Status.String()))
	fmt.Fprintf(&b, "Created: %s", d.Created.Format(time.DateOnly))
	if !d.ValidFrom.IsZero() || !d.ValidTo.IsZero() {
		from, to := "…", "now"
		if !d.ValidFrom.IsZero() {
			from = d.ValidFrom.Format(time.DateOnly)
		}
		if !d.ValidTo.IsZero() {
			to = d.ValidTo.Format(time.DateOnly)
		}
		fmt.Fprintf(&b, " | Valid: %s to %s", from, to)
	}
	fmt.Fprintf(&b, "\nScores: sim=%.3f, temporal=%.3f, confidence=%.3f, relational=%.3f\nFINAL: %.3f\n", d.Sim, d.Temporal, d.Confidence, d.Relational, d.Score)
	fmt.Fprintf(&b, "Edges: %d | Accesses: %d | Feedback: +%d/-%d\n", d.Edges, d.Accesses, d.Positive, d.Negative)
	b.WriteString(d.Text)
	b.WriteString("\n")
	return b.String()
}

// Text renders the block as the text handed to a generator.
func (blk *ContextBlock) Text() string {
	var b strings.Builder
	b.WriteString(contextHeader)
	for _, w := range blk.Warnings {
		b.WriteString(w)
		b.WriteString("\n")
	}
	for i := range blk.Documents {
		b.WriteString(blk.Documents[i].render())
	}
	return b.String()
}
