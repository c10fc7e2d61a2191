package bench

import (
	"context"
	"fmt"

	"github.com/tidemark/tidemark/internal/evalengine"
	"github.com/tidemark/tidemark/temporal"
)

// SweepRow is one contradiction rate of SmartVector §10.4's sweep: overall
// accuracy and the stale rate of current queries for plain RAG,
// SmartVector (default weights) and tidemark, beside Table 4.
type SweepRow struct {
	Rate    float64 `json:"rate"`
	Rumours int     `json:"rumours"`
	Queries int     `json:"queries"`
	// Accuracy and Stale per method name (plain, smartvector, tidemark).
	Accuracy map[string]float64 `json:"accuracy"`
	Stale    map[string]float64 `json:"stale"`
	// PaperPlainAcc … are Table 4's row.
	PaperPlainAcc   float64 `json:"paper_plain_accuracy"`
	PaperSVAcc      float64 `json:"paper_smartvector_accuracy"`
	PaperPlainStale float64 `json:"paper_plain_stale"`
	PaperSVStale    float64 `json:"paper_smartvector_stale"`
}

// paperSweep is SmartVector Table 4: rate, plain acc, SV acc, plain stale,
// SV stale.
var paperSweep = [][5]float64{
	{0, .317, .600, .250, .217},
	{.15, .312, .648, .433, .217},
	{.30, .328, .620, .433, .100},
	{.50, .313, .620, .433, .050},
	{.75, .316, .555, .467, .250},
}

var sweepMethods = []temporal.Method{temporal.MethodPlain, temporal.MethodSmartVector, temporal.MethodTidemark}

func (q *qualityRun) sweep(ctx context.Context) ([]SweepRow, error) {
	var out []SweepRow
	for _, p := range paperSweep {
		rate := p[0]
		if rate == 0 {
			rate = -1 // PolicyConfig: negative means no rumours
		}
		ds := GeneratePolicy(PolicyConfig{Seed: q.cfg.Seed, RumourRate: rate})
		ds.Name = fmt.Sprintf("policy-rumours-%02.0f", 100*p[0])
		if err := q.write(ds.Dataset); err != nil {
			return nil, err
		}
		row := SweepRow{Rate: p[0], Rumours: ds.Rumours, Queries: len(ds.Queries),
			Accuracy: map[string]float64{}, Stale: map[string]float64{},
			PaperPlainAcc: p[1], PaperSVAcc: p[2], PaperPlainStale: p[3], PaperSVStale: p[4]}
		for _, m := range sweepMethods {
			r, err := q.evaluate(ctx, ds.Dataset, ds.Queries, evalengine.Options{Method: m, FirstStage: policyFirstStage})
			if err != nil {
				return nil, err
			}
			row.Accuracy[m.String()] = r.AccuracyAt1
			row.Stale[m.String()] = r.ByType[PolicyCurrent].StaleRate
		}
		q.say("quality: sweep %3.0f%% rumours %2d  acc plain %.3f sv %.3f tidemark %.3f  stale plain %.3f sv %.3f tidemark %.3f",
			100*p[0], row.Rumours, row.Accuracy["plain"], row.Accuracy["smartvector"], row.Accuracy["tidemark"],
			row.Stale["plain"], row.Stale["smartvector"], row.Stale["tidemark"])
		out = append(out, row)
	}
	return out, nil
}

func sweepMarkdown(b *mdWriter, rows []SweepRow) {
	b.printf("## Contradiction-rate sweep (SmartVector §10.4, Table 4)\n\nEach cell: ours (paper). Stale is over current queries.\n\n")
	b.header("rumour rate", "rumours", "plain acc", "SmartVector acc", "tidemark acc", "plain stale", "SmartVector stale", "tidemark stale")
	for _, r := range rows {
		b.row(fmt.Sprintf("%.0f%%", 100*r.Rate), fmt.Sprint(r.Rumours),
			vs(pct(r.Accuracy["plain"]), &r.PaperPlainAcc, pct), vs(pct(r.Accuracy["smartvector"]), &r.PaperSVAcc, pct), pct(r.Accuracy["tidemark"]),
			vs(pct(r.Stale["plain"]), &r.PaperPlainStale, pct), vs(pct(r.Stale["smartvector"]), &r.PaperSVStale, pct), pct(r.Stale["tidemark"]))
	}
	b.printf("\n")
}
