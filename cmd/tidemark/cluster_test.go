package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidemark/tidemark/api"
	"github.com/tidemark/tidemark/internal/pgtest"
)

// TestMain runs the command itself when a test starts this binary as a
// tidemark process (TIDEMARK_TEST_MAIN holds its arguments), and stops
// the shared PostgreSQL cluster after the tests.
func TestMain(m *testing.M) {
	if args := os.Getenv("TIDEMARK_TEST_MAIN"); args != "" {
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	pgtest.Main(m)
}

const clusterToken = "cluster-test-token-0123456789"

// node is one "tidemark serve --store" process.
type node struct {
	cmd  *exec.Cmd
	base string
	out  *bytes.Buffer
	mu   *sync.Mutex
}

// startNode starts "tidemark serve --store url" on a free loopback port
// and waits (bounded) until it listens.
func startNode(t *testing.T, url string) *node {
	t.Helper()
	dir := t.TempDir()
	toks := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(toks, []byte(`[{"token":"`+clusterToken+`","name":"test","collections":["*"],"write":true}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--store", url, "--data", filepath.Join(dir, "cache"), "--addr", "127.0.0.1:0", "--tokens", toks}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TIDEMARK_TEST_MAIN="+strings.Join(args, "\x1f"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	n := &node{cmd: cmd, out: &bytes.Buffer{}, mu: &sync.Mutex{}}
	cmd.Stderr = &lockedWriter{n.out, n.mu}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case n.base = <-addr:
	case <-time.After(60 * time.Second):
		n.mu.Lock()
		defer n.mu.Unlock()
		t.Fatalf("the node did not listen within 60 s:\n%s", n.out)
	}
	return n
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// call sends one authenticated request and decodes the answer into out
// (when not nil); it returns the status and the Tidemark-Seq header.
func (n *node) call(method, path string, body, out any) (int, uint64, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, 0, err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, n.base+path, rd)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+clusterToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	seq, _ := strconv.ParseUint(resp.Header.Get(api.HeaderSeq), 10, 64)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, seq, err
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, seq, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		err = json.Unmarshal(b, out)
	}
	return resp.StatusCode, seq, err
}

func vecN(hot int) []float32 {
	v := make([]float32, 8)
	v[hot%8] = 1
	v[(hot+5)%8] = 0.3
	return v
}

// current returns the ids of a collection's current memories on n.
func (n *node) current(t *testing.T, coll string, minSeq uint64) []string {
	t.Helper()
	var list api.MemoryList
	if _, _, err := n.call("GET", fmt.Sprintf("/v1/collections/%s/memories?limit=1000&min_seq=%d", coll, minSeq), nil, &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list.Memories {
		ids = append(ids, m.ID)
	}
	return ids
}

// The walk, over HTTP between two "tidemark serve --store"
// processes on one database: a memory written through one is found
// through the other at once with min_seq and within 2 s without; a key
// superseded through both at once leaves exactly one current value; a
// node SIGKILLed during ingest loses nothing it acknowledged, and a node
// started afterwards has it all.
func TestServeClusterOverPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and three server processes")
	}
	url := pgtest.Database(t)
	a, b := startNode(t, url), startNode(t, url)
	if _, _, err := a.call("POST", "/v1/collections/notes", api.CreateCollection{Dim: 8}, nil); err != nil {
		t.Fatal(err)
	}
	_, seq, err := a.call("POST", "/v1/collections/notes/memories", api.PutRequest{Memories: []api.Memory{{ID: "m1", Text: "one", Vector: vecN(1)}}}, nil)
	if err != nil || seq == 0 {
		t.Fatalf("put on A: seq %d, %v", seq, err)
	}
	var res api.SearchResult
	if _, _, err := b.call("POST", fmt.Sprintf("/v1/collections/notes/search?min_seq=%d", seq), api.SearchRequest{Vector: vecN(1), K: 1}, &res); err != nil || len(res.Hits) != 1 || res.Hits[0].ID != "m1" {
		t.Fatalf("search on B with min_seq %d: %+v, %v", seq, res, err)
	}
	if _, _, err := a.call("POST", "/v1/collections/notes/memories", api.PutRequest{Memories: []api.Memory{{ID: "m2", Text: "two", Vector: vecN(2)}}}, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); ; {
		if _, _, err := b.call("GET", "/v1/collections/notes/memories/m2", nil, nil); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("m2 not found on B 2 s after A acknowledged it")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A min_seq no node has reached: 503 after the bounded wait.
	if code, _, _ := b.call("GET", "/v1/collections/notes/count?min_seq=999999999", nil, nil); code != http.StatusServiceUnavailable {
		t.Fatalf("an unreachable min_seq answered %d, want 503", code)
	}
	if code, _, _ := b.call("GET", "/v1/collections/notes/count?min_seq=x", nil, nil); code != http.StatusBadRequest {
		t.Fatalf("a bad min_seq answered %d, want 400", code)
	}

	// One key superseded through both nodes at once, round after round.
	_, created, err := a.call("POST", "/v1/collections/facts", api.CreateCollection{Dim: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var maxSeq uint64
	var mu sync.Mutex
	for round := range 10 {
		var wg sync.WaitGroup
		for i, n := range []*node{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m := api.Memory{ID: fmt.Sprintf("r%d-%d", round, i), Text: "rate limit", Vector: vecN(round),
					Subject: "api", Relation: "rate limit", Object: fmt.Sprint(100*round + i)}
				// B may not have the collection yet: min_seq of A's create.
				_, s, err := n.call("POST", fmt.Sprintf("/v1/collections/facts/memories?min_seq=%d", created), api.PutRequest{Memories: []api.Memory{m}}, nil)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				maxSeq = max(maxSeq, s)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	ca, cb := a.current(t, "facts", maxSeq), b.current(t, "facts", maxSeq)
	if len(ca) != 1 || len(cb) != 1 || ca[0] != cb[0] {
		t.Fatalf("current values after concurrent supersession: A %v, B %v", ca, cb)
	}

	// SIGKILL A in the middle of an ingest through it.
	var acked []string
	var lastSeq uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprint("k", i)
			_, s, err := a.call("POST", "/v1/collections/notes/memories", api.PutRequest{Memories: []api.Memory{{ID: id, Text: "ingest " + id, Vector: vecN(i)}}}, nil)
			if err != nil {
				return // killed
			}
			mu.Lock()
			acked, lastSeq = append(acked, id), s
			mu.Unlock()
		}
	}()
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 30 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	close(stop)
	mu.Lock()
	want, upTo := append([]string(nil), acked...), lastSeq
	mu.Unlock()
	c := startNode(t, url)
	for _, n := range []*node{b, c} {
		have := map[string]bool{}
		for _, id := range n.current(t, "notes", upTo) {
			have[id] = true
		}
		for _, id := range want {
			if !have[id] {
				t.Fatalf("%s was acknowledged by the killed node but is missing on %s", id, n.base)
			}
		}
	}
	var h api.Health
	resp, err := http.Get(c.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if h.Replication == nil || h.Replication.Store != "postgres" || !h.Replication.Reachable || h.Replication.Applied < upTo {
		t.Fatalf("readyz of the new node: %+v", h.Replication)
	}
}

// A --store that cannot be reached fails the start with the URL named
// and its password hidden.
func TestServeStoreUnreachable(t *testing.T) {
	code, _, errOut := runCLI("serve", "--store", "postgres://tm:hunter2-secret@127.0.0.1:1/tm?connect_timeout=5",
		"--data", t.TempDir(), "--addr", "127.0.0.1:0")
	if code == 0 || strings.Contains(errOut, "hunter2") || !strings.Contains(errOut, "--store postgres://tm:xxxxx@127.0.0.1:1/tm") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}
