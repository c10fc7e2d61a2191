package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/tidemark/tidemark"
)

func runConsolidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("consolidate", stderr)
	data := fs.String("data", "", "data directory (required)")
	coll := fs.String("collection", "", "only this collection (default every one)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" {
		fmt.Fprintln(stderr, "tidemark consolidate: --data is required")
		fs.Usage()
		return errUsage
	}
	if _, err := os.Stat(*data); err != nil {
		return err
	}
	db, err := tidemark.Open(*data, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var reps []tidemark.ConsolidationReport
	if *coll != "" {
		c, err := db.Collection(*coll)
		if err != nil {
			return err
		}
		r, err := c.Consolidate(ctx, nil)
		if err != nil {
			return err
		}
		reps = append(reps, r)
	} else if reps, err = db.Consolidate(ctx, nil); err != nil {
		return err
	}
	if *asJSON {
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		return e.Encode(reps)
	}
	for _, r := range reps {
		fmt.Fprintf(stdout, "%s: promoted %d, dormant %d, reactivated %d, expired %d, contradictions %d, ripples %d, orphans %d (%v)\n",
			r.Collection, r.Promoted, r.Dormant, r.Reactivated, r.Expired, r.Contradictions, r.Ripples, len(r.Orphans), r.Duration.Round(1000))
	}
	return db.Close()
}
