package store

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The crash test: the test binary runs itself as a child that appends to a
// WAL from several goroutines and prints every acknowledged sequence
// number; the parent kills it with SIGKILL at a random moment, recovers
// the log in-process and checks that every acknowledged record is there.
//
// Environment:
//
//	TIDEMARK_WAL_CRASH_CYCLES  cycles of TestCrashRecovery (default 50, 10 with -short)
//	TIDEMARK_WAL_CRASH_SEED    seed of the kill delays and payloads (default: from the clock; logged)
//	TIDEMARK_WAL_CRASH_CHILD   set by the parent: the log directory; selects child mode
//	TIDEMARK_WAL_CRASH_ID      set by the parent: the cycle, which makes payload identities unique
const (
	envCrashCycles = "TIDEMARK_WAL_CRASH_CYCLES"
	envCrashSeed   = "TIDEMARK_WAL_CRASH_SEED"
	envCrashChild  = "TIDEMARK_WAL_CRASH_CHILD"
	envCrashID     = "TIDEMARK_WAL_CRASH_ID"

	crashSegmentSize = 32 << 10 // small, so that kills land in rollovers too
	crashWriters     = 4
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(envCrashChild); dir != "" {
		os.Exit(crashChild(dir))
	}
	os.Exit(m.Run())
}

// crashChild is the child process: it never returns before it is killed
// (or after a minute, should the parent have died). Its stdout carries
// "ready <lastSeq>" once the log is open, then "ack <seq> <hash>" for
// every acknowledged record, each line written after its Append returned.
func crashChild(dir string) int {
	id, _ := strconv.ParseUint(os.Getenv(envCrashID), 10, 32)
	seed, _ := strconv.ParseUint(os.Getenv(envCrashSeed), 10, 64)
	// In even cycles a small write buffer splits a group commit into many
	// write(2) calls, so that a kill can land between them and leave a torn
	// tail; odd cycles use the default buffer, which holds a whole group
	// until its commit, as in production.
	opts := &Options{SegmentSize: crashSegmentSize}
	if id%2 == 0 {
		opts.writeBufferSize = 64
	}
	w, err := Open(dir, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: Open:", err)
		return 2
	}
	fmt.Fprintf(os.Stdout, "ready %d\n", w.LastSeq())
	var mu sync.Mutex // one write per line group, never interleaved
	for g := range crashWriters {
		go func() {
			r := rand.New(rand.NewPCG(seed, id*crashWriters+uint64(g)))
			writer := uint32(id*crashWriters + uint64(g))
			var line bytes.Buffer
			for counter := uint64(0); ; {
				n := 1
				switch r.IntN(16) {
				case 0: // a big batch: many write(2) calls, a wide window to tear
					n = 50 + r.IntN(150)
				case 1, 2, 3:
					n = 2 + r.IntN(7)
				}
				batch := make([][]byte, n)
				for i := range batch {
					batch[i] = makePayload(writer, counter, 16+r.IntN(300))
					counter++
				}
				var first uint64
				if n == 1 {
					first, err = w.Append(context.Background(), batch[0])
				} else {
					first, _, err = w.AppendBatch(context.Background(), batch)
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "child: append:", err)
					os.Exit(3)
				}
				line.Reset()
				for i, p := range batch {
					fmt.Fprintf(&line, "ack %d %x\n", first+uint64(i), payloadHash(p))
				}
				mu.Lock()
				os.Stdout.Write(line.Bytes())
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Minute)
	fmt.Fprintln(os.Stderr, "child: not killed within a minute")
	return 4
}

// crashStats counts what the crash cycles checked.
type crashStats struct {
	cycles       int
	acked        int // acknowledgements reported by children, all checked
	recordsRead  int // records replayed and checked over all cycles
	truncations  int // recoveries that cut a torn tail
	earlyKills   int // kills timed from the start of the child, not from "ready"
	finalLastSeq uint64
}

// crashTester runs crash cycles against one directory that keeps growing.
type crashTester struct {
	tb   testing.TB
	dir  string
	seed uint64
	rng  *rand.Rand
	// known[seq] is the hash of the payload of seq, for every record
	// acknowledged to a child or found by a recovery (which made it
	// durable); it must never change or disappear.
	known []uint64
	// checked is the last sequence number whose payload was checked
	// whole by checkPayload; later cycles compare only hashes below it.
	checked uint64
	stats   crashStats
}

func newCrashTester(tb testing.TB) *crashTester {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(envCrashSeed); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			tb.Fatalf("%s=%q: %v", envCrashSeed, s, err)
		}
	}
	tb.Logf("crash test seed %d (rerun with %s=%d)", seed, envCrashSeed, seed)
	return &crashTester{tb: tb, dir: tb.TempDir(), seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed)), known: []uint64{0}}
}

// cycle starts a child, kills it after a random delay, recovers and
// checks the log.
func (c *crashTester) cycle() {
	tb := c.tb
	n := c.stats.cycles
	delay := time.Duration(5+c.rng.IntN(76)) * time.Millisecond
	early := c.rng.IntN(8) == 0 // sometimes kill while the child may still be recovering

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envCrashChild+"="+c.dir,
		envCrashID+"="+strconv.Itoa(n),
		envCrashSeed+"="+strconv.FormatUint(c.seed, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	ready := make(chan struct{})
	var lines []string
	readDone := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first && strings.HasPrefix(sc.Text(), "ready ") {
				close(ready)
				first = false
				continue
			}
			lines = append(lines, sc.Text())
		}
		readDone <- sc.Err()
	}()
	if early {
		c.stats.earlyKills++
		time.Sleep(delay)
	} else {
		select {
		case <-ready:
			time.Sleep(delay)
		case err := <-readDone:
			cmd.Wait()
			tb.Fatalf("cycle %d: child ended before it was ready (%v): %s", n, err, stderr.String())
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			tb.Fatalf("cycle %d: child not ready after 30 s: %s", n, stderr.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		tb.Fatalf("cycle %d: kill: %v", n, err)
	}
	if err := <-readDone; err != nil {
		tb.Fatalf("cycle %d: reading the child: %v", n, err)
	}
	cmd.Wait()
	alive := time.Since(start)
	if code := cmd.ProcessState.ExitCode(); code != -1 {
		tb.Fatalf("cycle %d: child exited with status %d instead of being killed: %s", n, code, stderr.String())
	}

	// Every acknowledgement the child printed.
	var maxAcked uint64
	acks := 0
	for _, l := range lines {
		var seq, hash uint64
		if _, err := fmt.Sscanf(l, "ack %d %x", &seq, &hash); err != nil {
			tb.Fatalf("cycle %d: child printed %q", n, l)
		}
		for uint64(len(c.known)) <= seq {
			c.known = append(c.known, 0)
		}
		if old := c.known[seq]; old != 0 && old != hash {
			tb.Fatalf("cycle %d: sequence %d acknowledged with payload hash %x, earlier %x", n, seq, hash, old)
		}
		c.known[seq] = hash
		maxAcked = max(maxAcked, seq)
		acks++
	}

	// Recover in-process and check the whole log.
	w, err := Open(c.dir, &Options{SegmentSize: crashSegmentSize})
	if err != nil {
		tb.Fatalf("cycle %d (killed after %v, %d acks): Open: %v", n, alive, acks, err)
	}
	rec := w.Recovery()
	if rec.TruncatedBytes > 0 {
		c.stats.truncations++
	}
	next := uint64(1)
	err = w.Replay(0, func(seq uint64, p []byte) error {
		if seq != next {
			return fmt.Errorf("sequence %d, want %d", seq, next)
		}
		next++
		if seq > c.checked { // payload contents are checked once; then their hash
			if err := checkPayload(p); err != nil {
				return fmt.Errorf("sequence %d: %v", seq, err)
			}
		}
		h := payloadHash(p)
		if seq < uint64(len(c.known)) && c.known[seq] != 0 {
			if c.known[seq] != h {
				return fmt.Errorf("sequence %d: payload hash %x, acknowledged or recovered earlier as %x", seq, h, c.known[seq])
			}
		} else {
			for uint64(len(c.known)) <= seq {
				c.known = append(c.known, 0)
			}
			c.known[seq] = h // recovered, and made durable by Open: must stay
		}
		c.stats.recordsRead++
		return nil
	})
	last := w.LastSeq()
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatalf("cycle %d: %v", n, err)
	}
	if next != last+1 || rec.FirstSeq != 1 {
		tb.Fatalf("cycle %d: replayed up to %d, LastSeq %d, FirstSeq %d", n, next-1, last, rec.FirstSeq)
	}
	if maxAcked > last || uint64(len(c.known)-1) > last {
		tb.Fatalf("cycle %d: LOST DATA: sequence %d was acknowledged or recovered before, the log ends at %d", n, max(maxAcked, uint64(len(c.known)-1)), last)
	}
	c.checked = last
	c.stats.cycles++
	c.stats.acked += acks
	c.stats.finalLastSeq = last
	if testing.Verbose() {
		tb.Logf("cycle %d: delay %v (early %v), child lived %v, %d acks, log %d records, cut %d bytes (%s)",
			n, delay, early, alive.Round(time.Millisecond), acks, last, rec.TruncatedBytes, rec.Reason)
	}
}

func (c *crashTester) report() {
	s := c.stats
	c.tb.Logf("crash test: %d cycles (%d killed early), %d acknowledged records checked, %d record reads checked, %d torn tails cut, final log %d records",
		s.cycles, s.earlyKills, s.acked, s.recordsRead, s.truncations, s.finalLastSeq)
}

// TestCrashRecovery is the crash test; see the comment at the top of the
// file. It uses real fsync.
func TestCrashRecovery(t *testing.T) {
	cycles := 50
	if testing.Short() {
		cycles = 10
	}
	if s := os.Getenv(envCrashCycles); s != "" {
		var err error
		if cycles, err = strconv.Atoi(s); err != nil {
			t.Fatalf("%s=%q: %v", envCrashCycles, s, err)
		}
	}
	c := newCrashTester(t)
	for range cycles {
		c.cycle()
	}
	c.report()
	if c.stats.acked == 0 {
		t.Fatal("no child ever acknowledged a record")
	}
}

// BenchmarkCrashRecovery runs b.N crash cycles (use -benchtime=500x for
// 500) and reports the records acknowledged per cycle.
func BenchmarkCrashRecovery(b *testing.B) {
	c := newCrashTester(b)
	for b.Loop() {
		c.cycle()
	}
	c.report()
	b.ReportMetric(float64(c.stats.acked)/float64(c.stats.cycles), "acks/cycle")
	b.ReportMetric(float64(c.stats.truncations)/float64(c.stats.cycles), "cuts/cycle")
}
