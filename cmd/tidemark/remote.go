package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tidemark/tidemark/api"
	"github.com/tidemark/tidemark/client"
)

// The commands that talk to a running `tidemark serve`.

func remoteFlags(fs *flag.FlagSet) (addr, token, coll *string, asJSON *bool) {
	addr = fs.String("addr", "127.0.0.1:8080", "server address")
	token = fs.String("token", os.Getenv("TIDEMARK_TOKEN"), "bearer token (env TIDEMARK_TOKEN)")
	coll = fs.String("collection", "", "collection (required)")
	asJSON = fs.Bool("json", false, "print JSON")
	return
}

func needRemote(fs *flag.FlagSet, stderr io.Writer, token, coll string) error {
	if token == "" || coll == "" {
		fmt.Fprintf(stderr, "tidemark %s: --token (or TIDEMARK_TOKEN) and --collection are required\n", fs.Name())
		fs.Usage()
		return errUsage
	}
	return nil
}

// runCreate creates a collection on a server.
func runCreate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("create", stderr)
	addr, token, coll, asJSON := remoteFlags(fs)
	var o api.CreateCollection
	fs.IntVar(&o.Dim, "dim", 0, "vector dimension (required; the embedding model's for openai and ollama)")
	fs.StringVar(&o.Method, "method", "", "scoring preset (default tidemark)")
	fs.StringVar(&o.Embedder, "embedder", "", `text embedder: "" (vectors only), hashing (offline), hashing-words, openai (OpenAI-compatible /embeddings), ollama (/api/embed)`)
	var remote api.RemoteEmbedder
	fs.StringVar(&remote.BaseURL, "base-url", "", `embedder endpoint, e.g. http://localhost:11434/v1 (openai) or http://localhost:11434 (ollama)`)
	fs.StringVar(&remote.Model, "model", "", "embedding model, e.g. nomic-embed-text")
	fs.StringVar(&remote.APIKeyEnv, "api-key-env", "", "name of the server's environment variable holding the embedder's API key (the key is never sent or stored)")
	fs.Float64Var(&o.HalfLife, "half-life", 0, "decay half-life in days (default 30)")
	keys := fs.String("keys", "auto", "fact keys: auto (extracted from text at ingest) or explicit (only the keys callers give)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := needRemote(fs, stderr, *token, *coll); err != nil {
		return err
	}
	if err := o.Keys.UnmarshalText([]byte(*keys)); err != nil {
		return err
	}
	if remote != (api.RemoteEmbedder{}) {
		o.Remote = &remote
	}
	out, err := client.New(*addr, *token).CreateCollection(context.Background(), *coll, o)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "created %s: dim %d, method %s, embedder %q, keys %s\n", out.Name, out.Dim, out.Method, out.Embedder, out.Keys)
	return nil
}

// runPut uploads memories from a JSON Lines file (one api.Memory a line) in
// batches, with a progress line.
func runPut(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("put", stderr)
	addr, token, coll, asJSON := remoteFlags(fs)
	file := fs.String("file", "-", "memories, JSON Lines (- for standard input)")
	batch := fs.Int("batch", 500, "memories per request")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := needRemote(fs, stderr, *token, *coll); err != nil {
		return err
	}
	in := io.Reader(os.Stdin)
	if *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	c := client.New(*addr, *token)
	ctx := context.Background()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var pending []api.Memory
	counts := map[string]int{}
	sent, line := 0, 0
	start := time.Now()
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		res, err := c.Put(ctx, *coll, pending)
		if err != nil {
			return err
		}
		for _, r := range res {
			counts[string(r.Outcome)]++
		}
		sent += len(pending)
		pending = pending[:0]
		fmt.Fprintf(stderr, "\r%d memories sent (%.0f/s)", sent, float64(sent)/time.Since(start).Seconds())
		return nil
	}
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m api.Memory
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		pending = append(pending, m)
		if len(pending) == *batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	fmt.Fprintln(stderr)
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"sent": sent, "outcomes": counts})
	}
	fmt.Fprintf(stdout, "%d memories: %v\n", sent, counts)
	return nil
}

func runSearch(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("search", stderr)
	addr, token, coll, asJSON := remoteFlags(fs)
	text := fs.String("text", "", "query text (the collection must have an embedder)")
	vec := fs.String("vector", "", "query vector, comma-separated")
	k := fs.Int("k", 10, "results")
	asOf := fs.String("as-of", "", "valid time to ask about (RFC 3339)")
	method := fs.String("method", "", "scoring method (default the collection's)")
	explain := fs.Bool("explain", false, "per-signal scores and removed candidates")
	minScore := fs.String("min-score", "", "drop the hits scoring below this (scores compare across queries; default no threshold)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := needRemote(fs, stderr, *token, *coll); err != nil {
		return err
	}
	q := api.SearchRequest{Text: *text, K: *k, Method: *method, Explain: *explain}
	if *minScore != "" {
		x, err := strconv.ParseFloat(strings.TrimSpace(*minScore), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("--min-score %q: want a finite number", *minScore)
		}
		q.MinScore = &x
	}
	if *vec != "" {
		for _, f := range strings.Split(*vec, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(f), 32)
			if err != nil {
				return fmt.Errorf("--vector: %w", err)
			}
			q.Vector = append(q.Vector, float32(x))
		}
	}
	if *asOf != "" {
		var t api.Time
		if err := t.UnmarshalJSON([]byte(strconv.Quote(*asOf))); err != nil {
			return errors.Join(errUsage, fmt.Errorf("--as-of: %w", err))
		}
		q.AsOf = &t
	}
	res, err := client.New(*addr, *token).Search(context.Background(), *coll, q)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	for i, h := range res.Hits {
		fmt.Fprintf(stdout, "%2d. %-24s score %.3f  cosine %.3f  confidence %.3f  %s\n", i+1, h.ID, h.Score, h.Cosine, h.Confidence, oneLine(h.Memory.Text, 60))
	}
	for _, r := range res.Removed {
		fmt.Fprintf(stdout, "    removed %-20s %s\n", r.ID, r.Reason)
	}
	return nil
}

func runHistory(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("history", stderr)
	addr, token, coll, asJSON := remoteFlags(fs)
	id := fs.String("id", "", "memory id (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := needRemote(fs, stderr, *token, *coll); err != nil {
		return err
	}
	if *id == "" {
		return errors.Join(errUsage, errors.New("--id is required"))
	}
	vs, err := client.New(*addr, *token).History(context.Background(), *coll, *id)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(vs)
	}
	for _, v := range vs {
		from, to := "…", "now"
		if v.ValidFrom != nil {
			from = v.ValidFrom.Format(time.DateOnly)
		}
		if v.ValidTo != nil {
			to = v.ValidTo.Format(time.DateOnly)
		}
		fmt.Fprintf(stdout, "%-24s valid %s … %s  current %v  %s\n", v.ID, from, to, v.Visible != nil && *v.Visible, oneLine(v.Text, 50))
		switch {
		case len(v.SplitInto) > 0:
			fmt.Fprintf(stdout, "%-24s   split by %s into %s\n", "", v.SplitRule, strings.Join(v.SplitInto, ", "))
		case v.SplitFrom != "":
			fmt.Fprintf(stdout, "%-24s   split from %s\n", "", v.SplitFrom)
		}
		if v.SupersededBy != "" {
			fmt.Fprintf(stdout, "%-24s   superseded by %s\n", "", v.SupersededBy)
		}
		switch {
		case v.Purged:
			fmt.Fprintf(stdout, "%-24s   purged\n", "")
		case v.RetractedAt != nil:
			fmt.Fprintf(stdout, "%-24s   retracted %s by %s\n", "", v.RetractedAt.Format(time.RFC3339), cmp.Or(v.RetractedBy, "(unnamed)"))
		}
	}
	return nil
}

// runList lists (or counts) a collection's memories on a server.
func runList(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", stderr)
	addr, token, coll, asJSON := remoteFlags(fs)
	limit := fs.Int("limit", 100, "page size (1…1000)")
	cursor := fs.String("cursor", "", "go on from a page's next cursor")
	every := fs.Bool("every", false, "list every page, not just one")
	versions := fs.Bool("versions", false, "every stored version (superseded, expired, retracted), not only the current memories")
	count := fs.Bool("count", false, "print how many memories the listing selects")
	asOf := fs.String("as-of", "", "what was true at this valid time (RFC 3339 or YYYY-MM-DD)")
	asOfTx := fs.String("as-of-tx", "", "what was believed at this transaction time (RFC 3339 or YYYY-MM-DD)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := needRemote(fs, stderr, *token, *coll); err != nil {
		return err
	}
	q := api.ListQuery{Limit: *limit, Cursor: *cursor, All: *versions}
	for _, p := range []struct {
		s   string
		dst *time.Time
	}{{*asOf, &q.AsOf}, {*asOfTx, &q.AsOfTx}} {
		if p.s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, p.s)
		if err != nil {
			if t, err = time.Parse(time.DateOnly, p.s); err != nil {
				return errors.Join(errUsage, fmt.Errorf("%q is not an RFC 3339 time or a YYYY-MM-DD date", p.s))
			}
		}
		*p.dst = t
	}
	cl := client.New(*addr, *token)
	ctx := context.Background()
	if *count {
		n, err := cl.Count(ctx, *coll, q)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, n)
		return nil
	}
	enc := json.NewEncoder(stdout)
	show := func(m api.Memory) error {
		if *asJSON {
			return enc.Encode(m) // one memory a line: JSON Lines, as put reads
		}
		state := "current"
		switch {
		case m.Purged:
			state = "purged"
		case m.RetractedAt != nil:
			state = "retracted"
		case m.Visible != nil && !*m.Visible:
			state = "archived"
		}
		_, err := fmt.Fprintf(stdout, "%-24s r%-3d %-9s %s\n", m.ID, m.Revision, state, oneLine(m.Text, 60))
		return err
	}
	if *every {
		n := 0
		for m, err := range cl.All(ctx, *coll, q) {
			if err != nil {
				return err
			}
			if err := show(m); err != nil {
				return err
			}
			if n++; n%10000 == 0 {
				fmt.Fprintf(stderr, "%d memories listed\n", n)
			}
		}
		return nil
	}
	page, err := cl.List(ctx, *coll, q)
	if err != nil {
		return err
	}
	for _, m := range page.Memories {
		if err := show(m); err != nil {
			return err
		}
	}
	if page.NextCursor != "" {
		fmt.Fprintf(stderr, "more: --cursor %s\n", page.NextCursor)
	}
	return nil
}

// runRetract retracts a memory on a server.
func runRetract(args []string, stdout, stderr io.Writer) error {
	return retractCmd("retract", false, args, stdout, stderr)
}

// runPurge erases a memory on a server.
func runPurge(args []string, stdout, stderr io.Writer) error {
	return retractCmd("purge", true, args, stdout, stderr)
}

// retractCmd is retract and purge: DELETE …/memories/{id}, in the token's
// name.
func retractCmd(name string, purge bool, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(name, stderr)
	addr, token, coll, asJSON := remoteFlags(fs)
	id := fs.String("id", "", "memory id (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := needRemote(fs, stderr, *token, *coll); err != nil {
		return err
	}
	if *id == "" {
		return errors.Join(errUsage, errors.New("--id is required"))
	}
	cl := client.New(*addr, *token)
	call := cl.Retract
	if purge {
		call = cl.Purge
	}
	res, err := call(context.Background(), *coll, *id)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	switch {
	case res.Unchanged:
		fmt.Fprintf(stdout, "%s was already retracted\n", *id)
	case purge:
		fmt.Fprintf(stdout, "purged %s (its text and vector leave the server's files at its next checkpoint)\n", strings.Join(res.IDs, ", "))
	default:
		fmt.Fprintf(stdout, "retracted %s\n", strings.Join(res.IDs, ", "))
	}
	if len(res.Restored) > 0 {
		fmt.Fprintf(stdout, "holds again: %s\n", strings.Join(res.Restored, ", "))
	}
	return nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
