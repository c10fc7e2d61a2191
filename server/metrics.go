package server

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tidemark/tidemark"
)

// metrics are the service's Prometheus metrics, on a registry of their
// own, served at /metrics to a token with the metrics scope. Every label
// takes a bounded set of values the service defines (routes, statuses,
// plans, kinds, reasons), never one a client sent.
type metrics struct {
	reg        *prometheus.Registry
	latency    *prometheus.HistogramVec
	plans      *prometheus.CounterVec
	candidates prometheus.Counter
	writes     *prometheus.HistogramVec
	runs       prometheus.Counter
	fsync      prometheus.Histogram
	// refused counts connections closed at accept (Listener's caps);
	// authFailures failed authentications by reason (missing, unknown,
	// throttled).
	refused      prometheus.Counter
	authFailures *prometheus.CounterVec
}

func newMetrics(db *tidemark.DB) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "tidemark_http_request_duration_seconds", Help: "HTTP request latency by route and status.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
	}, []string{"route", "status"})
	m.plans = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tidemark_search_plans_total", Help: "Searches by the plan that ran (exact, ann).",
	}, []string{"plan"})
	m.candidates = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tidemark_search_candidates_total", Help: "Beliefs scored by the fused stage for searches.",
	})
	m.writes = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "tidemark_write_duration_seconds", Help: "Acknowledged writes (log append, fsync, apply) by kind.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
	}, []string{"kind"})
	m.runs = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tidemark_consolidation_runs_total", Help: "Consolidation runs requested over HTTP.",
	})
	m.fsync = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "tidemark_wal_fsync_duration_seconds", Help: "fsync of the write-ahead log (when the DB was opened with Options.OnSync = Server.ObserveSync).",
		Buckets: prometheus.ExponentialBuckets(0.00005, 2, 18),
	})
	m.refused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tidemark_http_connections_refused_total", Help: "Connections closed when accepted: over the server's or one client's connection cap.",
	})
	m.authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tidemark_http_auth_failures_total", Help: "Requests refused before a token was identified, by reason: missing, unknown, throttled (the client address is over its rate of failures).",
	}, []string{"reason"})
	m.reg.MustRegister(m.latency, m.plans, m.candidates, m.writes, m.runs, m.fsync, m.refused, m.authFailures, &dbCollector{db: db})
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

func (m *metrics) write(kind string, start time.Time) {
	m.writes.WithLabelValues(kind).Observe(time.Since(start).Seconds())
}

// serveMetrics answers GET /metrics, for a token with the metrics scope.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request, _ *Token) error {
	s.metrics.handler().ServeHTTP(w, r)
	return nil
}

// dbCollector reports the engine's state at scrape time, as aggregates
// over the collections: no label carries a collection's name, a fact's
// subject or anything else a tenant wrote, so a scrape reveals no tenant
// data and its size does not grow with theirs (per-collection figures
// are in GET /v1/collections/{c}, behind that collection's token).
type dbCollector struct{ db *tidemark.DB }

var (
	descCollections = prometheus.NewDesc("tidemark_collections", "Collections in the database.", nil, nil)
	descMemories    = prometheus.NewDesc("tidemark_memories", "Memories stored, and on the visible surface, over every collection.", []string{"state"}, nil)
	descDriftGroups = prometheus.NewDesc("tidemark_drift_groups", "Drift detector groups over every collection.", nil, nil)
	descDriftMax    = prometheus.NewDesc("tidemark_drift_factor_max", "The largest factor drift puts on a group's decay rates, over every collection (1 when no group drifts).", nil, nil)
	descDrifting    = prometheus.NewDesc("tidemark_drift_groups_drifting", "Groups whose drift factor is above 1.", nil, nil)
	descCkptFailing = prometheus.NewDesc("tidemark_checkpoint_failing", "1 while background checkpoints fail (the log grows), else 0.", nil, nil)
	descCkptFails   = prometheus.NewDesc("tidemark_checkpoint_failures_total", "Background checkpoints that failed.", nil, nil)
	descBackend     = prometheus.NewDesc("tidemark_backend_info", "The fused scoring stage in use.", []string{"backend"}, nil)
	descApplied     = prometheus.NewDesc("tidemark_replication_applied_seq", "The last change of the store's log this node applied.", nil, nil)
	descBehind      = prometheus.NewDesc("tidemark_replication_behind", "Changes committed to the store that this node has not applied yet (0 on the embedded store).", nil, nil)
	descUnreachable = prometheus.NewDesc("tidemark_replication_unreachable", "1 while the node's last read of its PostgreSQL store failed, else 0.", nil, nil)
	descStale       = prometheus.NewDesc("tidemark_replication_stale_seconds", "Seconds since the node last read its PostgreSQL store (0 on the embedded store).", nil, nil)
	descWriteRetry  = prometheus.NewDesc("tidemark_store_write_retries_total", "Writes PostgreSQL aborted (serialization failure, deadlock) that the node retried.", nil, nil)
	descProjFails   = prometheus.NewDesc("tidemark_beliefs_projection_failures_total", "Projections of keyed beliefs into PostgreSQL that failed (a checkpoint reconciles them).", nil, nil)
)

func (d *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, x := range []*prometheus.Desc{descCollections, descMemories, descDriftGroups, descDriftMax, descDrifting, descCkptFailing, descCkptFails, descBackend,
		descApplied, descBehind, descUnreachable, descStale, descWriteRetry, descProjFails} {
		ch <- x
	}
}

func (d *dbCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	gauge(descBackend, 1, d.db.Backend())
	names := d.db.Collections()
	var stored, visible, groups, drifting int
	factor := 1.0
	for _, name := range names {
		c, err := d.db.Collection(name)
		if err != nil {
			continue
		}
		s, v := c.Len()
		stored, visible = stored+s, visible+v
		for _, g := range c.Drift() {
			groups++
			factor = max(factor, g.Factor)
			if g.Factor > 1 {
				drifting++
			}
		}
	}
	gauge(descCollections, float64(len(names)))
	gauge(descMemories, float64(stored), "stored")
	gauge(descMemories, float64(visible), "visible")
	gauge(descDriftGroups, float64(groups))
	gauge(descDriftMax, factor)
	gauge(descDrifting, float64(drifting))
	failing := 0.0
	if d.db.CheckpointError() != nil {
		failing = 1
	}
	gauge(descCkptFailing, failing)
	ch <- prometheus.MustNewConstMetric(descCkptFails, prometheus.CounterValue, float64(d.db.CheckpointFailures()))
	rep := d.db.Replication()
	gauge(descApplied, float64(rep.Applied))
	gauge(descBehind, float64(rep.Behind))
	unreachable, stale := 0.0, 0.0
	if rep.Error != "" {
		unreachable = 1
	}
	if !rep.LastContact.IsZero() {
		stale = time.Since(rep.LastContact).Seconds()
	}
	gauge(descUnreachable, unreachable)
	gauge(descStale, stale)
	ch <- prometheus.MustNewConstMetric(descWriteRetry, prometheus.CounterValue, float64(rep.WriteRetries))
	ch <- prometheus.MustNewConstMetric(descProjFails, prometheus.CounterValue, float64(rep.ProjectionFailures))
}

// ObserveSync records one fsync of the write-ahead log; pass it (through
// a function that reaches the server once it exists) as
// tidemark.Options.OnSync.
func (s *Server) ObserveSync(d time.Duration) { s.metrics.fsync.Observe(d.Seconds()) }
