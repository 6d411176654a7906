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
// that started it ends, and its directory is removed (a program that is
// not a test starts one with StartPostgresOn and calls Stop). A missing
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
	top  string // Dir's parent, removed by Stop
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
	dir, err := postgresBinDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func postgresBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return va - vb
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	return "", fmt.Errorf("PostgreSQL is not installed (no initdb on PATH nor in /usr/lib/postgresql/*/bin); install it with `%s`", PostgresInstall)
}

// StartPostgres initialises and starts a cluster on a free port in
// [lo, hi], and stops and removes it when the test ends.
func StartPostgres(t testing.TB, lo, hi int, opts PostgresOptions) *Postgres {
	t.Helper()
	bin := PostgresBinDir(t)
	p, err := startPostgres(bin, FreePort(t, lo, hi), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// StartPostgresOn is StartPostgres for a program that is not a test (the
// load of bench/load): a cluster on port, which the caller stops with
// Stop (that also removes its directory).
func StartPostgresOn(port int, opts PostgresOptions) (*Postgres, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	return startPostgres(bin, port, opts)
}

func startPostgres(bin string, port int, opts PostgresOptions) (*Postgres, error) {
	p := &Postgres{bin: bin, Port: port}
	dir, err := os.MkdirTemp("", "vmcp-pg-")
	if err != nil {
		return nil, err
	}
	p.top = dir
	fail := func(err error) (*Postgres, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fail(fmt.Errorf("running as root, the cluster runs as the postgres user, which does not exist (%v); install it with `%s`", err, PostgresInstall))
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return fail(err)
		}
	}
	p.Dir = filepath.Join(dir, "data")
	if out, err := p.run("initdb", "-D", p.Dir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"); err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}
	settings := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=200", p.Port, dir)
	if !opts.Durable {
		settings += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	logFile := filepath.Join(dir, "server.log")
	if out, err := p.run("pg_ctl", "start", "-w", "-t", "60", "-D", p.Dir, "-l", logFile, "-o", settings); err != nil {
		log, _ := os.ReadFile(logFile)
		return fail(fmt.Errorf("pg_ctl start: %v\n%s\nserver log:\n%s", err, out, log))
	}
	return p, nil
}

// run runs one of the cluster's programs as its user.
func (p *Postgres) run(prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(p.bin, prog), args...)
	cmd.Dir = filepath.Dir(p.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd.CombinedOutput()
}

// Stop ends the server (a fast shutdown, an immediate one when that
// fails) and removes its directory.
func (p *Postgres) Stop() {
	if _, err := p.run("pg_ctl", "stop", "-w", "-t", "30", "-m", "fast", "-D", p.Dir); err != nil {
		p.run("pg_ctl", "stop", "-w", "-m", "immediate", "-D", p.Dir)
	}
	os.RemoveAll(p.top)
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
	if err := p.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	return p.URL(name)
}

// Exec runs one statement on the cluster's postgres database (such as
// CREATE DATABASE).
func (p *Postgres) Exec(stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.URL("postgres"))
	if err != nil {
		return fmt.Errorf("connecting to the test cluster: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %v", stmt, err)
	}
	return nil
}
