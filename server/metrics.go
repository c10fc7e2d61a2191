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
// own (served at /metrics, without a token: put it behind the network
// policy that guards your other exporters).
type metrics struct {
	reg        *prometheus.Registry
	latency    *prometheus.HistogramVec
	plans      *prometheus.CounterVec
	candidates prometheus.Counter
	writes     *prometheus.HistogramVec
	runs       prometheus.Counter
	fsync      prometheus.Histogram
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
	m.reg.MustRegister(m.latency, m.plans, m.candidates, m.writes, m.runs, m.fsync, &dbCollector{db: db})
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

func (m *metrics) write(kind string, start time.Time) {
	m.writes.WithLabelValues(kind).Observe(time.Since(start).Seconds())
}

// dbCollector reports the engine's state at scrape time: collection
// sizes, drift λ(t) per group, the fused stage's backend.
type dbCollector struct{ db *tidemark.DB }

var (
	descMemories = prometheus.NewDesc("tidemark_collection_memories", "Memories stored and on the visible surface.", []string{"collection", "state"}, nil)
	descDrift    = prometheus.NewDesc("tidemark_drift_lambda", "Drift-adaptive decay λ(t) per collection group.", []string{"collection", "group"}, nil)
	descFactor   = prometheus.NewDesc("tidemark_drift_factor", "The factor drift puts on a group's decay rates.", []string{"collection", "group"}, nil)
	descBackend  = prometheus.NewDesc("tidemark_backend_info", "The fused scoring stage in use.", []string{"backend"}, nil)
)

func (d *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descMemories
	ch <- descDrift
	ch <- descFactor
	ch <- descBackend
}

func (d *dbCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descBackend, prometheus.GaugeValue, 1, d.db.Backend())
	for _, name := range d.db.Collections() {
		c, err := d.db.Collection(name)
		if err != nil {
			continue
		}
		stored, visible := c.Len()
		ch <- prometheus.MustNewConstMetric(descMemories, prometheus.GaugeValue, float64(stored), name, "stored")
		ch <- prometheus.MustNewConstMetric(descMemories, prometheus.GaugeValue, float64(visible), name, "visible")
		for _, g := range c.Drift() {
			ch <- prometheus.MustNewConstMetric(descDrift, prometheus.GaugeValue, g.Lambda, name, g.Group)
			ch <- prometheus.MustNewConstMetric(descFactor, prometheus.GaugeValue, g.Factor, name, g.Group)
		}
	}
}

// ObserveSync records one fsync of the write-ahead log; pass it (through
// a function that reaches the server once it exists) as
// tidemark.Options.OnSync.
func (s *Server) ObserveSync(d time.Duration) { s.metrics.fsync.Observe(d.Seconds()) }
