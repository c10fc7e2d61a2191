package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/internal/evalengine"
	"github.com/tidemark/tidemark/temporal"
)

const vddTestData = "../../shared/data/vdd"

func loadVDDForTest(t *testing.T, file, domain string) []vddFact {
	t.Helper()
	facts, err := loadVDDFacts(filepath.Join(vddTestData, file), domain)
	if err != nil {
		t.Skipf("VDD fact sets not beside the repository: %v", err)
	}
	return facts
}

// TestVDDEvolving ingests the Python fact set version by version: with
// the documents' versions, tidemark answers every query with the version
// in force; plain cosine often with an earlier one.
func TestVDDEvolving(t *testing.T) {
	ctx := context.Background()
	facts := loadVDDForTest(t, "python_facts.json", "python")
	if len(facts) != 30 || len(facts[0].Docs) != 3 {
		t.Fatalf("%d facts, %d versions", len(facts), len(facts[0].Docs))
	}
	ds := VDDEvolvingDataset("py", facts, true, nil)
	if err := eval.Check(ds.Corpus, ds.Queries); err != nil {
		t.Fatal(err)
	}
	tm, err := evaluate(ctx, ds, ds.Queries, evalengine.Options{Method: temporal.MethodTidemark})
	if err != nil {
		t.Fatal(err)
	}
	row := vddEvolvingRow("tidemark", ds, tm)
	if row.Accuracy["all"] != 1 || row.Staleness["all"] != 0 {
		t.Fatalf("tidemark: current %.3f stale %.3f", row.Accuracy["all"], row.Staleness["all"])
	}
	pl, err := evaluate(ctx, ds, ds.Queries, evalengine.Options{Method: temporal.MethodPlain})
	if err != nil {
		t.Fatal(err)
	}
	if prow := vddEvolvingRow("plain", ds, pl); prow.Staleness["all"] < 0.2 {
		t.Fatalf("plain cosine stale %.3f: the versions no longer compete", prow.Staleness["all"])
	}
}

// TestVDDProtocolSeed runs one seed of the real-RAG protocol on the
// Node.js facts.
func TestVDDProtocolSeed(t *testing.T) {
	ctx := context.Background()
	facts := loadVDDForTest(t, "nodejs_facts.json", "nodejs")
	dv, qv, err := vddVectors(ctx, facts, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := vddProtocolSeed(ctx, facts, dv, qv, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r := res["tidemark"]; r[0] != 1 || r[1] != 0 {
		t.Fatalf("tidemark current %.3f stale %.3f", r[0], r[1])
	}
	if r := res["no_decay"]; r[1] < 0.1 || r[0]+r[1] != 1 {
		t.Fatalf("no_decay current %.3f stale %.3f", r[0], r[1])
	}
	if r := res["recency_0.5"]; r[0] <= res["no_decay"][0] {
		t.Fatalf("recency %.3f ≤ no decay %.3f", r[0], res["no_decay"][0])
	}
	again, err := vddProtocolSeed(ctx, facts, dv, qv, 1)
	if err != nil {
		t.Fatal(err)
	}
	for m, r := range res {
		if again[m] != r {
			t.Fatalf("%s: %v then %v: not deterministic", m, r, again[m])
		}
	}
}
