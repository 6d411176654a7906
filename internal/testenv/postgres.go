package testenv

// A throwaway PostgreSQL cluster for tests: Debian's postgresql package
// (scripts/system-packages.sh installs it), started with initdb and pg_ctl
// in a fresh directory, listening on one loopback port of the test's range
// and on a Unix socket in its own directory only, trusting every local
// connection. Each test asks it for a database of its own (NewDatabase),
// so tests sharing a cluster never see each other's rows.
//
// initdb refuses to run as root, and CI runs as root: then every program
// of the cluster runs as the `postgres` user that Debian's package
// creates, in a directory under os.TempDir() that the test creates and
// gives to that user (a t.TempDir() sits in a parent only root may enter).
// As any other user the programs run as that user.
//
// The cluster stops (pg_ctl stop -m fast, then immediate) when the test
// that started it ends, and its directory is removed. A missing
// PostgreSQL fails the test with the install command; it never skips it.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresInstall installs what StartPostgres runs.
const PostgresInstall = "apt-get install -y postgresql (or scripts/system-packages.sh)"

// Postgres is a running throwaway cluster.
type Postgres struct {
	// Port is its loopback TCP port; Dir its data directory.
	Port int
	Dir  string
	bin  string
	cred *syscall.Credential // nil: run as this process's user
	dbs  atomic.Int64
}

// PostgresOptions tune StartPostgres.
type PostgresOptions struct {
	// Durable keeps fsync and synchronous_commit on, as a production
	// server has them (benchmarks); otherwise they are off, which makes
	// a test's writes cheap and changes nothing a test can observe while
	// the cluster runs.
	Durable bool
}

// PostgresBinDir returns the directory of initdb and pg_ctl: PATH's, or
// the newest /usr/lib/postgresql/VERSION/bin. It fails the test naming the
// install command when there is none.
func PostgresBinDir(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return va - vb
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	t.Fatalf("PostgreSQL is not installed (no initdb on PATH nor in /usr/lib/postgresql/*/bin); install it with `%s`", PostgresInstall)
	return ""
}

// StartPostgres initialises and starts a cluster on a free port in
// [lo, hi], and stops and removes it when the test ends.
func StartPostgres(t testing.TB, lo, hi int, opts PostgresOptions) *Postgres {
	t.Helper()
	p := &Postgres{bin: PostgresBinDir(t), Port: FreePort(t, lo, hi)}
	dir, err := os.MkdirTemp("", "vmcp-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, the cluster runs as the postgres user, which does not exist (%v); install it with `%s`", err, PostgresInstall)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	p.Dir = filepath.Join(dir, "data")
	if out, err := p.run("initdb", "-D", p.Dir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	settings := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=200", p.Port, dir)
	if !opts.Durable {
		settings += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	logFile := filepath.Join(dir, "server.log")
	if out, err := p.run("pg_ctl", "start", "-w", "-t", "60", "-D", p.Dir, "-l", logFile, "-o", settings); err != nil {
		log, _ := os.ReadFile(logFile)
		t.Fatalf("pg_ctl start: %v\n%s\nserver log:\n%s", err, out, log)
	}
	t.Cleanup(p.stop)
	return p
}

// run runs one of the cluster's programs as its user.
func (p *Postgres) run(prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(p.bin, prog), args...)
	cmd.Dir = filepath.Dir(p.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd.CombinedOutput()
}

// stop ends the server: a fast shutdown, an immediate one when that fails.
func (p *Postgres) stop() {
	if _, err := p.run("pg_ctl", "stop", "-w", "-t", "30", "-m", "fast", "-D", p.Dir); err != nil {
		p.run("pg_ctl", "stop", "-w", "-m", "immediate", "-D", p.Dir)
	}
}

// URL is the connection URL of database db on the cluster.
func (p *Postgres) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", p.Port, db)
}

// NewDatabase creates an empty database for the test and returns its URL.
// The database is dropped when the test ends (with the connections still
// on it).
func (p *Postgres) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), p.dbs.Add(1))
	p.exec(t, "CREATE DATABASE "+name)
	t.Cleanup(func() { p.exec(t, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return p.URL(name)
}

// exec runs one statement on the cluster's postgres database.
func (p *Postgres) exec(t testing.TB, stmt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.URL("postgres"))
	if err != nil {
		t.Fatalf("connecting to the test cluster: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
