package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tidemark/tidemark/server"
)

// runToken mints a token: it prints the secret once and stores only its
// hash, in the tokens file (created 0600, rewritten atomically).
func runToken(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token", stderr)
	file := fs.String("file", os.Getenv("TIDEMARK_TOKENS"), "tokens file to add the token to (created when missing; env TIDEMARK_TOKENS)")
	name := fs.String("name", "", "the token's name, for logs (required, unique in the file)")
	colls := fs.String("collections", "*", "comma-separated collections the token may use (* for all)")
	write := fs.Bool("write", false, "allow writes")
	metrics := fs.Bool("metrics", false, "allow reading /metrics")
	rate := fs.Float64("rate", 0, "requests per second (0: the server's default)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *file == "" || *name == "" {
		fmt.Fprintln(stderr, "tidemark token: --file and --name are required")
		return errUsage
	}
	var toks []server.Token
	switch b, err := os.ReadFile(*file); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(b, &toks); err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
	}
	for _, t := range toks {
		if t.Name == *name {
			return fmt.Errorf("%s already has a token named %q", *file, *name)
		}
	}
	if splitList(*colls) == nil && !*metrics {
		return fmt.Errorf("a token needs --collections or --metrics")
	}
	secret, hash, err := server.NewSecret()
	if err != nil {
		return err
	}
	toks = append(toks, server.Token{Hash: hash, Name: *name, Collections: splitList(*colls), Write: *write, Metrics: *metrics, Rate: *rate})
	b, err := json.MarshalIndent(toks, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(*file), ".tokens-*") // 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *file); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", secret)
	fmt.Fprintf(stderr, "token %q added to %s (its hash only: the secret above is shown once)\n", *name, *file)
	return nil
}
