package eval_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/temporal"
)

// A fact that changed: tidemark answers with the current value, and with
// the old one when asked as of a time it held.
func ExampleRun() {
	corpus, err := eval.ReadCorpus(strings.NewReader(`
{"id":"limit-v1","text":"The API rate limit is 100 requests per minute.","subject":"api","relation":"rate limit","object":"100","valid_from":"2024-01-01T00:00:00Z"}
{"id":"limit-v2","text":"The API rate limit was raised to 1000 per minute.","subject":"api","relation":"rate limit","object":"1000","valid_from":"2025-01-01T00:00:00Z"}
{"id":"cats","text":"Cats sleep most of the day."}
`))
	if err != nil {
		panic(err)
	}
	queries, err := eval.ReadQueries(strings.NewReader(`
{"id":"now","text":"what is the api rate limit per minute","now":"2026-01-01T00:00:00Z","gold":["limit-v2"],"stale":["limit-v1"],"type":"current"}
{"id":"then","text":"what is the api rate limit per minute","now":"2026-01-01T00:00:00Z","as_of":"2024-06-01T00:00:00Z","gold":["limit-v1"],"type":"as_of"}
`))
	if err != nil {
		panic(err)
	}
	for _, m := range []temporal.Method{temporal.MethodPlain, temporal.MethodTidemark} {
		mem, err := eval.NewMemory(&eval.MemoryOptions{Method: m})
		if err != nil {
			panic(err)
		}
		rep, err := eval.Run(context.Background(), mem, corpus, queries, m.String())
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-8s accuracy@1 %.2f  stale rate %.2f  top-1 %s, %s\n", rep.Method, rep.AccuracyAt1, rep.StaleRate,
			rep.PerQuery[0].Ranked[0], rep.PerQuery[1].Ranked[0])
	}
	// Output:
	// plain    accuracy@1 0.50  stale rate 0.50  top-1 limit-v1, limit-v1
	// tidemark accuracy@1 1.00  stale rate 0.00  top-1 limit-v2, limit-v1
}
