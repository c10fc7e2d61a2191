package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/server"
)

// applyConfig sets the flags a JSON config file names, except those given
// on the command line.
func applyConfig(fs *flag.FlagSet, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var kv map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&kv); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for k, v := range kv {
		if fs.Lookup(k) == nil || k == "config" {
			return fmt.Errorf("%s: unknown setting %q", path, k)
		}
		if given[k] {
			continue
		}
		if err := fs.Set(k, fmt.Sprint(v)); err != nil {
			return fmt.Errorf("%s: %s: %w", path, k, err)
		}
	}
	return nil
}

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	data := fs.String("data", "./data", "data directory (created when missing)")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	tokens := fs.String("tokens", os.Getenv("TIDEMARK_TOKENS"), "token file: a JSON array of {token, name, collections, write} (env TIDEMARK_TOKENS); without one, an admin token is generated and printed")
	maxBody := fs.Int64("max-body", 32<<20, "request body limit in bytes")
	timeout := fs.Duration("timeout", 30*time.Second, "per-request timeout")
	consolidate := fs.Duration("consolidate-every", 0, "run consolidation in the background at this interval (0: never)")
	embedURLs := fs.String("embedder-urls", "", "comma-separated base URL prefixes that collections created over HTTP may embed through (e.g. http://localhost:11434/); default none")
	embedKeys := fs.String("embedder-key-envs", "", "comma-separated names of environment variables that remote embedders may read an API key from (e.g. OPENAI_API_KEY); default none")
	config := fs.String("config", os.Getenv("TIDEMARK_CONFIG"), "optional JSON config file whose keys are these flags' names (env TIDEMARK_CONFIG); flags given on the command line win")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *config != "" {
		if err := applyConfig(fs, *config); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	var toks []server.Token
	if *tokens != "" {
		b, err := os.ReadFile(*tokens)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &toks); err != nil {
			return fmt.Errorf("%s: %w", *tokens, err)
		}
	} else {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		secret := hex.EncodeToString(b[:])
		toks = []server.Token{{Token: secret, Name: "admin", Collections: []string{"*"}, Write: true}}
		fmt.Fprintf(stdout, "admin token (this run only): %s\n", secret)
	}
	// The server exists only after the DB is open; fsyncs before that are
	// not observed.
	var srvp atomic.Pointer[server.Server]
	onSync := func(d time.Duration) {
		if s := srvp.Load(); s != nil {
			s.ObserveSync(d)
		}
	}
	db, err := tidemark.Open(*data, &tidemark.Options{ConsolidateEvery: *consolidate, OnSync: onSync})
	if err != nil {
		return err
	}
	log.Info("opened", "data", *data, "recovery", fmt.Sprintf("%+v", db.Recovery()))
	srv, err := server.New(db, server.Config{Tokens: toks, MaxBodyBytes: *maxBody, RequestTimeout: *timeout, Logger: log,
		EmbedderURLs: splitList(*embedURLs), EmbedderKeyEnvs: splitList(*embedKeys)})
	if err != nil {
		db.Close()
		return err
	}
	srvp.Store(srv)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		db.Close()
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down: finishing requests in flight")
		sctx, cancel := context.WithTimeout(context.Background(), *timeout+5*time.Second)
		err = hs.Shutdown(sctx)
		cancel()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	// Close writes a final snapshot after the log's last record.
	return errors.Join(err, db.Close())
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
