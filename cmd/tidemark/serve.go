package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/server"
)

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	data := fs.String("data", "./data", "data directory (created when missing)")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	tokens := fs.String("tokens", os.Getenv("TIDEMARK_TOKENS"), "token file: a JSON array of {token, name, collections, write} (env TIDEMARK_TOKENS); without one, an admin token is generated and printed")
	maxBody := fs.Int64("max-body", 32<<20, "request body limit in bytes")
	timeout := fs.Duration("timeout", 30*time.Second, "per-request timeout")
	consolidate := fs.Duration("consolidate-every", 0, "run consolidation in the background at this interval (0: never)")
	if err := parse(fs, args); err != nil {
		return err
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
	db, err := tidemark.Open(*data, &tidemark.Options{ConsolidateEvery: *consolidate})
	if err != nil {
		return err
	}
	log.Info("opened", "data", *data, "recovery", fmt.Sprintf("%+v", db.Recovery()))
	srv, err := server.New(db, server.Config{Tokens: toks, MaxBodyBytes: *maxBody, RequestTimeout: *timeout, Logger: log})
	if err != nil {
		db.Close()
		return err
	}
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
