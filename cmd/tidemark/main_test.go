package main

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestDemoPrintsPublishedScores(t *testing.T) {
	code, out, errOut := runCLI("demo")
	if code != 0 {
		t.Fatalf("demo exited %d: %s", code, errOut)
	}
	for _, s := range []string{"SCENARIO 1", "SCENARIO 4", "1.079", "0.573", "0.509", "0.641", "0.465", "0.082",
		"EXPIRED_VERSIONED_DOC"} {
		if !strings.Contains(out, s) {
			t.Errorf("demo output lacks %q", s)
		}
	}
}

func TestDemoJSON(t *testing.T) {
	code, out, errOut := runCLI("demo", "--json", "--method", "tidemark")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Method    string `json:"method"`
		Scenarios []struct {
			Temporal []struct {
				ID    string  `json:"id"`
				Score float64 `json:"score"`
			} `json:"temporal"`
			Masked []struct {
				ID     string `json:"id"`
				Reason string `json:"reason"`
			} `json:"masked"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if v.Method != "tidemark" || len(v.Scenarios) != 4 {
		t.Fatalf("method %q, %d scenarios", v.Method, len(v.Scenarios))
	}
	for i, s := range v.Scenarios {
		for _, h := range s.Temporal {
			if h.ID == "policy_v1" || h.ID == "tutorial_old" {
				t.Errorf("scenario %d: tidemark ranked expired %s", i+1, h.ID)
			}
		}
		if len(s.Masked) == 0 || s.Masked[0].Reason != "EXPIRED_VERSIONED_DOC" {
			t.Errorf("scenario %d: masked %v", i+1, s.Masked)
		}
	}
}

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "Usage"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"demo", "--nope"}, 2, "flag provided but not defined"},
		{[]string{"demo", "extra"}, 2, "unexpected arguments"},
		{[]string{"demo", "--method", "bm25"}, 1, "unknown method"},
		{[]string{"help"}, 0, "Commands"},
		{[]string{"demo", "-h"}, 0, "-method"},
	} {
		code, _, errOut := runCLI(c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d stderr %q, want %d containing %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI("version")
	if code != 0 || !strings.HasPrefix(out, "tidemark ") {
		t.Errorf("version: %d %q", code, out)
	}
	code, out, _ = runCLI("version", "--json")
	var v map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["version"] == "" || v["go"] == "" {
		t.Errorf("version --json: %d %q", code, out)
	}
}

// Every command run dispatches appears, one line each, in the usage and in
// the package documentation; every workload "tidemark bench" dispatches
// appears in its usage, in the bench command's summary and in the package
// documentation's bench line.
func TestHelpListsEveryCommand(t *testing.T) {
	_, _, help := runCLI("help")
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	var benchSummary string
	for _, c := range commands() {
		if !hasLine(help, "  "+c.name+" ") {
			t.Errorf("usage has no line for command %q:\n%s", c.name, help)
		}
		if !hasLine(doc, "\t"+c.name+" ") {
			t.Errorf("package documentation has no line for command %q", c.name)
		}
		if c.name == "bench" {
			benchSummary = c.summary
		}
	}
	docBench := ""
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "\tbench ") {
			docBench = l
		}
	}
	code, _, benchHelp := runCLI("bench")
	if code != 2 {
		t.Errorf("bench without a workload exited %d, want 2", code)
	}
	for _, w := range workloads() {
		if !hasLine(benchHelp, "  "+w.name+" ") {
			t.Errorf("bench usage has no line for workload %q:\n%s", w.name, benchHelp)
		}
		if !strings.Contains(benchSummary, w.name) {
			t.Errorf("the bench command's summary does not name workload %q: %s", w.name, benchSummary)
		}
		if !strings.Contains(docBench, w.name) {
			t.Errorf("the package documentation's bench line does not name workload %q: %s", w.name, docBench)
		}
	}
}

// hasLine reports whether a line of s starts with prefix.
func hasLine(s, prefix string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
