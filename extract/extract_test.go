package extract

import (
	"testing"

	"github.com/tidemark/tidemark/temporal"
)

// The paper's evolving examples (MemStrata Appendix B.3–B.6), keyed
// exactly.
func TestKeyPaperExamples(t *testing.T) {
	tests := []struct {
		text string
		want Fact
	}{
		{"The function get_user_by_id(uid) looks up a user record by primary key in the users table.",
			Fact{Subject: "function", Relation: "looks up user record by primary key in users table", Object: "get_user_by_id(uid)"}},
		{"The function load_config() returns the parsed configuration as a dict from settings.yaml.",
			Fact{Subject: "function", Relation: "returns parsed configuration as dict from settings yaml", Object: "load_config()"}},
		{"The function process_payment(amount) charges the customer's card via the Stripe API.",
			Fact{Subject: "function", Relation: "charges customer s card via stripe api", Object: "process_payment(amount)"}},
		{"The SESSION_TIMEOUT setting is 1800 seconds in config.py.",
			Fact{Subject: "session timeout setting", Relation: "is in config py", Object: "1800 seconds"}},
		{"The MAX_UPLOAD_SIZE is set to 10485760 bytes in settings.py.",
			Fact{Subject: "max upload size", Relation: "is in settings py", Object: "10485760 bytes"}},
		{"The database connection pool size is 10 in the production config.",
			Fact{Subject: "database connection pool size", Relation: "is in production config", Object: "10"}},
		{"The project pins numpy==1.24.0 in requirements.txt.",
			Fact{Subject: "project", Relation: "pins numpy in requirements txt", Object: "==1.24.0"}},
		{"The setup.py sets python_requires to >=3.8.",
			Fact{Subject: "setup py", Relation: "sets python requires to", Object: ">=3.8"}},
		{"The user list endpoint is GET /api/v1/users.",
			Fact{Subject: "user list endpoint", Relation: "is", Object: "GET /api/v1/users"}},
		{"The search endpoint filters by the parameter named 'category'.",
			Fact{Subject: "search endpoint", Relation: "filters by parameter named", Object: "category"}},
		{"The auth login route is POST /auth/login.",
			Fact{Subject: "auth login route", Relation: "is", Object: "POST /auth/login"}},
	}
	for _, tt := range tests {
		got, ok := Key(tt.text)
		if got.Rule = ""; !ok || got != tt.want {
			t.Errorf("Key(%q) = %+v, %v; want %+v", tt.text, got, ok, tt.want)
		}
	}
}

// Value shapes and sentence shapes of the package documentation, one each.
func TestKeyShapes(t *testing.T) {
	tests := []struct {
		text string
		want Fact
	}{
		{"The runtime is Python 3.11.", Fact{Subject: "runtime", Relation: "is", Object: "Python 3.11"}},
		{"The frontend depends on react@18.2.0.", Fact{Subject: "frontend", Relation: "depends on react", Object: "18.2.0"}},
		{"The function fetch_user(uid, org) returns the user.", Fact{Subject: "function", Relation: "returns user", Object: "fetch_user(uid, org)"}},
		{"The hook is called useCartTotals.", Fact{Subject: "hook", Relation: "is called", Object: "useCartTotals"}},
		{"8080 is the metrics port.", Fact{Subject: "metrics port", Relation: "is", Object: "8080"}},
		{"The default branch is main.", Fact{Subject: "default branch", Relation: "is", Object: "main"}},
		{"The frontend uses pnpm.", Fact{Subject: "frontend", Relation: "uses", Object: "pnpm"}},
		{"The API uses Redis for caching.", Fact{Subject: "api", Relation: "uses for caching", Object: "Redis"}},
		{"The log level defaults to INFO.", Fact{Subject: "log level", Relation: "defaults to", Object: "INFO"}},
		{"The cron job runs at 02:00 UTC.", Fact{Subject: "cron job", Relation: "runs at", Object: "02:00 UTC"}},
		{"The pool size is currently 12.", Fact{Subject: "pool size", Relation: "is", Object: "12"}},
		{"The pool size has been set to 12.", Fact{Subject: "pool size", Relation: "is", Object: "12"}},
		{"The go.mod requires github.com/gin-gonic/gin v1.9.1.", Fact{Subject: "go mod", Relation: "requires github com gin gonic gin", Object: "v1.9.1"}},
		{"The report generator imports the PDF renderer from reports.pdf.",
			Fact{Subject: "report generator", Relation: "imports pdf renderer from", Object: "reports.pdf"}},
		{"The CLI flag that sets the worker count is --workers.", Fact{Subject: "cli flag that sets worker count", Relation: "is", Object: "--workers"}},
		{"Celery workers prefetch 4 tasks at a time.", Fact{Subject: "celery workers prefetch", Relation: "tasks at time", Object: "4"}},
		// Found by the quality benchmark (an import whose source module
		// changes): the imported name and its source are one value.
		{"The billing module imports parse_money from money_v1.", Fact{Subject: "billing module", Relation: "imports", Object: "parse_money from money_v1"}},
		{"The app loads settings.yaml from /etc/app.", Fact{Subject: "app", Relation: "loads", Object: "settings.yaml from /etc/app"}},
	}
	for _, tt := range tests {
		got, ok := Key(tt.text)
		if got.Rule = ""; !ok || got != tt.want {
			t.Errorf("Key(%q) = %+v, %v; want %+v", tt.text, got, ok, tt.want)
		}
	}
}

// heldOut is a table of sentences written for this test in domains and
// phrasings that the benchmark templates of internal/evolving do not use:
// infrastructure, databases, CI, frontend, ML configuration, HR and
// expense policy. Its misses are kept, not tuned away.
var heldOut = struct {
	// same: both sentences state one fact with different values.
	same [][2]string
	// differ: two different facts; both should key, differently.
	differ [][2]string
	// none: no single value slot; Key must return false.
	none []string
}{
	same: [][2]string{
		{"The checkout deployment runs 4 replicas in the eu-west-1 cluster.", "The checkout deployment runs 6 replicas in the eu-west-1 cluster."},
		{"Postgres max_connections is set to 200 on the primary.", "Postgres max_connections is set to 500 on the primary."},
		{"The nightly backup job starts at 01:30 UTC.", "The nightly backup job starts at 03:15 UTC."},
		{"The CI workflow caches node_modules for 7 days.", "The CI workflow caches node_modules for 14 days."},
		{"The marketing site is built with Vite 5.2.", "The marketing site is built with Vite 6.0."},
		{"The fine-tuning config sets the learning rate to 3e-4.", "The fine-tuning config sets the learning rate to 1e-4."},
		{"The retriever's embedding dimension is 768.", "The retriever's embedding dimension is 1024."},
		{"Full-time staff get 20 days of annual leave.", "Full-time staff get 25 days of annual leave."},
		{"The CDN caches static assets for 3600 seconds.", "The CDN caches static assets for 86400 seconds."},
		{"The load balancer health check path is /healthz.", "The load balancer health check path is /readyz."},
		{"Terraform state is stored in the s3://infra-state/prod bucket.", "Terraform state is stored in the s3://tf-state/prod bucket."},
		{"The mobile app targets iOS 16.", "The mobile app targets iOS 17."},
		{"Meal expenses are reimbursed up to $75 per day.", "Meal expenses are reimbursed up to $90 per day."},
		{"Access tokens expire after 15 minutes.", "Access tokens expire after 60 minutes."},
		{"The orders topic has 12 partitions.", "The orders topic has 24 partitions."},
		{"The data pipeline requires pandas>=2.1 at runtime.", "The data pipeline requires pandas>=2.2 at runtime."},
		{"The build uses Gradle 8.5 with the Kotlin DSL.", "The build uses Gradle 8.7 with the Kotlin DSL."},
		{"The API image is based on python:3.11-slim.", "The API image is based on python:3.12-slim."},
		{"Anonymous clients are limited to 60 requests per minute.", "Anonymous clients are limited to 30 requests per minute."},
		{"The checkout_v2 flag is enabled for 10% of traffic.", "The checkout_v2 flag is enabled for 25% of traffic."},
		{"The disk usage alert fires above 85 percent.", "The disk usage alert fires above 90 percent."},
		{"The default locale is set to 'en-US'.", "The default locale is set to 'de-DE'."},
		{"The service runs on Node 20 in production.", "The service runs on Node 22 in production."},
		{"Celery workers prefetch 4 tasks at a time.", "Celery workers prefetch 8 tasks at a time."},
		// Written after the rules were last changed, measured once (24/25).
		{"The Grafana dashboard refreshes every 30s.", "The Grafana dashboard refreshes every 1m."},
		{"Our VPC uses the 10.20.0.0/16 CIDR block.", "Our VPC uses the 10.40.0.0/16 CIDR block."},
		{"The Snowflake warehouse size is set to MEDIUM.", "The Snowflake warehouse size is set to LARGE."},
		{"Interns are paid 2200 EUR per month.", "Interns are paid 2500 EUR per month."},
		{"The SLA for P1 incidents is 4 hours.", "The SLA for P1 incidents is 2 hours."},
		{"The TLS certificate for api.example.com expires on 2025-11-30.", "The TLS certificate for api.example.com expires on 2026-02-28."},
		{"The orders model is materialized as a view.", "The orders model is materialized as a table."},
		{"The password reset link is valid for 24 hours.", "The password reset link is valid for 48 hours."},
		{"The Stripe webhook signing secret is stored in the PAYMENTS_WEBHOOK_SECRET variable.",
			"The Stripe webhook signing secret is stored in the STRIPE_SIGNING_SECRET variable."},
		{"The on-call rotation hands over every Monday at 10:00.", "The on-call rotation hands over every Monday at 09:00."},
		{"The search cluster runs Elasticsearch 8.11 on three nodes.", "The search cluster runs Elasticsearch 8.13 on three nodes."},
		{"Quarterly bonuses are capped at 15 percent of base salary.", "Quarterly bonuses are capped at 20 percent of base salary."},
	},
	differ: [][2]string{
		{"The checkout deployment runs 4 replicas.", "The checkout deployment runs 4 workers."},
		{"The API server listens on port 8080.", "The metrics server listens on port 9090."},
		{"Access tokens expire after 15 minutes.", "Refresh tokens expire after 30 days."},
		{"The staging database is db-staging-01.", "The production database is db-prod-01."},
		{"Contractors are reimbursed up to $50 per day for meals.", "Contractors are reimbursed up to $500 per night for hotels."},
		{"The model is trained for 3 epochs.", "The model is evaluated every 500 steps."},
		{"The frontend uses React 18.", "The frontend uses TypeScript 5.4."},
		{"The API uses Redis for caching.", "The API uses Postgres for storage."},
		{"The orders topic has 12 partitions.", "The orders topic has 3 replicas."},
		{"The nightly backup job starts at 01:30 UTC.", "The weekly report job starts at 06:00 UTC."},
		{"The search service reads from the replica at 10.0.0.12.", "The search service writes to the primary at 10.0.0.11."},
		{"The project pins requests==2.31.0 in requirements.txt.", "The project pins urllib3==2.0.7 in requirements.txt."},
		{"The Grafana dashboard refreshes every 30s.", "The Kibana dashboard refreshes every 30s."},
		{"Interns are paid 2200 EUR per month.", "Interns get 20 days of leave."},
		{"The SLA for P1 incidents is 4 hours.", "The SLA for P2 incidents is 1 day."},
		{"The TLS certificate for api.example.com expires on 2025-11-30.", "The TLS certificate for cdn.example.com expires on 2025-11-30."},
		{"The search cluster runs Elasticsearch 8.11.", "The search cluster runs Kibana 8.11."},
	},
	none: []string{
		"The web tier listens on ports 80 and 443.",
		"Is the retry limit still 5?",
		"What port does the admin console use",
		"Replicas is 3 and shards is 6.",
		"The cache is not enabled in staging.",
		"The timeout might be 30 seconds.",
		"The deploy window moved from 02:00 to 04:00.",
		"The team discussed the roadmap at length.",
		"If the queue is full, requests are rejected.",
		"Support is available in English, German and French.",
		"The supported Python versions are 3.10, 3.11 and 3.12.",
		"It is 8080.",
		"The service was running on port 8000.",
		"The API returns 200 on success and 404 when the id is unknown.",
		"Batch size is 32. Learning rate is 0.001.",
		"The build takes between 5 and 8 minutes.",
		"Employees should submit expenses within 30 days.",
		"Which team owns the billing service?",
		"The queue depth spiked to 10000 and then dropped to 200.",
		"Deploys are frozen from December 20 to January 3.",
		"We might move the database to Aurora next quarter.",
		"The API no longer accepts XML.",
		"They set it to 5.",
		"Latency was 120 ms at the p50 and 480 ms at the p99.",
		"The budget is between 10000 and 15000 USD.",
	},
}

// heldOutFloor is the hit rate the held-out table must keep. The first
// 53 entries scored 49/53 when first run; the three general fixes they
// exposed (iOS is a name, not camelCase; an -s word after the first value
// is a plural noun, not the verb; "from X to Y" is checked before "sets X
// to Y") brought them to 52/53. The 25 entries written
// after that scored 24/25 on their first run. The two misses are kept:
// "caches node_modules for 7 days" keys on the direct object, not the
// duration, and "is materialized as a view" is a four-word complement.
const heldOutFloor = 0.95

func sameKey(a, b Fact) bool {
	return temporal.NewFactKey(a.Subject, a.Relation) == temporal.NewFactKey(b.Subject, b.Relation)
}

func TestKeyHeldOut(t *testing.T) {
	hits, total := 0, 0
	for _, p := range heldOut.same {
		total++
		a, okA := Key(p[0])
		b, okB := Key(p[1])
		if okA && okB && sameKey(a, b) && temporal.NormalizeObject(a.Object) != temporal.NormalizeObject(b.Object) {
			hits++
			continue
		}
		t.Logf("miss (same fact): %q → %+v %v; %q → %+v %v", p[0], a, okA, p[1], b, okB)
	}
	for _, p := range heldOut.differ {
		total++
		a, okA := Key(p[0])
		b, okB := Key(p[1])
		if okA && okB && sameKey(a, b) {
			t.Errorf("different facts share a key: %q → %+v; %q → %+v", p[0], a, p[1], b)
		}
		if okA && okB && !sameKey(a, b) {
			hits++
			continue
		}
		t.Logf("miss (different facts): %q → %+v %v; %q → %+v %v", p[0], a, okA, p[1], b, okB)
	}
	for _, s := range heldOut.none {
		total++
		if f, ok := Key(s); ok {
			t.Errorf("Key(%q) = %+v, want no key", s, f)
			continue
		}
		hits++
	}
	rate := float64(hits) / float64(total)
	t.Logf("held-out hit rate: %d/%d = %.3f (%d sentences)", hits, total, rate,
		2*len(heldOut.same)+2*len(heldOut.differ)+len(heldOut.none))
	if rate < heldOutFloor {
		t.Errorf("held-out hit rate %.3f < floor %.2f", rate, heldOutFloor)
	}
}

// The normalised parts of a key are what the engine compares: Key's
// Subject and Relation are already in that form.
func TestKeyNormalised(t *testing.T) {
	for _, p := range append(heldOut.same, heldOut.differ...) {
		for _, s := range p {
			f, ok := Key(s)
			if !ok {
				continue
			}
			if k := temporal.NewFactKey(f.Subject, f.Relation); k.Subject != f.Subject || k.Relation != f.Relation {
				t.Errorf("Key(%q) = %+v: parts not normalised (%+v)", s, f, k)
			}
			if f.Object == "" {
				t.Errorf("Key(%q): empty object", s)
			}
		}
	}
}

func TestKeyRejects(t *testing.T) {
	for _, s := range []string{
		"", " ", "8080", "is 5", "The port.",
		"What is the port of the API server?",
		"The port isn't 8080.",
		"A is 3 and B is 4.",
		"The old port was 8080.",
		"The module billing_core uses Stripe.",
		"The service uses PostgreSQL for storage and Redis for caching.",
		"Ports 80, 443 and 8443 are open.",
	} {
		if f, ok := Key(s); ok {
			t.Errorf("Key(%q) = %+v, want no key", s, f)
		}
	}
}

func TestThirdPerson(t *testing.T) {
	for base, want := range map[string]string{
		"use": "uses", "retry": "retries", "push": "pushes", "match": "matches", "have": "has", "stay": "stays",
		"go": "goes", "fix": "fixes",
	} {
		if got := thirdPerson(base); got != want {
			t.Errorf("thirdPerson(%q) = %q, want %q", base, got, want)
		}
	}
}
