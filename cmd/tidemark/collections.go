package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tidemark/tidemark/api"
	"github.com/tidemark/tidemark/client"
)

// runCollections is "tidemark collections create|list|describe|drop".
func runCollections(args []string, stdout, stderr io.Writer) error {
	usage := func() error {
		fmt.Fprintln(stderr, `usage: tidemark collections create|list|describe|drop [flags]

  create    create a collection (--collection, --dim, --embedder, …; "tidemark collections create -h")
  list      the collections the token may read, with their sizes
  describe  one collection's options and sizes (--collection)
  drop      drop a collection and every memory in it (--collection, and --yes to confirm)`)
		return errUsage
	}
	if len(args) == 0 {
		return usage()
	}
	switch args[0] {
	case "create":
		return runCreate(args[1:], stdout, stderr)
	case "list":
		fs := newFlags("collections list", stderr)
		addr, token, _, asJSON := remoteFlags(fs) // (--collection is not needed)
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if *token == "" {
			return errors.Join(errUsage, errors.New("--token (or TIDEMARK_TOKEN) is required"))
		}
		cs, err := client.New(*addr, *token).Collections(context.Background())
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(api.CollectionList{Collections: cs})
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "name\tdim\tembedder\tmethod\tstored\tvisible")
		for _, c := range cs {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d\n", c.Name, c.Dim, orNone(c.Embedder), c.Method, c.Stored, c.Visible)
		}
		return tw.Flush()
	case "describe", "drop":
		fs := newFlags("collections "+args[0], stderr)
		addr, token, coll, asJSON := remoteFlags(fs)
		yes := fs.Bool("yes", false, "drop: confirm (the collection's memories are gone for good)")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if err := needRemote(fs, stderr, *token, *coll); err != nil {
			return err
		}
		cl := client.New(*addr, *token)
		if args[0] == "drop" {
			if !*yes {
				return errors.Join(errUsage, fmt.Errorf("dropping %s erases its memories: add --yes", *coll))
			}
			if err := cl.DropCollection(context.Background(), *coll); err != nil {
				return err
			}
			if *asJSON {
				return json.NewEncoder(stdout).Encode(api.Dropped{Dropped: *coll})
			}
			fmt.Fprintf(stdout, "dropped %s\n", *coll)
			return nil
		}
		c, err := cl.Collection(context.Background(), *coll)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(c)
		}
		fmt.Fprintf(stdout, "%s: dim %d, method %s, embedder %s, keys %s, split %s; %d memories stored, %d visible\n",
			c.Name, c.Dim, c.Method, orNone(c.Embedder), c.Keys, c.Split, c.Stored, c.Visible)
		if c.Remote != nil {
			fmt.Fprintf(stdout, "  remote embedder: %s, model %s, key from $%s\n", c.Remote.BaseURL, c.Remote.Model, orNone(c.Remote.APIKeyEnv))
		}
		return nil
	}
	return usage()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
