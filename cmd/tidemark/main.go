// Command tidemark is the command-line front end of tidemark, a
// temporal-aware vector memory: it answers "what is similar and still true".
//
// Usage:
//
//	tidemark <command> [flags]
//
// Commands:
//
//	bench        benchmarks: kernels, ann, engine, scale, filter, consolidate, serve, cluster, quality ("tidemark bench" lists them)
//	consolidate  run one consolidation cycle on a data directory: lifecycle, expiry, contradictions, ripples, audit
//	demo         the Temporal RAG article's four scenarios: naive cosine versus temporal scoring
//	serve        the HTTP/JSON service on a data directory (bearer tokens; /v1, /healthz, /readyz)
//	token        mint a bearer token: print its secret once, store its hash in a tokens file
//	collections  manage a running server's collections: create, list, describe, drop
//	create       create a collection on a running server (the same as "collections create")
//	put          upload memories (JSON Lines) to a running server
//	search       search a collection on a running server
//	history      the versions of a memory on a running server
//	list         list or count a collection's memories on a running server
//	retract      retract a memory on a running server (its earlier version holds again)
//	purge        erase a memory's text and vector on a running server (privacy requests)
//	eval         the evaluation contract: ingest a corpus, run queries, print accuracy, MRR, stale rate, ECE
//	gpu-info     which fused-stage backend runs here (cuda or cpu) and why; the GPU's name, memory, compute capability
//	version      print the version
//
// Run "tidemark <command> -h" for a command's flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"bench", "benchmarks: kernels, ann, engine, scale, filter, consolidate, serve, cluster, quality (\"tidemark bench\" lists them)", runBench},
		{"consolidate", "run one consolidation cycle on a data directory: lifecycle, expiry, contradictions, ripples, audit", runConsolidate},
		{"demo", "the Temporal RAG article's four scenarios: naive cosine versus temporal scoring", runDemo},
		{"serve", "the HTTP/JSON service on a data directory (bearer tokens; /v1, /healthz, /readyz)", runServe},
		{"token", "mint a bearer token: print its secret once, store its hash in a tokens file", runToken},
		{"collections", "manage a running server's collections: create, list, describe, drop", runCollections},
		{"create", "create a collection on a running server (the same as \"collections create\")", runCreate},
		{"put", "upload memories (JSON Lines) to a running server (--addr, --token, --collection)", runPut},
		{"search", "search a collection on a running server", runSearch},
		{"history", "the versions of a memory on a running server", runHistory},
		{"list", "list or count a collection's memories on a running server, a page at a time or all of them", runList},
		{"retract", "retract a memory on a running server: no longer believed from now on (its earlier version holds again)", runRetract},
		{"purge", "erase a memory's text and vector on a running server (privacy requests; gone from every file at the next checkpoint)", runPurge},
		{"eval", "the evaluation contract: ingest a corpus, run queries, print accuracy, MRR, stale rate, ECE", runEval},
		{"gpu-info", "which fused-stage backend runs here (cuda or cpu) and why; the GPU's name, memory, compute capability", runGPUInfo},
		{"version", "print the version", runVersion},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command and returns the process exit code: 0 on success,
// 2 for a usage error, 1 for any other failure.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, errUsage):
				return 2
			}
			fmt.Fprintf(stderr, "tidemark %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "tidemark: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// errUsage marks an error already reported by the flag package.
var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprintln(w, "tidemark — a temporal-aware vector memory: what is similar and still true.")
	fmt.Fprintln(w, "\nUsage: tidemark <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
}

// newFlags returns a flag set that reports errors to stderr and returns
// them instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("tidemark "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args and maps a flag error to errUsage.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %v\n", fs.Args())
		return errUsage
	}
	return nil
}
