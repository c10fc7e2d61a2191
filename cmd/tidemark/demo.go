package main

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/tidemark/tidemark/internal/demo"
	"github.com/tidemark/tidemark/temporal"
)

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", stderr)
	method := fs.String("method", "article", "scoring method: "+methodList())
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	m, err := temporal.ParseMethod(*method)
	if err != nil {
		return err
	}
	corpus, err := demo.Load()
	if err != nil {
		return err
	}
	cfg := demo.ArticleConfig()
	cfg.Params = temporal.Preset(m)
	scenarios, err := demo.Run(corpus, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Method    string          `json:"method"`
			Scenarios []demo.Scenario `json:"scenarios"`
		}{m.String(), scenarios})
	}
	return demo.Write(stdout, m.String(), scenarios)
}

func methodList() string {
	var names []string
	for _, m := range temporal.Methods() {
		names = append(names, m.String())
	}
	return strings.Join(names, ", ")
}
