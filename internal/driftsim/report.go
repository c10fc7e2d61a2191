package driftsim

import (
	"io"
	"text/tabwriter"

	"github.com/tidemark/tidemark/internal/textout"
)

// WriteText prints r as tables: per scenario each method's mean IAE ± std
// and rank beside VDD Table 8's IAE and rank ("paper | ours"), Spearman's
// ρ against Tables 8 and 13, then each method's mean rank.
func (r *Result) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	p := &textout.Writer{W: tw}
	c := r.Config
	p.Printf("%d seeds × %d steps, dim %d, noise %g, walk %g\t\n", c.Seeds, c.Steps, c.Dim, c.Noise, c.Walk)
	for _, s := range r.Scenarios {
		p.Printf("\t\n%s\tours IAE\t± std\trank\t|\tTable 8 IAE\trank\t\n", s.Scenario)
		for _, m := range s.Methods {
			p.Printf("%s\t%.2f\t%.2f\t%d\t|\t", m.Method, m.MeanIAE, m.StdIAE, m.Rank)
			if m.Table8IAE > 0 {
				p.Printf("%.1f\t%d\t\n", m.Table8IAE, m.Table8Rank)
			} else {
				p.Printf("–\t–\t\n")
			}
		}
		for _, a := range []struct {
			name string
			ra   *RankAgreement
		}{{"Table 8", s.VsTable8}, {"Table 13", s.VsTable13}} {
			if a.ra != nil {
				p.Printf("Spearman ρ vs %s (%d methods)\t%+.3f\t\t\t\t\t\t\n", a.name, a.ra.N, a.ra.Rho)
			}
		}
	}
	p.Printf("\t\nmethod\tmean rank\t\n")
	for _, m := range r.MeanRanks {
		p.Printf("%s\t%.2f\t\n", m.Method, m.MeanRank)
	}
	if p.Err != nil {
		return p.Err
	}
	return tw.Flush()
}
