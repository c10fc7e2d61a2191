package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// The connection-level defences: what a client may hold of the server
// before it has shown a token. A request is authorised from its headers
// alone, before its body is read (handle), and an answer that leaves a
// body unread closes the connection instead of draining it; the timeouts
// below bound how long any connection may stall, and the caps how many a
// client, and everyone together, may hold.

// Defaults of the Config fields below.
const (
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultBodyTimeout    = 60 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	DefaultMaxConns       = 1024
	DefaultMaxClientConns = 64
)

// HTTPServer returns the http.Server that serves s: its handler, and
// timeouts that no request can outstay. A client has HeaderTimeout to send
// its headers and BodyTimeout more to send the rest of the request; the
// answer must be written within HeaderTimeout + BodyTimeout +
// RequestTimeout of the headers' end (the handler's own deadline is
// RequestTimeout); an idle keep-alive
// connection is closed after IdleTimeout. Serve it on a listener from
// Listener, which caps the connections.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.HeaderTimeout,
		ReadTimeout:       s.cfg.HeaderTimeout + s.cfg.BodyTimeout,
		WriteTimeout:      s.cfg.HeaderTimeout + s.cfg.BodyTimeout + s.cfg.RequestTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}

// Listener wraps ln so that at most MaxConns connections are open at once,
// and at most MaxClientConns from one client address: a connection past
// either cap is closed as soon as it is accepted (counted in
// tidemark_http_connections_refused_total), so one client holding
// connections open cannot take every descriptor, and the server keeps
// answering the others.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &capListener{Listener: ln, max: s.cfg.MaxConns, perClient: s.cfg.MaxClientConns, byClient: map[string]int{}, refused: s.metrics.refused.Inc}
}

// Serve serves s on ln (capped by Listener; over TLS when Config.TLS is
// set) until ctx is done, then shuts
// down: requests in flight get grace to finish, after which the remaining
// connections are closed. It returns nil after a shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	hs := s.HTTPServer()
	errc := make(chan error, 1)
	ln = s.Listener(ln)
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	go func() { errc <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		err = hs.Shutdown(sctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			// Stalled or slow requests past the grace: close them.
			s.cfg.Logger.Warn("shutdown: closing connections still open after the grace", "grace", grace.String())
			err = hs.Close()
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// capListener is Listener's listener.
type capListener struct {
	net.Listener
	max, perClient int
	refused        func()

	mu       sync.Mutex
	open     int
	byClient map[string]int
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := ""
		if a := c.RemoteAddr(); a != nil {
			host = hostOf(a.String())
		}
		l.mu.Lock()
		ok := l.open < l.max && l.byClient[host] < l.perClient
		if ok {
			l.open++
			l.byClient[host]++
		}
		l.mu.Unlock()
		if !ok {
			l.refused()
			c.Close()
			continue
		}
		return &capConn{Conn: c, l: l, host: host}, nil
	}
}

// release gives back a connection's slots.
func (l *capListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byClient[host]--; l.byClient[host] <= 0 {
		delete(l.byClient, host)
	}
}

// capConn gives back its slots once, on the first Close.
type capConn struct {
	net.Conn
	l    *capListener
	host string
	once sync.Once
}

func (c *capConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.host) })
	return err
}

// hostOf is the client a "host:port" address stands for: its host, or for
// IPv6 its /64 (one subscriber's usual allocation, so that rotating
// addresses within it buys no more connections or guesses); the address
// itself when it has no port (a Unix socket's peers share one). Clients
// behind one NAT or reverse proxy share its address, and so its caps.
func hostOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.To4().String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
