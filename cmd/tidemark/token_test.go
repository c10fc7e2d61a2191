package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/server"
)

// "tidemark token" prints a secret once and stores only its hash, in a
// file only its owner reads; serve's reader takes the file, warns about a
// plain secret or a readable file, and the printed secret authenticates.
func TestTokenCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.json")
	var out, errb bytes.Buffer
	if err := runToken([]string{"--file", file, "--name", "ops", "--write"}, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	secret := strings.TrimSpace(out.String())
	if err := server.CheckSecret(secret); err != nil {
		t.Fatalf("minted %q: %v", secret, err)
	}
	if err := runToken([]string{"--file", file, "--name", "ops"}, io.Discard, io.Discard); err == nil {
		t.Fatal("a second token named ops was added")
	}
	out.Reset()
	if err := runToken([]string{"--file", file, "--name", "scraper", "--metrics", "--collections", ""}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(file)
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), server.HashSecret(secret)) || st.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file (%v): %s", st.Mode().Perm(), b)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	toks, err := readTokens(file, log)
	if err != nil || len(toks) != 2 || logs.Len() != 0 {
		t.Fatalf("read %d tokens, %v, logs %q", len(toks), err, logs.String())
	}
	db, err := tidemark.Open(t.TempDir(), &tidemark.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := server.New(db, server.Config{Tokens: toks, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for tok, want := range map[string]int{secret: 200, strings.TrimSpace(out.String()): 403} {
		req, _ := http.NewRequest("GET", ts.URL+"/v1/collections", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("token %q…: %d, want %d", tok[:6], res.StatusCode, want)
		}
	}
	// A plain secret in a file others may read: two warnings.
	plain := filepath.Join(t.TempDir(), "plain.json")
	os.WriteFile(plain, []byte(`[{"token":"`+secret+`","name":"old","collections":["*"]}]`), 0o644)
	os.Chmod(plain, 0o644)
	logs.Reset()
	if _, err := readTokens(plain, log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "plain text") || !strings.Contains(logs.String(), "chmod 600") {
		t.Fatalf("no warnings: %s", logs.String())
	}
}
