package postgres

// Schema (table vmcp_schema holds the version; see schemaVersion)
//
//	runs   one row per run, the columns of the SQLite store's runs table at
//	       its version 7 (id, workflow, status, started_at and ended_at as
//	       BIGINT Unix nanoseconds, output, error and params as JSON TEXT,
//	       step_count, finally_from, parent_id, parent_step,
//	       workflow_version, draft, plan_digest, owner, triggered_by), plus
//	       seq (an identity column: the tie-break of "newest first" that
//	       SQLite's rowid is there) and the run's lease: lease_holder (the
//	       replica that runs it) and lease_until (the database's clock),
//	       see lease.go; version 2 added cancel_requested (a cancel asked
//	       of the replica that runs the run, see notify.go).
//	steps  one row per step of a run, keyed (run_id, idx), as in SQLite;
//	       ON DELETE CASCADE from runs.
//	workflows  authored workflows, one row per saved version, keyed
//	       (name, version). See workflows.go.
//	       Version 4 added trace (the traceparent of the run's span, as
//	       the SQLite store's version 8, rowcodec.EncodeTrace).
//	task_questions  (version 3) the questions a live task waits on, posted
//	       by the replica that runs it. See board.go.
//
// Every write is one transaction of its own on a connection of the pool,
// committed before it returns: CreateRun inserts the run and its steps,
// UpdateStep is one UPDATE of one step row, FinishRun rewrites the run
// row and its step rows. Reads of a run and its steps share one
// repeatable-read snapshot. Several processes (replicas) share the
// database: PostgreSQL orders their writes, and the lease of each run says
// which of them writes it; a write of a run whose lease another replica
// took fails with ErrLeaseLost and changes nothing (fencing).
//
// Migrations: Open takes a transaction-scoped advisory lock, so replicas
// that start together migrate one after the other, reads the version and
// applies migrations[v:] in that transaction; a database with a newer
// version is refused. DDL is transactional in PostgreSQL, so a failed
// migration leaves the previous version whole.
//
// Retention is the SQLite store's: finished runs older than
// Options.Retention go, then the oldest finished ones past MaxRuns, at Open
// and on runtime.StartRetention's schedule. Every replica prunes; the
// deletes are idempotent.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/internal/rowcodec"
)

// schemaVersion is the version of the schema this vmcp writes;
// migrations[v-1] makes version v.
const schemaVersion = 5

// DefaultListLimit is the number of runs ListRuns returns when the filter
// sets no limit.
const DefaultListLimit = 100

// migrationLock is the advisory lock key Open migrates under.
const migrationLock = 0x766d6370 // "vmcp"

var migrations = []string{
	// 0 -> 1: the SQLite store's schema at its version 7, with leases.
	`CREATE TABLE runs (
		seq              BIGINT GENERATED ALWAYS AS IDENTITY,
		id               TEXT PRIMARY KEY,
		workflow         TEXT NOT NULL,
		status           TEXT NOT NULL,
		started_at       BIGINT NOT NULL,
		ended_at         BIGINT,
		output           TEXT,
		error            TEXT,
		step_count       INTEGER NOT NULL,
		finally_from     INTEGER NOT NULL DEFAULT 0,
		parent_id        TEXT NOT NULL DEFAULT '',
		parent_step      TEXT NOT NULL DEFAULT '',
		workflow_version TEXT NOT NULL DEFAULT '',
		draft            BOOLEAN NOT NULL DEFAULT false,
		params           TEXT,
		plan_digest      TEXT NOT NULL DEFAULT '',
		owner            TEXT NOT NULL DEFAULT '',
		triggered_by     TEXT NOT NULL DEFAULT '',
		lease_holder     TEXT NOT NULL DEFAULT '',
		lease_until      TIMESTAMPTZ
	);
	CREATE INDEX runs_started ON runs(started_at, seq);
	CREATE INDEX runs_workflow ON runs(workflow, started_at);
	CREATE INDEX runs_status ON runs(status, started_at);
	CREATE INDEX runs_parent ON runs(parent_id, started_at);
	CREATE INDEX runs_owner ON runs(owner, started_at);
	CREATE INDEX runs_lease ON runs(lease_until) WHERE status IN ('pending', 'running');
	CREATE INDEX runs_holder ON runs(lease_holder) WHERE status IN ('pending', 'running');
	CREATE TABLE steps (
		run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		idx        INTEGER NOT NULL,
		id         TEXT NOT NULL,
		status     TEXT NOT NULL,
		attempts   INTEGER NOT NULL,
		started_at BIGINT,
		ended_at   BIGINT,
		output     TEXT,
		error      TEXT NOT NULL DEFAULT '',
		note       TEXT NOT NULL DEFAULT '',
		content    TEXT,
		truncated  BOOLEAN NOT NULL DEFAULT false,
		PRIMARY KEY (run_id, idx)
	);
	CREATE TABLE workflows (
		name       TEXT NOT NULL,
		version    INTEGER NOT NULL,
		source     TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		deleted    BOOLEAN NOT NULL DEFAULT false,
		PRIMARY KEY (name, version)
	);`,
	// 1 -> 2: a cancel asked of the replica that runs the run (notify.go).
	`ALTER TABLE runs ADD COLUMN cancel_requested BOOLEAN NOT NULL DEFAULT false;`,
	// 2 -> 3: the questions of live tasks, for every replica (board.go).
	`CREATE TABLE task_questions (
		run_id    TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
		seq       BIGINT NOT NULL,
		questions TEXT NOT NULL
	);`,
	// 3 -> 4: the run's trace, which a resumed run continues.
	`ALTER TABLE runs ADD COLUMN trace TEXT NOT NULL DEFAULT '';`,
	// 4 -> 5: the live replicas, which share the backends' rate limits
	// (replicas.go).
	`CREATE TABLE replicas (
		name    TEXT PRIMARY KEY,
		seen_at TIMESTAMPTZ NOT NULL
	);`,
}

// Options configure a Store. The zero value keeps runs forever, never
// truncates, and leases runs for DefaultLeaseTTL.
type Options struct {
	// Retention is how long finished runs are kept; 0 keeps them forever.
	Retention time.Duration
	// MaxRuns is how many runs are kept at most, the oldest finished ones
	// deleted first; 0 means no cap.
	MaxRuns int
	// MaxOutputBytes caps the JSON size of each stored output; 0 means no cap.
	MaxOutputBytes int
	// Logger receives recovery, lease and retention reports; nil discards them.
	Logger *slog.Logger
	// KeepUnfinished makes Open take over the runs whose lease has expired
	// (their replica stopped) and list them in Store.Unfinished for the
	// caller to resume or end with Interrupt. Otherwise Open takes over
	// nothing: unlike a SQLite file, the database may be shared with live
	// replicas, so only a process that resumes runs claims any (Claim).
	KeepUnfinished bool
	// Replica names this store's process in the leases it holds; "" makes
	// one up (host, pid and a random suffix). Two live stores must never
	// share one.
	Replica string
	// LeaseTTL is how long a run's lease lasts without a heartbeat (the
	// heartbeat renews it every third of it); 0 means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// MaxConns caps the pool's connections; 0 takes pgxpool's default.
	MaxConns int32
	// now replaces time.Now in tests (the created_at of workflows, the
	// recovery time), and every the retention loop's interval.
	now   func() time.Time
	every time.Duration
}

// DefaultLeaseTTL is how long a replica's runs wait after it stops before
// another replica may take them over.
const DefaultLeaseTTL = 15 * time.Second

// Store is a runtime.Store (and the authored workflows' store) in a
// PostgreSQL database that several vmcp processes may share.
type Store struct {
	pool *pgxpool.Pool
	opts Options
	log  *slog.Logger
	// Replica is the name this store holds leases under.
	Replica string

	// Unfinished lists, oldest first, the ids of the runs that Open took
	// over (Options.KeepUnfinished).
	Unfinished []string

	stop          chan struct{}
	heartbeatDone chan struct{}
	listen        *listener
	cancelMu      sync.Mutex
	cancelFns     []func(string)
	released      atomic.Bool // Release was called: writes of runs are refused
	announced     atomic.Bool // Announce was called: the heartbeat says this replica lives
	stopRetention func()
	once          sync.Once
}

var _ runtime.Store = (*Store)(nil)

// Open connects to the database at url (postgres://...), brings its
// schema up to date, takes over the runs whose lease has expired when
// asked to (Options.KeepUnfinished), and starts the lease heartbeat and the retention loop.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if url == "" {
		return nil, errors.New("postgres store: empty url")
	}
	if opts.MaxOutputBytes < 0 || opts.Retention < 0 || opts.MaxRuns < 0 || opts.LeaseTTL < 0 {
		return nil, errors.New("postgres store: retention, max runs, max output bytes and the lease must not be negative")
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	if opts.LeaseTTL == 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.Replica == "" {
		host, _ := os.Hostname()
		opts.Replica = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", redact(err))
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", redact(err))
	}
	s := &Store{pool: pool, opts: opts, log: log, Replica: opts.Replica, stop: make(chan struct{}),
		heartbeatDone: make(chan struct{}), stopRetention: func() {}, listen: newListener()}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	if err := s.recover(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: taking over unfinished runs: %w", err)
	}
	go s.heartbeat()
	if r := s.retention(); r.Enabled() {
		s.retain()
		s.stopRetention = runtime.StartRetention(r, s.retain)
	}
	return s, nil
}

// redact drops the connection URL (which may hold a password) from a
// pgx configuration error.
func redact(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "postgres://"); i >= 0 {
		return errors.New(msg[:i] + "(the url)")
	}
	if i := strings.Index(msg, "postgresql://"); i >= 0 {
		return errors.New(msg[:i] + "(the url)")
	}
	return err
}

// Close stops the heartbeat, the retention loop and the notification
// listener, and closes the pool. The runs this store still holds keep their lease
// until it expires; then another replica takes them over.
func (s *Store) Close() error {
	s.once.Do(func() {
		s.stopRetention()
		close(s.stop)
		<-s.heartbeatDone
		s.withdraw()
		s.listen.close()
		s.pool.Close()
	})
	return nil
}

func (s *Store) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS vmcp_schema (version INTEGER NOT NULL)`); err != nil {
			return err
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM vmcp_schema`).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			if _, err := tx.Exec(ctx, `INSERT INTO vmcp_schema VALUES (0)`); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if v > schemaVersion {
			return fmt.Errorf("schema version %d is newer than this vmcp understands (%d)", v, schemaVersion)
		}
		for ; v < schemaVersion; v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrating schema to version %d: %w", v+1, err)
			}
		}
		_, err = tx.Exec(ctx, `UPDATE vmcp_schema SET version = $1`, schemaVersion)
		return err
	})
}

// SchemaVersion reads the database's schema version.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT version FROM vmcp_schema`).Scan(&v)
	return v, err
}

// tx runs fn in a write transaction. Writes ignore the cancellation of
// ctx (they keep its values): a step that finished must be recorded even
// when its run is being cancelled.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(context.WithoutCancel(ctx), s.pool, fn)
}

// CreateRun inserts a run and its steps, with this store's lease on it.
func (s *Store) CreateRun(ctx context.Context, run *runtime.Run) error {
	if s.released.Load() {
		return s.errReleased(run.ID)
	}
	rr, err := s.codec().EncodeRun(run)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	return s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO runs (id, workflow, status, started_at, ended_at, output, error, step_count, finally_from, parent_id, parent_step,
			workflow_version, draft, params, plan_digest, owner, triggered_by, lease_holder, lease_until, trace)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, now() + $19 * interval '1 microsecond', $20)`,
			run.ID, run.Workflow, string(run.Status), rowcodec.Nanos(run.StartedAt), rowcodec.NullNanos(run.EndedAt), rr.Out, rr.ErrJSON, len(run.Steps), run.FinallyFrom,
			run.ParentID, run.ParentStep, run.WorkflowVersion, run.Draft, rr.Params, run.PlanDigest, run.Owner, run.Trigger,
			s.Replica, s.opts.LeaseTTL.Microseconds(), rowcodec.EncodeTrace(run))
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "23505" {
				return fmt.Errorf("run %s already exists", run.ID)
			}
			return err
		}
		return insertSteps(ctx, tx, run.ID, rr.Steps)
	})
}

// insertSteps writes a run's step rows in one round trip.
func insertSteps(ctx context.Context, tx pgx.Tx, runID string, rows []rowcodec.StepRow) error {
	if len(rows) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for i, row := range rows {
		b.Queue(`INSERT INTO steps (run_id, idx, id, status, attempts, started_at, ended_at, output, error, note, content, truncated)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			runID, i, row.ID, row.Status, row.Attempts, row.Started, row.Ended, row.Output, row.Err, row.Note, row.Content, row.Truncated)
	}
	return tx.SendBatch(ctx, b).Close()
}

// ErrLeaseLost is a write of a run that another replica took over: this
// process stopped renewing its lease for longer than the lease lasts.
var ErrLeaseLost = errors.New("another vmcp replica took the run over")

// UpdateStep replaces the record of step index of a run, durably, when
// this store holds the run's lease.
func (s *Store) UpdateStep(ctx context.Context, runID string, index int, step runtime.StepState) error {
	if s.released.Load() {
		return s.errReleased(runID)
	}
	row, err := s.codec().EncodeStep(step)
	if err != nil {
		return fmt.Errorf("run %s step %s: %w", runID, step.ID, err)
	}
	ctx = context.WithoutCancel(ctx)
	tag, err := s.pool.Exec(ctx, `UPDATE steps SET id = $1, status = $2, attempts = $3, started_at = $4, ended_at = $5,
		output = $6, error = $7, note = $8, content = $9, truncated = $10
		WHERE run_id = $11 AND idx = $12 AND EXISTS (SELECT 1 FROM runs WHERE id = $11 AND lease_holder = $13)`,
		row.ID, row.Status, row.Attempts, row.Started, row.Ended, row.Output, row.Err, row.Note, row.Content, row.Truncated,
		runID, index, s.Replica)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var count int
	var holder string
	if err := s.pool.QueryRow(ctx, `SELECT step_count, lease_holder FROM runs WHERE id = $1`, runID).Scan(&count, &holder); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("run %s: %w", runID, runtime.ErrRunNotFound)
		}
		return err
	}
	if holder != s.Replica {
		return fmt.Errorf("run %s (held by %s): %w", runID, holder, ErrLeaseLost)
	}
	return fmt.Errorf("run %s has %d steps; no step index %d", runID, count, index)
}

// FinishRun records a run's final status, output and error, and the final
// state of every step, when this store holds the run's lease.
func (s *Store) FinishRun(ctx context.Context, run *runtime.Run) error {
	if s.released.Load() {
		return s.errReleased(run.ID)
	}
	rr, err := s.codec().EncodeRun(run)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	return s.tx(ctx, func(tx pgx.Tx) error {
		var holder string
		err := tx.QueryRow(ctx, `SELECT lease_holder FROM runs WHERE id = $1 FOR UPDATE`, run.ID).Scan(&holder)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("run %s: %w", run.ID, runtime.ErrRunNotFound)
		} else if err != nil {
			return err
		}
		if holder != s.Replica {
			return fmt.Errorf("run %s (held by %s): %w", run.ID, holder, ErrLeaseLost)
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET workflow = $1, status = $2, started_at = $3, ended_at = $4, output = $5, error = $6, step_count = $7,
			finally_from = $8, params = $9, plan_digest = $10 WHERE id = $11`,
			run.Workflow, string(run.Status), rowcodec.Nanos(run.StartedAt), rowcodec.NullNanos(run.EndedAt), rr.Out, rr.ErrJSON, len(run.Steps),
			run.FinallyFrom, rr.Params, run.PlanDigest, run.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM steps WHERE run_id = $1`, run.ID); err != nil {
			return err
		}
		return insertSteps(ctx, tx, run.ID, rr.Steps)
	})
}

// GetRun reads one run and its steps.
func (s *Store) GetRun(ctx context.Context, id string) (*runtime.Run, error) {
	runs, err := s.queryRuns(ctx, nil, stepColumns, `SELECT `+runColumns+` FROM runs WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("run %s: %w", id, runtime.ErrRunNotFound)
	}
	return runs[0], nil
}

// ListRuns returns matching runs with their steps, newest first.
func (s *Store) ListRuns(ctx context.Context, f runtime.RunFilter) ([]*runtime.Run, error) {
	var where []string
	var args []any
	add := func(col, val string) {
		args = append(args, val)
		where = append(where, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if f.Workflow != "" {
		add("workflow", f.Workflow)
	}
	if f.Status != "" {
		add("status", string(f.Status))
	}
	if f.Parent != "" {
		add("parent_id", f.Parent)
	}
	if f.Owner != "" {
		add("owner", f.Owner)
	}
	if f.Trigger != "" {
		add("triggered_by", f.Trigger)
	}
	cmp := func(cond string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(args)), 1)
		}
		where = append(where, cond)
	}
	if !f.StartedFrom.IsZero() {
		cmp("started_at >= ?", rowcodec.Nanos(f.StartedFrom))
	}
	if !f.StartedTo.IsZero() {
		cmp("started_at < ?", rowcodec.Nanos(f.StartedTo))
	}
	if f.ErrorContains != "" {
		// ILIKE ignores case, as RunFilter.Match does (ASCII there); the
		// store writes every error as a JSON object (encode.go).
		pat := "%" + likeEscaper.Replace(f.ErrorContains) + "%"
		cmp(`(error IS NOT NULL AND ((error::jsonb)->>'message' ILIKE ? OR (error::jsonb)->>'step' ILIKE ?))`, pat, pat)
	}
	if !f.After.IsZero() {
		at := rowcodec.Nanos(f.After.StartedAt)
		cmp("(started_at < ? OR (started_at = ? AND id < ?))", at, at, f.After.ID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	cols, stepCols := runColumns, stepColumns
	if f.Summary {
		cols, stepCols = summaryColumns, stepSummaryColumns
	}
	q := `SELECT ` + cols + ` FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	q += fmt.Sprintf(" ORDER BY started_at DESC, id DESC LIMIT $%d", len(args)) // RunCursor's order
	return s.queryRuns(ctx, nil, stepCols, q, args...)
}

// likeEscaper escapes ILIKE's wildcards and its escape character.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// runColumns are the columns of runs that queryRuns scans, in its order;
// summaryColumns leave out the output and the parameters
// (RunFilter.Summary), and stepSummaryColumns every step column but the
// id and the status.
const (
	runColumns         = `id, workflow, status, started_at, ended_at, output, error, finally_from, parent_id, parent_step, workflow_version, draft, params, plan_digest, owner, triggered_by, trace`
	summaryColumns     = `id, workflow, status, started_at, ended_at, NULL, error, finally_from, parent_id, parent_step, workflow_version, draft, NULL, plan_digest, owner, triggered_by, trace`
	stepColumns        = `run_id, id, status, attempts, started_at, ended_at, output, error, note, content`
	stepSummaryColumns = `run_id, id, status, 0, NULL::bigint, NULL::bigint, NULL::text, '', '', NULL::text`
)

// queryRuns reads runs selected by q, then their steps, in one read-only
// snapshot. A JSON column that cannot be decoded does not fail the read:
// its value reads as null, a step's note says so, and bad, when not nil,
// gets the problem.
func (s *Store) queryRuns(ctx context.Context, bad rowcodec.Unreadable, stepCols, q string, args ...any) ([]*runtime.Run, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	var runs []*runtime.Run
	byID := map[string]*runtime.Run{}
	for rows.Next() {
		r, err := rowcodec.ScanRun(rows, bad)
		if err != nil {
			rows.Close()
			return nil, err
		}
		runs = append(runs, r)
		byID[r.ID] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return runs, nil
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	srows, err := tx.Query(ctx, `SELECT `+stepCols+` FROM steps WHERE run_id = ANY($1) ORDER BY run_id, idx`, ids)
	if err != nil {
		return nil, err
	}
	defer srows.Close()
	for srows.Next() {
		runID, st, err := rowcodec.ScanStep(srows, bad)
		if err != nil {
			return nil, err
		}
		r := byID[runID]
		r.Steps = append(r.Steps, st)
	}
	return runs, srows.Err()
}

// Unreadable names what of run id's stored record cannot be read (a JSON
// column that does not decode), as the SQLite store does: a run with any
// cannot resume, and vmcp ends it with Interrupt instead.
func (s *Store) Unreadable(ctx context.Context, id string) ([]string, error) {
	bad := rowcodec.Unreadable{}
	runs, err := s.queryRuns(ctx, bad, stepColumns, `SELECT `+runColumns+` FROM runs WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("run %s: %w", id, runtime.ErrRunNotFound)
	}
	return bad[id], nil
}

// TruncatedSteps returns the ids of the run's steps whose stored output
// or content the store cut down to a marker, in plan order.
func (s *Store) TruncatedSteps(ctx context.Context, id string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM steps WHERE run_id = $1 AND truncated ORDER BY idx`, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
