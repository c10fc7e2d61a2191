package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/cuda"
	"github.com/tidemark/tidemark/internal/pgstore"
	"github.com/tidemark/tidemark/kernels"
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
	data := fs.String("data", "./data", "data directory (created when missing; 0700); with --store, only the node's caches")
	storeURL := fs.String("store", "", "keep the ledger in PostgreSQL at this URL (postgres://user:pass@host/db or key=value; needs the btree_gist extension available) instead of the local log in --data: any number of nodes may serve one database")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	tokens := fs.String("tokens", os.Getenv("TIDEMARK_TOKENS"), "token file: a JSON array of {hash, name, collections, write, metrics} as \"tidemark token\" writes it (env TIDEMARK_TOKENS); without one, an admin token is generated and printed")
	maxBody := fs.Int64("max-body", 32<<20, "request body limit in bytes")
	maxResponse := fs.Int("max-response", 32<<20, "answer limit in bytes (a larger answer is refused with 413)")
	timeout := fs.Duration("timeout", 30*time.Second, "per-request timeout")
	headerTimeout := fs.Duration("header-timeout", server.DefaultHeaderTimeout, "time a client has to send a request's headers")
	bodyTimeout := fs.Duration("body-timeout", server.DefaultBodyTimeout, "time a client has to send a request's body")
	idleTimeout := fs.Duration("idle-timeout", server.DefaultIdleTimeout, "idle keep-alive connections are closed after this")
	maxConns := fs.Int("max-conns", server.DefaultMaxConns, "open connections at most")
	maxClientConns := fs.Int("max-client-conns", server.DefaultMaxClientConns, "open connections from one client address at most")
	grace := fs.Duration("shutdown-grace", 10*time.Second, "on SIGTERM, time requests in flight get before their connections are closed")
	tlsCert := fs.String("tls-cert", "", "PEM certificate: serve HTTPS only (with --tls-key)")
	tlsKey := fs.String("tls-key", "", "PEM private key of --tls-cert")
	consolidate := fs.Duration("consolidate-every", 0, "run consolidation in the background at this interval (0: never)")
	embedURLs := fs.String("embedder-urls", "", "comma-separated base URL prefixes that collections created over HTTP may embed through (e.g. http://localhost:11434/); default none")
	embedKeys := fs.String("embedder-key-envs", "", "comma-separated names of environment variables that remote embedders may read an API key from (e.g. OPENAI_API_KEY); default none")
	backend := fs.String("backend", "cpu", "the fused scoring stage: cpu; cuda (the GPU, through libcuda: $TIDEMARK_LIBCUDA or "+cuda.DefaultLibrary+"; fails without one); auto (cuda when a device is usable, else cpu; \"tidemark gpu-info\" says which and why)")
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
		var err error
		if toks, err = readTokens(*tokens, log); err != nil {
			return err
		}
	} else {
		secret, hash, err := server.NewSecret()
		if err != nil {
			return err
		}
		toks = []server.Token{{Hash: hash, Name: "admin", Collections: []string{"*"}, Write: true, Metrics: true}}
		fmt.Fprintf(stdout, "admin token (this run only): %s\n", secret)
	}
	var tlsConf *tls.Config
	if (*tlsCert == "") != (*tlsKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if *tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(*tlsCert, *tlsKey)
		if err != nil {
			return err
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	// The server exists only after the DB is open; fsyncs before that are
	// not observed.
	var srvp atomic.Pointer[server.Server]
	onSync := func(d time.Duration) {
		if s := srvp.Load(); s != nil {
			s.ObserveSync(d)
		}
	}
	onCkpt := func(err error) {
		log.Error("background checkpoint failed: the log grows until one succeeds", "error", err.Error())
	}
	be, closeBackend, err := openBackend(*backend, log)
	if err != nil {
		return err
	}
	defer closeBackend()
	dbOpts := &tidemark.Options{ConsolidateEvery: *consolidate, OnSync: onSync, OnCheckpointError: onCkpt, Backend: be}
	var db *tidemark.DB
	if *storeURL != "" {
		octx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		db, err = tidemark.OpenPostgres(octx, *storeURL, *data, dbOpts)
		cancel()
		if err != nil {
			return fmt.Errorf("--store %s: %w", pgstore.Redacted(*storeURL), err)
		}
		log.Info("opened", "store", pgstore.Redacted(*storeURL), "cache", *data, "recovery", fmt.Sprintf("%+v", db.Recovery()))
	} else {
		db, err = tidemark.Open(*data, dbOpts)
		if err != nil {
			return err
		}
		log.Info("opened", "data", *data, "recovery", fmt.Sprintf("%+v", db.Recovery()))
	}
	srv, err := server.New(db, server.Config{Tokens: toks, MaxBodyBytes: *maxBody, MaxResponseBytes: *maxResponse, RequestTimeout: *timeout,
		HeaderTimeout: *headerTimeout, BodyTimeout: *bodyTimeout, IdleTimeout: *idleTimeout, MaxConns: *maxConns, MaxClientConns: *maxClientConns,
		TLS: tlsConf, Logger: log, EmbedderURLs: splitList(*embedURLs), EmbedderKeyEnvs: splitList(*embedKeys)})
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
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(stdout, "listening on %s://%s\n", scheme, ln.Addr())
	err = srv.Serve(ctx, ln, *grace)
	// Close writes a final snapshot after the log's last record.
	return errors.Join(err, db.Close())
}

// readTokens reads a tokens file, warning about what weakens it: a file
// others may read, secrets kept in plain text.
func readTokens(path string, log *slog.Logger) ([]server.Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().Perm()&0o077 != 0 {
		log.Warn("the tokens file may be read by other users: chmod 600 it", "file", path, "mode", st.Mode().Perm().String())
	}
	var toks []server.Token
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&toks); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, t := range toks {
		if t.Token != "" {
			log.Warn("a token's secret is stored in plain text: mint a hashed one with \"tidemark token\"", "file", path, "token", t.Name)
		}
	}
	return toks, nil
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

// openBackend returns the fused stage --backend names and its release:
// the CPU, the GPU (an error when there is none), or the GPU when one is
// usable and the CPU otherwise, with the reason logged.
func openBackend(name string, log *slog.Logger) (kernels.Backend, func(), error) {
	switch name {
	case "cpu":
		return kernels.DefaultCPU(), func() {}, nil
	case "cuda", "auto":
		dev, err := cuda.Open(nil)
		if err != nil {
			if name == "auto" {
				log.Info("fused stage on the CPU", "reason", err.Error())
				return kernels.DefaultCPU(), func() {}, nil
			}
			return nil, nil, fmt.Errorf("--backend cuda: %w", err)
		}
		be := cuda.NewBackend(dev, nil)
		log.Info("fused stage on the GPU", "device", dev.Info().Device, "compute_capability", dev.Info().ComputeCapability)
		return be, func() { be.Close(); dev.Close() }, nil
	}
	return nil, nil, fmt.Errorf("--backend %q: want cpu, cuda or auto", name)
}
