// Package planner asks a language model, through any OpenAI-compatible
// chat-completions endpoint (POST {base}/chat/completions), for All-Mem's
// consolidation proposals (seed 002, App. C.1 and B.6): a diagnosis of
// Split, Merge and Update targets with confidences, and the segments of a
// Split. It only asks and parses: the answers are JSON plans that the
// engine's deterministic executor gates by confidence and checks rule by
// rule before it edits anything, so a wrong, malformed or slow answer
// costs a no-op, never an edit. The model is never on the read path.
//
// A Client is safe for concurrent use.
package planner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrPlanner reports a failed request or an answer that is not a plan; it
// wraps the cause.
var ErrPlanner = errors.New("planner")

// Options configure a Client.
type Options struct {
	// BaseURL is the endpoint's base, e.g. "https://api.openai.com/v1" or
	// "http://localhost:11434/v1" (required).
	BaseURL string
	// Model is the chat model (required).
	Model string
	// APIKeyEnv names the environment variable holding the bearer key,
	// read at each request ("" for none); the key is never logged or put
	// in an error.
	APIKeyEnv string
	// Timeout bounds one request (default 30 s).
	Timeout time.Duration
	// MaxRetries bounds the retries of a request answered 429 or 5xx
	// (default 2; Retry-After is honoured up to 10 s).
	MaxRetries int
	// HTTPClient is the client to use (default a fresh http.Client).
	HTTPClient *http.Client
}

// Client asks one model.
type Client struct {
	opts     Options
	endpoint string
	http     *http.Client
}

// MaxAnswerBytes bounds an answer's body.
const MaxAnswerBytes = 1 << 20

// New checks the options and returns a client.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.BaseURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("%w: base URL %q, want an http or https URL", ErrPlanner, o.BaseURL)
	case u.User != nil || u.RawQuery != "":
		return nil, fmt.Errorf("%w: the base URL must hold no credentials or query", ErrPlanner)
	case o.Model == "":
		return nil, fmt.Errorf("%w: no model", ErrPlanner)
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 2
	}
	c := &Client{opts: o, endpoint: strings.TrimRight(o.BaseURL, "/") + "/chat/completions", http: o.HTTPClient}
	if c.http == nil {
		c.http = &http.Client{}
	}
	return c, nil
}

// Node is a memory as the model sees it.
type Node struct {
	ID   string    `json:"node_id"`
	Text string    `json:"text"`
	Time time.Time `json:"timestamp"`
}

// Diagnosis is All-Mem's diagnosis answer (App. C.1, its output schema).
type Diagnosis struct {
	Split  []SplitTask  `json:"split_tasks"`
	Merge  []MergeTask  `json:"merge_tasks"`
	Update []UpdateTask `json:"update_tasks"`
}

// SplitTask proposes splitting one memory.
type SplitTask struct {
	NodeID     string  `json:"node_id"`
	Reason     string  `json:"reason"`
	Confidence float64 `json:"confidence"`
}

// MergeTask proposes merging 2 to 4 redundant memories.
type MergeTask struct {
	NodeIDs    []string `json:"node_ids"`
	Reason     string   `json:"reason"`
	Confidence float64  `json:"confidence"`
}

// UpdateTask proposes that NewNodeID supersedes OldNodeID.
type UpdateTask struct {
	OldNodeID  string  `json:"old_node_id"`
	NewNodeID  string  `json:"new_node_id"`
	Reason     string  `json:"reason"`
	Confidence float64 `json:"confidence"`
}

// SplitPlan is All-Mem's Split plan (App. B.6.1).
type SplitPlan struct {
	DoSplit  bool      `json:"do_split"`
	Segments []Segment `json:"segments"`
}

// Segment is one proposed segment of a Split.
type Segment struct {
	Text string `json:"segment_text"`
}

// The prompts, abridged from All-Mem App. C.1 and B.6.1.
const (
	diagnoseSystem = `You are a senior memory archivist. Output VALID JSON only, with the keys split_tasks, merge_tasks and update_tasks.
SPLIT only a node that contains several unrelated statements (multi-domain noise); never split a chronological sequence, a story, a dialogue or a coherent paragraph (confidence 0.0 then).
MERGE only nodes that are factually redundant static statements about the exact same entity; never merge conflicting states from different times; at most 4 node ids per task.
UPDATE only when the target explicitly contradicts or supersedes an existing node; no mere refinement.
Schema: {"split_tasks":[{"node_id":"...","reason":"...","confidence":0.0}],"merge_tasks":[{"node_ids":["...","..."],"reason":"...","confidence":0.0}],"update_tasks":[{"old_node_id":"...","new_node_id":"...","reason":"...","confidence":0.0}]}`
	splitSystem = `You are an exacting memory editor. Output VALID JSON only.
Perform "Semantic Mitosis" (Split) on one memory node. Split ONLY if it holds distinct, separately statable facts. Each segment_text MUST be a contiguous substring copied EXACTLY from the original text: no paraphrase, no added words. If the text is a continuous narrative, return do_split false. If you split, the segments must cover the whole text, in order, without overlap. Use the smallest number of segments.
Schema: {"do_split":true,"segments":[{"segment_text":"..."}],"split_rationale":"..."}`
)

// Diagnose asks for the Split, Merge and Update tasks around target,
// given its neighbourhood (All-Mem's local context x_b).
func (c *Client) Diagnose(ctx context.Context, target Node, context []Node) (Diagnosis, error) {
	user, err := json.Marshal(struct {
		Context []Node `json:"retrieved_context_nodes"`
		Target  Node   `json:"target_input"`
	}{context, target})
	if err != nil {
		return Diagnosis{}, fmt.Errorf("%w: %w", ErrPlanner, err)
	}
	var d Diagnosis
	if err := c.ask(ctx, diagnoseSystem, string(user), &d); err != nil {
		return Diagnosis{}, err
	}
	return d, nil
}

// PlanSplit asks for the segments of a Split of target.
func (c *Client) PlanSplit(ctx context.Context, target Node, reason string) (SplitPlan, error) {
	user, err := json.Marshal(struct {
		Text   string `json:"original_text"`
		Reason string `json:"reason_for_split"`
	}{target.Text, reason})
	if err != nil {
		return SplitPlan{}, fmt.Errorf("%w: %w", ErrPlanner, err)
	}
	var p SplitPlan
	if err := c.ask(ctx, splitSystem, string(user), &p); err != nil {
		return SplitPlan{}, err
	}
	return p, nil
}

type chatRequest struct {
	Model          string            `json:"model"`
	Messages       []chatMessage     `json:"messages"`
	Temperature    float64           `json:"temperature"`
	ResponseFormat map[string]string `json:"response_format"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatAnswer struct {
	Choices []struct {
		Message chatMessage `json:"message"`
	} `json:"choices"`
}

// ask sends one chat exchange (temperature 0, JSON mode) and decodes the
// answer's content into out, retrying 429 and 5xx.
func (c *Client) ask(ctx context.Context, system, user string, out any) error {
	body, err := json.Marshal(chatRequest{Model: c.opts.Model, Temperature: 0, ResponseFormat: map[string]string{"type": "json_object"},
		Messages: []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}}})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPlanner, err)
	}
	for attempt := 0; ; attempt++ {
		content, retryAfter, err := c.try(ctx, body)
		if err == nil {
			return decodePlan(content, out)
		}
		if retryAfter < 0 || attempt >= c.opts.MaxRetries {
			return err
		}
		t := time.NewTimer(retryAfter)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %s: %w (last: %w)", ErrPlanner, c.endpoint, ctx.Err(), err)
		}
	}
}

// try makes one request; retryAfter ≥ 0 says the error may be retried
// after that long.
func (c *Client) try(ctx context.Context, body []byte) (content string, retryAfter time.Duration, err error) {
	fail := func(format string, args ...any) (string, time.Duration, error) {
		return "", -1, fmt.Errorf("%w: %s: "+format, append([]any{ErrPlanner, c.endpoint}, args...)...)
	}
	var key string
	if name := c.opts.APIKeyEnv; name != "" {
		if key = os.Getenv(name); key == "" {
			return fail("environment variable %s is not set", name)
		}
	}
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return fail("%s", scrub(err.Error(), key))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "tidemark-planner")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if actx.Err() != nil && ctx.Err() == nil {
			return fail("no answer within %v", c.opts.Timeout)
		}
		return fail("%s", scrub(err.Error(), key))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return fail("reading the answer: %s", scrub(err.Error(), key))
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		wait := time.Second
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			wait = min(time.Duration(s)*time.Second, 10*time.Second)
		}
		return "", wait, fmt.Errorf("%w: %s: HTTP %d", ErrPlanner, c.endpoint, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return fail("HTTP %d", resp.StatusCode)
	}
	if len(b) > MaxAnswerBytes {
		return fail("answer over %d bytes", MaxAnswerBytes)
	}
	var a chatAnswer
	if err := json.Unmarshal(b, &a); err != nil || len(a.Choices) == 0 {
		return fail("not a chat-completions answer")
	}
	return a.Choices[0].Message.Content, 0, nil
}

// decodePlan decodes a model's JSON answer strictly: one object of the
// asked shape (a ```json fence around it is tolerated), nothing after it.
func decodePlan(content string, out any) error {
	s := strings.TrimSpace(content)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	d := json.NewDecoder(strings.NewReader(s))
	if err := d.Decode(out); err != nil {
		return fmt.Errorf("%w: the answer is not the JSON plan asked for: %w", ErrPlanner, err)
	}
	if d.More() {
		return fmt.Errorf("%w: text after the JSON plan", ErrPlanner)
	}
	return nil
}

// scrub removes the key from a message.
func scrub(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[key]")
}
