package tidemark

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// Writers, searchers (both plans), feedback and checkpoints at once: -race
// clean, nothing lost, and the indexes agree with the ledger after.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{CheckpointRecords: 25, NoSync: true})
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8, ExactThreshold: 40, M: 8, EfConstruction: 32})
	if err != nil {
		t.Fatal(err)
	}
	const writers, perWriter = 4, 30
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range perWriter {
				v := make([]float32, 8)
				for j := range v {
					v[j] = float32(rng.NormFloat64())
				}
				m := Memory{ID: fmt.Sprintf("w%d-%d", w, i), Text: fmt.Sprintf("w%d %d", w, i), Vector: v,
					Subject: fmt.Sprintf("s%d", rng.IntN(10)), Relation: "r", Object: fmt.Sprint(rng.IntN(5)),
					ValidFrom: time.Date(2025, 1, 1+rng.IntN(200), 0, 0, 0, 0, time.UTC)}
				if _, err := c.Put(ctx, []Memory{m}); err != nil {
					errs <- err
					return
				}
				if i%5 == 0 {
					if err := c.Feedback(ctx, m.ID, i%10 == 0); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 2))
			for {
				select {
				case <-stop:
					return
				default:
				}
				q := make([]float32, 8)
				for j := range q {
					q[j] = float32(rng.NormFloat64())
				}
				req := &SearchRequest{Vector: q, K: 5, Plan: Plan(rng.IntN(3)), Explain: rng.IntN(2) == 0}
				if rng.IntN(3) == 0 {
					req.AsOf = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
				}
				if _, err := c.Search(ctx, req); err != nil {
					errs <- err
					return
				}
				if _, err := c.History(ctx, "w0-0"); err != nil && !errors.Is(err, ErrNotFound) {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w := range writers {
		for i := range perWriter {
			if _, err := c.Get(ctx, fmt.Sprintf("w%d-%d", w, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	checkConsistent(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
