package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
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
	"github.com/tidemark/tidemark/temporal"
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

// putFormats is put's help on what a line holds.
const putFormats = `
Input formats (--format, or from the file's extension: .csv is CSV, anything
else JSON Lines):

  JSON Lines: one memory per line, a JSON object with the fields of the API's
  memory: {"id":"limit","text":"The API rate limit is 100 requests per minute.",
  "metadata":{"team":"platform"},"valid_from":"2025-01-01"} — id is required;
  vector (an array of numbers) is required unless the collection embeds text;
  optional: kind (static, versioned, event), source, profile, doc_id, version,
  chunk, subject, relation, object, depends_on (an array of ids), metadata (an
  object), valid_from, valid_to, recorded_at, created (RFC 3339 or YYYY-MM-DD),
  if_version (write only if the id is at that version).

  CSV: a header row naming the columns, then one memory per row. The columns
  are the same fields; vector holds numbers separated by spaces (or a JSON
  array), depends_on ids separated by spaces, metadata a JSON object; a column
  named meta.KEY sets metadata KEY (a number or true/false when it reads as
  one, else a string). Empty cells are absent fields.

An id that exists with other content becomes its next version.
`

// runPut uploads memories from a JSON Lines or CSV file in batches, with a
// progress line.
func runPut(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("put", stderr)
	addr, token, coll, asJSON := remoteFlags(fs)
	file := fs.String("file", "-", "memories, JSON Lines or CSV (- for standard input)")
	format := fs.String("format", "", "jsonl or csv (default: csv for a .csv file, else jsonl)")
	batch := fs.Int("batch", 500, "memories per request")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: tidemark put --collection NAME [--file FILE] [flags]\n\nUploads memories to a running server in batches.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, putFormats)
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format == "" {
		*format = "jsonl"
		if strings.HasSuffix(strings.ToLower(*file), ".csv") {
			*format = "csv"
		}
	}
	if *format != "jsonl" && *format != "csv" {
		return errors.Join(errUsage, fmt.Errorf("--format %q: want jsonl or csv", *format))
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
	next := jsonLines(in)
	if *format == "csv" {
		next = csvRows(in)
	}
	var pending []api.Memory
	counts := map[string]int{}
	sent := 0
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
	for {
		m, ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		pending = append(pending, m)
		if len(pending) == *batch {
			if err := flush(); err != nil {
				return err
			}
		}
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
	asOf := fs.String("as-of", "", "what was true at this valid time (RFC 3339 or YYYY-MM-DD)")
	asOfTx := fs.String("as-of-tx", "", "what tidemark believed at this transaction time (RFC 3339 or YYYY-MM-DD)")
	now := fs.String("now", "", "the reference time (default the server's clock)")
	method := fs.String("method", "", "scoring method (default the collection's): tidemark, plain, temporal, confidence, smartvector, article, vdd")
	weights := fs.String("weights", "", "the four signals' weights sim,temporal,confidence,relational (e.g. 0.6,0.3,0.1,0)")
	filter := fs.String("filter", "", `metadata filter as JSON, e.g. '{"team":"red","page":{"$lt":10}}'`)
	kinds := fs.String("kinds", "", "comma-separated kinds to keep (static, versioned, event)")
	statuses := fs.String("statuses", "", "comma-separated lifecycle statuses to keep")
	sources := fs.String("sources", "", "comma-separated sources to keep")
	rangeFrom := fs.String("range-from", "", "keep memories created at or after this time")
	rangeTo := fs.String("range-to", "", "keep memories created before this time")
	plan := fs.String("plan", "", "auto, exact or ann")
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
	for _, tf := range []struct {
		flag, v string
		dst     **api.Time
	}{{"as-of", *asOf, &q.AsOf}, {"as-of-tx", *asOfTx, &q.AsOfTx}, {"now", *now, &q.Now}, {"range-from", *rangeFrom, nil}, {"range-to", *rangeTo, nil}} {
		if tf.v == "" {
			continue
		}
		var t api.Time
		if err := t.UnmarshalJSON([]byte(strconv.Quote(tf.v))); err != nil {
			return errors.Join(errUsage, fmt.Errorf("--%s: %w", tf.flag, err))
		}
		switch tf.flag {
		case "range-from", "range-to":
			if q.Range == nil {
				q.Range = &api.Range{}
			}
			if tf.flag == "range-from" {
				q.Range.From = &t
			} else {
				q.Range.To = &t
			}
		default:
			*tf.dst = &t
		}
	}
	if *weights != "" {
		var w [4]float64
		parts := strings.Split(*weights, ",")
		if len(parts) != 4 {
			return errors.Join(errUsage, fmt.Errorf("--weights %q: want four numbers sim,temporal,confidence,relational", *weights))
		}
		for i, p := range parts {
			x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil {
				return errors.Join(errUsage, fmt.Errorf("--weights: %q is not a number", p))
			}
			w[i] = x
		}
		q.Weights = &api.Weights{Sim: w[0], Temporal: w[1], Confidence: w[2], Relational: w[3]}
	}
	if *filter != "" {
		if !json.Valid([]byte(*filter)) {
			return errors.Join(errUsage, fmt.Errorf("--filter %q is not JSON", *filter))
		}
		q.Filter = json.RawMessage(*filter)
	}
	q.Plan = *plan
	for _, l := range []struct {
		v   string
		add func(string) error
	}{
		{*kinds, func(s string) error {
			var k temporal.Kind
			err := k.UnmarshalText([]byte(s))
			q.Kinds = append(q.Kinds, k)
			return err
		}},
		{*statuses, func(s string) error {
			var st temporal.Status
			err := st.UnmarshalText([]byte(s))
			q.Statuses = append(q.Statuses, st)
			return err
		}},
		{*sources, func(s string) error {
			var src temporal.Source
			err := src.UnmarshalText([]byte(s))
			q.Sources = append(q.Sources, src)
			return err
		}},
	} {
		if l.v == "" {
			continue
		}
		for _, s := range strings.Split(l.v, ",") {
			if err := l.add(strings.TrimSpace(s)); err != nil {
				return errors.Join(errUsage, err)
			}
		}
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

// memoryCommand parses the flags of a command about one memory: the
// server's, and --id.
func memoryCommand(name string, args []string, stderr io.Writer) (cl *client.Client, coll, id string, asJSON bool, err error) {
	fs := newFlags(name, stderr)
	addr, token, c, j := remoteFlags(fs)
	i := fs.String("id", "", "memory id (required)")
	if err := parse(fs, args); err != nil {
		return nil, "", "", false, err
	}
	if err := needRemote(fs, stderr, *token, *c); err != nil {
		return nil, "", "", false, err
	}
	if *i == "" {
		return nil, "", "", false, errors.Join(errUsage, errors.New("--id is required"))
	}
	return client.New(*addr, *token), *c, *i, *j, nil
}

func runHistory(args []string, stdout, stderr io.Writer) error {
	cl, coll, id, asJSON, err := memoryCommand("history", args, stderr)
	if err != nil {
		return err
	}
	vs, err := cl.History(context.Background(), coll, id)
	if err != nil {
		return err
	}
	if asJSON {
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
	cl, coll, id, asJSON, err := memoryCommand(name, args, stderr)
	if err != nil {
		return err
	}
	call := cl.Retract
	if purge {
		call = cl.Purge
	}
	res, err := call(context.Background(), coll, id)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	switch {
	case res.Unchanged:
		fmt.Fprintf(stdout, "%s was already retracted\n", id)
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

// memoryReader yields the next memory of an input, false at its end.
type memoryReader func() (api.Memory, bool, error)

// jsonLines reads one memory a line (blank lines skipped), strictly.
func jsonLines(in io.Reader) memoryReader {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	return func() (api.Memory, bool, error) {
		for sc.Scan() {
			line++
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			m, err := decodeMemoryJSON([]byte(sc.Text()))
			if err != nil {
				return m, false, fmt.Errorf("line %d: %w", line, err)
			}
			return m, true, nil
		}
		return api.Memory{}, false, sc.Err()
	}
}

// decodeMemoryJSON decodes one memory strictly (no unknown fields).
func decodeMemoryJSON(b []byte) (api.Memory, error) {
	var m api.Memory
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(&m)
	return m, err
}

// csvRows reads a header row, then one memory a row (putFormats).
func csvRows(in io.Reader) memoryReader {
	r := csv.NewReader(in)
	r.FieldsPerRecord = 0
	var header []string
	row := 1
	return func() (api.Memory, bool, error) {
		if header == nil {
			h, err := r.Read()
			if err == io.EOF {
				return api.Memory{}, false, nil
			}
			if err != nil {
				return api.Memory{}, false, fmt.Errorf("csv header: %w", err)
			}
			header = h
		}
		rec, err := r.Read()
		if err == io.EOF {
			return api.Memory{}, false, nil
		}
		row++
		if err != nil {
			return api.Memory{}, false, fmt.Errorf("csv row %d: %w", row, err)
		}
		obj := map[string]any{}
		meta := map[string]any{}
		for i, col := range header {
			v := strings.TrimSpace(rec[i])
			if v == "" {
				continue
			}
			switch {
			case strings.HasPrefix(col, "meta."):
				var x any
				if json.Unmarshal([]byte(v), &x) == nil {
					switch x.(type) {
					case float64, bool:
						meta[col[5:]] = x
						continue
					}
				}
				meta[col[5:]] = v
			case col == "vector":
				if strings.HasPrefix(v, "[") {
					obj[col] = json.RawMessage(v)
					continue
				}
				var nums []float64
				for _, f := range strings.Fields(v) {
					x, err := strconv.ParseFloat(f, 64)
					if err != nil {
						return api.Memory{}, false, fmt.Errorf("csv row %d: vector: %q is not a number", row, f)
					}
					nums = append(nums, x)
				}
				obj[col] = nums
			case col == "depends_on":
				obj[col] = strings.Fields(v)
			case col == "metadata":
				obj[col] = json.RawMessage(v)
			case col == "version" || col == "chunk" || col == "if_version" || col == "access" || col == "positive" || col == "negative":
				n, err := strconv.Atoi(v)
				if err != nil {
					return api.Memory{}, false, fmt.Errorf("csv row %d: %s: %q is not an integer", row, col, v)
				}
				obj[col] = n
			default:
				obj[col] = v
			}
		}
		if len(meta) > 0 {
			md := map[string]any{}
			if raw, ok := obj["metadata"].(json.RawMessage); ok {
				if err := json.Unmarshal(raw, &md); err != nil {
					return api.Memory{}, false, fmt.Errorf("csv row %d: metadata: %w", row, err)
				}
			}
			for k, v := range meta {
				md[k] = v
			}
			obj["metadata"] = md
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return api.Memory{}, false, fmt.Errorf("csv row %d: %w", row, err)
		}
		m, err := decodeMemoryJSON(b)
		if err != nil {
			return m, false, fmt.Errorf("csv row %d: %w", row, err)
		}
		return m, true, nil
	}
}
