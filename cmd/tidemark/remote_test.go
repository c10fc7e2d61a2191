package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/client"
	"github.com/tidemark/tidemark/server"
)

// put, search and history against a server, as a user would run them.
func TestRemoteCommands(t *testing.T) {
	db, err := tidemark.Open(t.TempDir(), &tidemark.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const tok = "cli-test-token-0123456"
	s, err := server.New(db, server.Config{Tokens: []server.Token{{Token: tok, Name: "cli", Collections: []string{"*"}, Write: true}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if _, err := db.CreateCollection(context.Background(), "facts", &tidemark.CollectionOptions{Dim: 3}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "m.jsonl")
	lines := `{"id":"v1","text":"limit 100","vector":[1,0,0],"subject":"api","relation":"limit","object":"100","valid_from":"2025-01-01T00:00:00Z"}
{"id":"v2","text":"limit 250","vector":[1,0.1,0],"subject":"api","relation":"limit","object":"250","valid_from":"2025-06-01T00:00:00Z"}
`
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--addr", ts.URL, "--token", tok, "--collection", "facts"}
	run := func(f func([]string, io.Writer, io.Writer) error, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := f(append(common, args...), &out, &errb); err != nil {
			t.Fatalf("%v: %v (%s)", args, err, errb.String())
		}
		return out.String()
	}
	if out := run(runPut, "--file", file, "--batch", "1"); !strings.Contains(out, "2 memories") {
		t.Fatalf("put: %q", out)
	}
	if out := run(runSearch, "--vector", "1,0,0", "--explain"); !strings.Contains(out, " 1. v2") || !strings.Contains(out, "removed v1") {
		t.Fatalf("search: %q", out)
	}
	if out := run(runSearch, "--vector", "1,0,0", "--as-of", "2025-03-01T00:00:00Z", "--json"); !strings.Contains(out, `"hits":[{"id":"v1"`) {
		t.Fatalf("as-of search: %q", out)
	}
	if out := run(runSearch, "--vector", "1,0,0"); !strings.Contains(out, " 1. v2") || !strings.Contains(out, "cosine 0.995") {
		t.Fatalf("search shows no cosine: %q", out)
	}
	if out := run(runSearch, "--vector", "1,0,0", "--min-score", "1.5"); strings.Contains(out, "v2") {
		t.Fatalf("--min-score 1.5 kept a hit: %q", out)
	}
	if out := run(runSearch, "--vector", "1,0,0", "--min-score", "-1"); !strings.Contains(out, " 1. v2") {
		t.Fatalf("--min-score -1 dropped a hit: %q", out)
	}
	if err := runSearch(append(common, "--vector", "1,0,0", "--min-score", "NaN"), io.Discard, io.Discard); err == nil {
		t.Fatal("--min-score NaN was accepted")
	}
	if out := run(runHistory, "--id", "v2"); !strings.Contains(out, "v1") || !strings.Contains(out, "current true") {
		t.Fatalf("history: %q", out)
	}
	// Retract the newer version: the older holds again; history says who.
	if out := run(runRetract, "--id", "v2"); !strings.Contains(out, "retracted v2") || !strings.Contains(out, "holds again: v1") {
		t.Fatalf("retract: %q", out)
	}
	if out := run(runSearch, "--vector", "1,0,0"); !strings.Contains(out, " 1. v1") || strings.Contains(out, "v2") {
		t.Fatalf("search after the retraction: %q", out)
	}
	if out := run(runHistory, "--id", "v2"); !strings.Contains(out, "retracted ") || !strings.Contains(out, "by cli") {
		t.Fatalf("history after the retraction: %q", out)
	}
	if out := run(runList, "--limit", "1"); !strings.Contains(out, "v1 ") || !strings.Contains(out, "current") {
		t.Fatalf("list: %q", out)
	}
	if out := run(runList, "--versions", "--every", "--json"); strings.Count(out, "\n") != 2 || !strings.Contains(out, `"retracted_by":"cli"`) {
		t.Fatalf("list --versions --every --json: %q", out)
	}
	if out := run(runList, "--count"); strings.TrimSpace(out) != "1" {
		t.Fatalf("list --count: %q", out)
	}
	if out := run(runPurge, "--id", "v2", "--json"); !strings.Contains(out, `"purged":true`) {
		t.Fatalf("purge: %q", out)
	}
	if err := runRetract(append(common, "--id", "v2"), io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("retracting a purged memory: %v", err)
	}
	// A text collection created from the command line: plain statements,
	// no keys, the newer value supersedes.
	text := []string{"--addr", ts.URL, "--token", tok, "--collection", "notes"}
	var out, errb0 bytes.Buffer
	if err := runCreate(append(text, "--dim", "256", "--embedder", "hashing"), &out, &errb0); err != nil ||
		!strings.Contains(out.String(), "created notes") || !strings.Contains(out.String(), "keys auto") {
		t.Fatalf("create: %q %v %s", out.String(), err, errb0.String())
	}
	notes := filepath.Join(t.TempDir(), "n.jsonl")
	if err := os.WriteFile(notes, []byte(`{"id":"n1","text":"The API rate limit is 100 requests per minute."}
{"id":"n2","text":"The API rate limit is 250 requests per minute."}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runPut(append(text, "--file", notes, "--batch", "1"), &out, &errb0); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runSearch(append(text, "--text", "What is the API rate limit?", "--json"), &out, &errb0); err != nil ||
		!strings.Contains(out.String(), `"hits":[{"id":"n2"`) || strings.Contains(out.String(), `"id":"n1"`) {
		t.Fatalf("text search: %q %v", out.String(), err)
	}
	if err := runCreate(append(text[:4], "--collection", "bad", "--dim", "4", "--keys", "sometimes"), io.Discard, io.Discard); err == nil {
		t.Fatal("a bad key policy was accepted")
	}
	// Collections, CSV with metadata, every search option.
	kb := []string{"--addr", ts.URL, "--token", tok, "--collection", "kb"}
	colls := func(sub string, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := runCollections(append([]string{sub}, append(slices.Clone(common), args...)...), &out, &errb); err != nil {
			t.Fatalf("collections %s %v: %v (%s)", sub, args, err, errb.String())
		}
		return out.String()
	}
	if out := colls("create", "--collection", "kb", "--dim", "3"); !strings.Contains(out, "created kb") {
		t.Fatalf("collections create: %q", out)
	}
	csvFile := filepath.Join(t.TempDir(), "m.csv")
	if err := os.WriteFile(csvFile, []byte("id,text,vector,valid_from,meta.team,meta.page,metadata\n"+
		"a,\"Alpha, the first.\",1 0 0,2025-01-01,red,1,\"{\"\"lang\"\":\"\"en\"\"}\"\n"+
		"b,Beta,0.9 0.1 0,2025-02-01,blue,2,\n"+
		"c,Gamma,\"[0.8,0.2,0]\",,red,3,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runPut(append(kb, "--file", csvFile), &out, io.Discard); err != nil || !strings.Contains(out.String(), "3 memories") {
		t.Fatalf("put csv: %q %v", out.String(), err)
	}
	out.Reset()
	if err := runSearch(append(kb, "--vector", "1,0,0", "--filter", `{"team":"red","page":{"$gte":2}}`, "--json"), &out, io.Discard); err != nil ||
		!strings.Contains(out.String(), `"hits":[{"id":"c"`) || strings.Contains(out.String(), `"id":"a"`) {
		t.Fatalf("search --filter: %q %v", out.String(), err)
	}
	out.Reset()
	if err := runSearch(append(kb, "--vector", "1,0,0", "--as-of", "2025-01-15", "--k", "1", "--plan", "exact", "--kinds", "static",
		"--weights", "1,0,0,0", "--as-of-tx", "2099-01-01", "--range-from", "2024-01-01", "--json"), &out, io.Discard); err != nil || !strings.Contains(out.String(), `"id":"a"`) {
		t.Fatalf("search with every option: %q %v", out.String(), err)
	}
	if m, err := client.New(ts.URL, tok).Get(context.Background(), "kb", "a"); err != nil || m.Metadata["team"] != "red" || m.Metadata["page"] != 1.0 || m.Metadata["lang"] != "en" || m.Text != "Alpha, the first." {
		t.Fatalf("the CSV row: %+v %v", m, err)
	}
	if out := colls("list"); !strings.Contains(out, "kb") || !strings.Contains(out, "facts") {
		t.Fatalf("collections list: %q", out)
	}
	if out := colls("describe", "--collection", "kb"); !strings.Contains(out, "3 memories stored") {
		t.Fatalf("collections describe: %q", out)
	}
	if err := runCollections(append([]string{"drop"}, kb...), io.Discard, io.Discard); err == nil {
		t.Fatal("drop without --yes")
	}
	if out := colls("drop", "--collection", "kb", "--yes"); !strings.Contains(out, "dropped kb") {
		t.Fatalf("collections drop: %q", out)
	}
	var help bytes.Buffer
	runPut([]string{"-h"}, io.Discard, &help)
	if !strings.Contains(help.String(), "JSON Lines: one memory per line") || !strings.Contains(help.String(), "meta.KEY") {
		t.Fatalf("put -h does not say what a line holds: %q", help.String())
	}
	var errb bytes.Buffer
	if err := runSearch([]string{"--addr", ts.URL, "--token", "wrong-token-000000000", "--collection", "facts", "--vector", "1,0,0"}, io.Discard, &errb); err == nil ||
		!strings.Contains(err.Error(), "unauthenticated") {
		t.Fatalf("a wrong token: %v", err)
	}
}

// A config file sets flags the command line leaves alone; unknown keys are
// errors.
func TestServeConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tidemark.json")
	if err := os.WriteFile(cfg, []byte(`{"addr":"127.0.0.1:9999","timeout":"5s","max-body":1024}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := newFlags("serve", io.Discard)
	addr := fs.String("addr", "x", "")
	timeout := fs.Duration("timeout", 0, "")
	maxBody := fs.Int64("max-body", 0, "")
	fs.String("config", "", "")
	if err := fs.Parse([]string{"--addr", "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	if err := applyConfig(fs, cfg); err != nil {
		t.Fatal(err)
	}
	if *addr != "127.0.0.1:1" || timeout.String() != "5s" || *maxBody != 1024 {
		t.Fatalf("addr %s, timeout %v, max-body %d", *addr, *timeout, *maxBody)
	}
	if err := os.WriteFile(cfg, []byte(`{"adr":"typo"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := applyConfig(fs, cfg); err == nil {
		t.Fatal("an unknown setting was accepted")
	}
}
