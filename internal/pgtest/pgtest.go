// Package pgtest starts throwaway PostgreSQL clusters for tests: initdb in
// a temporary directory, a server listening only on a Unix socket there
// (no TCP port), run as a non-root user, stopped and removed when the test
// ends. When TIDEMARK_TEST_POSTGRES holds a URL, tests use that server
// instead (each test in a database of its own). Without PostgreSQL's
// binaries the tests skip, unless TIDEMARK_PG_CHECKS is set (as CI sets
// it): then they fail.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidemark/tidemark/internal/pgstore"
)

// startTimeout bounds initdb and every start or stop of a server.
const startTimeout = 60 * time.Second

// Server is one throwaway PostgreSQL cluster.
type Server struct {
	dir  string // data directory's parent: data/, sock/, log
	bin  string
	user string // the user the server runs as ("" for the current one)
	// admin is a URL for the server's postgres database.
	admin string
	mu    sync.Mutex
	up    bool
}

// external returns the server named by TIDEMARK_TEST_POSTGRES, if any.
func external() string { return os.Getenv("TIDEMARK_TEST_POSTGRES") }

// binDir finds PostgreSQL's server binaries: Debian's newest
// /usr/lib/postgresql/N/bin, else pg_ctl on PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL's server binaries (initdb, pg_ctl) not found: install postgresql-15")
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("TIDEMARK_PG_CHECKS") != "" {
		t.Fatalf("pgtest: %v (TIDEMARK_PG_CHECKS is set)", err)
	}
	t.Skipf("pgtest: %v", err)
}

// Start starts a cluster of the test's own, stopped and removed at the
// test's end. With TIDEMARK_TEST_POSTGRES set it skips: a test that
// restarts or kills its server needs one it owns.
func Start(t testing.TB) *Server {
	t.Helper()
	if external() != "" {
		t.Skip("pgtest: this test needs a server of its own; TIDEMARK_TEST_POSTGRES names a shared one")
	}
	s, err := start()
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(s.remove)
	return s
}

var shared struct {
	once sync.Once
	s    *Server
	err  error
}

// Database returns the URL of a new, empty database for the test (dropped
// at its end) on the shared server: TIDEMARK_TEST_POSTGRES's, or a cluster
// this process starts at first use and Main stops.
func Database(t testing.TB) string {
	t.Helper()
	admin := external()
	if admin == "" {
		shared.once.Do(func() { shared.s, shared.err = start() })
		if shared.err != nil {
			unavailable(t, shared.err)
		}
		admin = shared.s.admin
	}
	u, drop, err := newDatabase(admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return u
}

// Database returns the URL of a new, empty database on s.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	u, _, err := newDatabase(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	return u // removed with the server
}

// Main runs the tests and then stops the shared cluster, if one started:
// call it from TestMain.
func Main(m interface{ Run() int }) {
	code := m.Run()
	if shared.s != nil {
		shared.s.remove()
	}
	os.Exit(code)
}

func start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	// A short path: a Unix socket's name is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "tmpg")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: the cluster runs as postgres
		// (Debian's package creates it), or nobody.
		for _, name := range []string{"postgres", "nobody"} {
			u, err := user.Lookup(name)
			if err != nil {
				continue
			}
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			if err := os.Chown(dir, uid, gid); err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
			s.user = name
			break
		}
		if s.user == "" {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and no postgres or nobody user to run PostgreSQL as")
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sock"), 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if s.user != "" {
		u, _ := user.Lookup(s.user)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		os.Chown(filepath.Join(dir, "sock"), uid, gid)
	}
	if out, err := s.run("initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	s.admin = (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/postgres",
		RawQuery: url.Values{"host": {filepath.Join(dir, "sock")}}.Encode()}).String()
	if err := s.Restart(); err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

// run runs one of the server binaries as the cluster's user, bounded by
// startTimeout.
func (s *Server) run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	prog := filepath.Join(s.bin, name)
	var cmd *exec.Cmd
	if s.user != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", s.user, "--", prog}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, prog, args...)
	}
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Stop stops the server (fast shutdown: clients are disconnected).
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up {
		return nil
	}
	if out, err := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	s.up = false
	return nil
}

// Restart starts the server (again, after Stop), waiting until it takes
// connections.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up {
		return nil
	}
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c max_connections=200", filepath.Join(s.dir, "sock"))
	if out, err := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-l", filepath.Join(s.dir, "data", "log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "data", "log"))
		return fmt.Errorf("pg_ctl start: %v: %s\n%s", err, out, log)
	}
	s.up = true
	return nil
}

// URL returns the URL of the server's postgres database.
func (s *Server) URL() string { return s.admin }

func (s *Server) remove() {
	s.Stop()
	if s.up {
		// A server that would not stop is killed: the directory goes.
		if b, err := os.ReadFile(filepath.Join(s.dir, "data", "postmaster.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	os.RemoveAll(s.dir)
}

// newDatabase creates a database for a test on the server of admin
// (pgstore.CreateDatabase) and returns its URL and its removal.
func newDatabase(admin string) (string, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	return pgstore.CreateDatabase(ctx, admin, "tm_test_")
}
