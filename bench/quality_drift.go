package bench

import (
	"context"
	"fmt"

	"github.com/tidemark/tidemark/internal/driftsim"
)

// DriftRun is one configuration of the drift simulation (VDD §4.2–4.6).
type DriftRun struct {
	Name   string          `json:"name"`
	Result driftsim.Result `json:"result"`
}

// DriftReport ranks the decay strategies on VDD's drift scenarios (regime
// shifts, mixed, bursty, reversion, gradual) by integrated absolute error,
// beside VDD Table 8, in two observation regimes.
type DriftReport struct {
	Runs []DriftRun `json:"runs"`
}

func (q *qualityRun) drift(ctx context.Context) (DriftReport, error) {
	var rep DriftReport
	for _, c := range []struct {
		name string
		cfg  driftsim.Config
	}{
		{"noisy observations (σ = 0.1, regimes hold still)", driftsim.Config{}},
		{"the VDD scripts' regime (σ = 0.01, the state walks ω = 0.01)", driftsim.Config{Noise: 0.01, Walk: 0.01}},
	} {
		r, err := driftsim.Run(ctx, c.cfg)
		if err != nil {
			return rep, err
		}
		rep.Runs = append(rep.Runs, DriftRun{c.name, r})
		for _, s := range r.Scenarios {
			rho := "—"
			if s.VsTable8 != nil {
				rho = fmt.Sprintf("%+.3f", s.VsTable8.Rho)
			}
			q.say("quality: drift %-14s %s: ρ vs Table 8 %s", s.Scenario, c.name, rho)
		}
	}
	return rep, nil
}

func (d *DriftReport) markdown(b *mdWriter) {
	b.printf("## Drift scenarios (VDD §4.2–4.6, Table 8)\n\n")
	b.printf("Mean IAE over the seeds (lower is better), our rank among the methods run, and [VDD Table 8's rank among its ten]. " +
		"Absolute IAE is on another scale than the paper's; the comparable quantity is the order (Spearman ρ).\n\n")
	for _, run := range d.Runs {
		r := &run.Result
		b.printf("### %s — %d seeds × %d steps, dim %d\n\n", run.Name, r.Config.Seeds, r.Config.Steps, r.Config.Dim)
		head := []string{"method"}
		for _, s := range r.Scenarios {
			head = append(head, s.Scenario.String())
		}
		head = append(head, "mean rank")
		b.header(head...)
		for mi, mr := range r.MeanRanks {
			cells := []string{mr.Method.String()}
			for _, s := range r.Scenarios {
				m := s.Methods[mi]
				c := fmt.Sprintf("%.1f (%d)", m.MeanIAE, m.Rank)
				if m.Table8Rank > 0 {
					c += fmt.Sprintf(" [%d]", m.Table8Rank)
				}
				cells = append(cells, c)
			}
			b.row(append(cells, fmt.Sprintf("%.1f", mr.MeanRank))...)
		}
		cells := []string{"Spearman ρ vs Table 8"}
		for _, s := range r.Scenarios {
			if s.VsTable8 != nil {
				cells = append(cells, fmt.Sprintf("%+.3f", s.VsTable8.Rho))
			} else {
				cells = append(cells, "—")
			}
		}
		b.row(append(cells, "")...)
		b.printf("\n")
	}
}
