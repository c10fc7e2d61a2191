package tidemark

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// checkConsistent fails unless every collection's indexes agree with its
// ledger, its link graph is the one the ledger derives, and every archived
// memory is reachable through version links.
func checkConsistent(t *testing.T, db *DB) {
	t.Helper()
	for _, c := range db.snapshotColls() {
		c.mu.RLock()
		ok := c.indexesAgree()
		stored, visible := c.rows.len(), c.visible
		c.mu.RUnlock()
		if !ok {
			t.Fatalf("collection %q: the indexes disagree with the ledger (%d stored, %d visible; surface %d, archive %d)",
				c.name, stored, visible, c.surface.Len(), c.archive.Len())
		}
		if err := c.checkLinks(); err != nil {
			t.Fatalf("collection %q: %v", c.name, err)
		}
	}
}

const crashEnv = "TIDEMARK_ENGINE_CRASH_CHILD"

// TestCrashChild is the child of TestCrashRecovery: it ingests in a loop
// and prints each acknowledged id. It does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		t.Skip("the child of TestCrashRecovery")
	}
	dir, cycleStr, _ := strings.Cut(spec, ",")
	cycle, _ := strconv.Atoi(cycleStr)
	db, err := Open(dir, &Options{CheckpointRecords: 15})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	ctx := context.Background()
	c, err := db.Collection("c")
	if err != nil {
		if c, err = db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8, ExactThreshold: 50, M: 8, EfConstruction: 32}); err != nil {
			fmt.Println("create:", err)
			os.Exit(3)
		}
	}
	// A text collection beside it: memories that state two facts are split
	// into siblings at Put, and later ones supersede a sibling of earlier
	// ones (the Split path of every record).
	tc, err := db.Collection("t")
	if err != nil {
		if tc, err = db.CreateCollection(ctx, "t", &CollectionOptions{Dim: 16, Embedder: "hashing"}); err != nil {
			fmt.Println("create t:", err)
			os.Exit(3)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(cycle), 99))
	out := bufio.NewWriter(os.Stdout)
	for n := 0; ; n++ {
		if n%3 == 1 {
			u := rng.IntN(6)
			m := Memory{ID: fmt.Sprintf("t%d-%d", cycle, n),
				Text: fmt.Sprintf("The unit %d rate limit is %d requests per minute and the unit %d cache timeout is %d seconds.", u, 10*rng.IntN(20), u, rng.IntN(90))}
			if _, err := tc.Put(ctx, []Memory{m}); err != nil {
				fmt.Println("put t:", err)
				os.Exit(3)
			}
			fmt.Fprintln(out, "ackt", m.ID)
		}
		batch := make([]Memory, 1+rng.IntN(12))
		for i := range batch {
			v := make([]float32, 8)
			for j := range v {
				v[j] = float32(rng.NormFloat64())
			}
			batch[i] = Memory{ID: fmt.Sprintf("c%d-%d-%d", cycle, n, i), Text: fmt.Sprintf("cycle %d batch %d item %d", cycle, n, i),
				Vector: v, Kind: temporal.Versioned, Subject: fmt.Sprintf("s%d", rng.IntN(40)), Relation: "r", Object: strconv.Itoa(rng.IntN(4)),
				ValidFrom: time.Date(2025, 1, 1+rng.IntN(300), 0, 0, 0, 0, time.UTC)}
		}
		if _, err := c.Put(ctx, batch); err != nil {
			fmt.Println("put:", err)
			os.Exit(3)
		}
		for _, m := range batch {
			fmt.Fprintln(out, "ack", m.ID)
		}
		out.Flush()
		// The living-memory records ride along: feedback, consolidation
		// runs (lifecycle, merges, ripples) and document edits.
		switch n % 7 {
		case 2:
			if err := c.FeedbackFrom(ctx, batch[0].ID, rng.IntN(2) == 0, fmt.Sprint("src", rng.IntN(3))); err != nil && !errors.Is(err, ErrRateLimited) {
				fmt.Println("feedback:", err)
				os.Exit(3)
			}
		case 3, 5:
			// Retractions and purges of acknowledged memories (announced
			// first: one the kill interrupts may or may not have landed).
			fmt.Fprintln(out, "retracting", batch[0].ID)
			out.Flush()
			res, err := c.Retract(ctx, batch[0].ID, &RetractOptions{By: "crash", Purge: n%7 == 5})
			if err != nil {
				fmt.Println("retract:", err)
				os.Exit(3)
			}
			for _, id := range res.IDs {
				fmt.Fprintln(out, map[bool]string{true: "purged", false: "retracted"}[n%7 == 5], id)
			}
			out.Flush()
		case 4:
			if _, err := c.Consolidate(ctx, nil); err != nil {
				fmt.Println("consolidate:", err)
				os.Exit(3)
			}
		case 6:
			doc := fmt.Sprintf("doc-%d", cycle)
			text := fmt.Sprintf("Cycle %d policy. Limit %d per day.\n\nSecond part %d.", cycle, n, rng.IntN(100))
			opts := &DocumentOptions{ChunkBytes: 24, Embed: embedWords}
			if _, err := c.UpdateDocument(ctx, doc, text, opts); errors.Is(err, ErrNotFound) {
				_, err = c.PutDocument(ctx, doc, text, opts)
				if err != nil {
					fmt.Println("put document:", err)
					os.Exit(3)
				}
			} else if err != nil && !errors.Is(err, ErrInvalid) {
				fmt.Println("update document:", err)
				os.Exit(3)
			}
		}
	}
}

// embedWords is a tiny deterministic embedder for the crash test's
// documents (8 dimensions, a hash of each word).
func embedWords(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 8)
		v[0] = 0.01
		for _, w := range strings.Fields(t) {
			h := 0
			for _, r := range w {
				h = h*31 + int(r)
			}
			v[(h%8+8)%8]++
		}
		out[i] = v
	}
	return out, nil
}

// A child process ingests in a loop and is killed with SIGKILL at a
// random moment, 50 times; after each kill the database opens, every
// acknowledged memory is there, and the indexes agree with the ledger.
func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip()
	}
	// 50 cycles in the suite; TIDEMARK_CRASH_CYCLES=N runs more (a soak).
	cycles := 50
	if testing.Short() {
		cycles = 10
	}
	if n, err := strconv.Atoi(os.Getenv("TIDEMARK_CRASH_CYCLES")); err == nil && n > 0 {
		cycles = n
	}
	dir := t.TempDir()
	acked, ackedText := map[string]bool{}, map[string]bool{}
	retracted, purged, retracting := map[string]bool{}, map[string]bool{}, map[string]bool{}
	rng := rand.New(rand.NewPCG(5, 5))
	for cycle := range cycles {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d", crashEnv, dir, cycle))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Wait for a random number of acknowledged batches (1–10: so that
		// the living-memory records, which the child writes after every
		// few batches, run in some cycles however slow a loaded machine
		// makes it), then kill at a random moment.
		var got []string
		first := true
		batches, wantBatches := 0, 1+rng.IntN(10)
		deadline := time.After(60 * time.Second)
		kill := time.After(time.Hour)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				got = append(got, l)
				var c, n, i int
				if _, err := fmt.Sscanf(l, "ack c%d-%d-%d", &c, &n, &i); err == nil {
					batches = max(batches, n+1)
				}
				if first && batches >= wantBatches {
					first = false
					kill = time.After(time.Duration(rng.IntN(150)) * time.Millisecond)
				}
			case <-kill:
				_ = cmd.Process.Signal(syscall.SIGKILL)
				kill = time.After(time.Hour)
			case <-deadline:
				_ = cmd.Process.Kill()
				t.Fatalf("cycle %d: the child acknowledged nothing in 60 s: %v", cycle, got)
			}
		}
		_ = cmd.Wait()
		// interrupted: the kill came between a retraction's announcement
		// and its result.
		interrupted := false
		for _, l := range got {
			if id, ok := strings.CutPrefix(l, "ackt "); ok {
				ackedText[id] = true
				continue
			}
			if id, ok := strings.CutPrefix(l, "retracting "); ok {
				retracting[id], interrupted = true, true
				continue
			}
			if id, ok := strings.CutPrefix(l, "retracted "); ok {
				retracted[id], interrupted = true, false
				continue
			}
			if id, ok := strings.CutPrefix(l, "purged "); ok {
				purged[id], interrupted = true, false
				continue
			}
			id, ok := strings.CutPrefix(l, "ack ")
			if !ok {
				t.Fatalf("cycle %d: child said %q", cycle, l)
			}
			acked[id] = true
		}
		db, err := Open(dir, nil)
		if err != nil {
			t.Fatalf("cycle %d: reopen: %v", cycle, err)
		}
		c, err := db.Collection("c")
		if err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		for id := range acked {
			m, err := c.Get(context.Background(), id)
			switch {
			case retracting[id] && !retracted[id] && !purged[id]:
				// Interrupted: either outcome.
			case purged[id]:
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("cycle %d: purged %s: %v", cycle, id, err)
				}
			case errors.Is(err, ErrNotFound) && interrupted:
				// An id folded into the memory whose purge the kill
				// interrupted (the child never printed its ids).
				purged[id] = true
			case err != nil:
				t.Fatalf("cycle %d: acknowledged %s lost: %v", cycle, id, err)
			case retracted[id] && (m.Visible || m.RetractedBy != "crash"):
				t.Fatalf("cycle %d: retracted %s: visible %v, retracted by %q", cycle, id, m.Visible, m.RetractedBy)
			}
		}
		if len(ackedText) > 0 {
			tc, err := db.Collection("t")
			if err != nil {
				t.Fatalf("cycle %d: %v", cycle, err)
			}
			for id := range ackedText {
				m, err := tc.Get(context.Background(), id)
				if err != nil {
					t.Fatalf("cycle %d: acknowledged %s lost: %v", cycle, id, err)
				}
				// (A sibling that restates a current memory folds into it
				// and is no sibling of its own.)
				if len(m.SplitInto) > 2 || m.Visible || m.SplitRule != "rules" {
					t.Fatalf("cycle %d: %s: split into %v by %q, visible %v; want at most two siblings and the original archived", cycle, id, m.SplitInto, m.SplitRule, m.Visible)
				}
				for _, s := range m.SplitInto {
					if _, err := tc.Get(context.Background(), s); err != nil {
						t.Fatalf("cycle %d: sibling %s of acknowledged %s lost: %v", cycle, s, id, err)
					}
				}
			}
		}
		checkConsistent(t, db)
		if cycle%2 == 0 { // leave half the cycles' state to the child's own recovery
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		} else {
			db.wal.Close() // like a crash: no final snapshot
		}
	}
	if len(acked) < cycles {
		t.Fatalf("only %d writes acknowledged in %d cycles", len(acked), cycles)
	}
	// The living-memory records were exercised across the kills too.
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, _ := db.Collection("c")
	audit, _ := c.Audit(context.Background(), 0)
	docs := 0
	for cycle := range cycles {
		if cur, _ := c.currentChunks(fmt.Sprintf("doc-%d", cycle)); len(cur) > 0 {
			docs++
		}
	}
	if len(audit) == 0 || docs == 0 {
		t.Fatalf("%d audit entries and %d documents after %d cycles: the consolidation and document paths never ran", len(audit), docs, cycles)
	}
	tc, _ := db.Collection("t")
	superseded := 0
	for id := range ackedText {
		if m, err := tc.Get(context.Background(), id+"#1"); err == nil && m.SupersededBy != "" {
			superseded++
		}
	}
	if len(ackedText) == 0 || superseded == 0 {
		t.Fatalf("%d split memories acknowledged, %d of their siblings superseded: the Split path never ran", len(ackedText), superseded)
	}
	t.Logf("%d consolidation edits and %d documents survived the kills", len(audit), docs)
	t.Logf("%d split memories survived the kills, %d of their first siblings superseded by later ones", len(ackedText), superseded)
	t.Logf("%d cycles, %d acknowledged memories, all present", cycles, len(acked))
}
