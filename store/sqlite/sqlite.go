package sqlite

// Schema (PRAGMA user_version = 8; see schemaVersion)
//
//	runs   one row per run: id (TEXT primary key), workflow, status,
//	       started_at and ended_at (INTEGER Unix nanoseconds, ended_at NULL
//	       while the run goes), output and error (JSON text or NULL),
//	       step_count, finally_from (Run.FinallyFrom; version 2 added it),
//	       and for the child run of a workflow step parent_id and
//	       parent_step ('' for a top-level run; version 3 added them, so
//	       older rows read as top-level runs). Indexed on started_at,
//	       (workflow, started_at), (status, started_at) and (parent_id,
//	       started_at) so every list filter is an index scan. Version 4
//	       added workflow_version (Run.WorkflowVersion, '' for older rows)
//	       and draft (1 for the run of an unsaved draft); version 5 (resume)
//	       added params (Run.Params as JSON, NULL for none) and
//	       plan_digest (Run.PlanDigest, '' for older rows); version 6
//	       added owner (Run.Owner, indexed with started_at; '' for older
//	       rows, which only a caller who sees every owner's runs sees); version 7
//	       added triggered_by (Run.Trigger, '' for older rows); version 8
//	       added trace (the traceparent of the run's span, Run.TraceID and
//	       Run.SpanID, rowcodec.EncodeTrace; '' when not traced), so that
//	       a resumed run continues the trace.
//	steps  one row per step of a run, keyed (run_id, idx) where idx is the
//	       step's position in the plan: id, status, attempts, started_at,
//	       ended_at, output (JSON), error, note, and since version 5
//	       content (StepState.Content as JSON) and truncated (1 when the
//	       store cut output or content down to the marker below, so a
//	       resumed run could not read it back). ON DELETE CASCADE from runs.
//	workflows  authored workflows (version 4), one row per saved version,
//	       keyed (name, version): source (the YAML or JSON as saved),
//	       created_at, and deleted (1 on the newest row once the workflow
//	       is deleted). See workflows.go.
//
// CreateRun inserts the run and all its steps in one transaction;
// UpdateStep is one UPDATE of one step row, committed before it returns;
// FinishRun rewrites the run row and every step row in one transaction.
// Writes go through a single connection (SQLite has one writer anyway), so
// they never fail with SQLITE_BUSY among themselves; reads use a separate
// pool and, thanks to WAL, never wait for a writer. Other processes (such as
// `vmcp runs list --db`) can read the file while vmcp writes it; the busy
// timeout covers the short checkpoint locks.
//
// Durability: the journal is WAL with synchronous=NORMAL. A committed
// transaction is in the WAL file before the commit returns, so killing the
// process (kill -9) loses nothing that was committed: every step whose
// UpdateStep returned is on disk. (Only a power loss or OS crash may lose
// the last transactions; Options.Synchronous = "FULL" closes that gap at the
// cost of an fsync per write.)
//
// Recovery: Open runs in one transaction before anything else. Every run
// still pending or running was cut off by a crash or kill, since a live
// engine finishes its runs with FinishRun. With Options.KeepUnfinished
// Open leaves such runs as they are and lists them in Store.Unfinished,
// for vmcp to resume (runtime.Engine.Resume reads the steps, params and
// content stored here) or, when a run cannot resume, to end with
// Interrupt(id, reason). Otherwise (and for Interrupt) the run becomes
// interrupted:
// ended_at is the recovery time, steps left running become failed with the
// error "interrupted", and Run.Error says when the run was recovered, which
// step finished last and when, and how many steps finished. Finished steps
// keep their outputs.
//
// Ownership: recovery is only correct when no other process is running
// runs in the file, so Open takes an exclusive flock on PATH.lock for the
// life of the Store and fails with ErrLocked when another vmcp holds it.
// OpenReadOnly takes no lock and never writes: it is how `vmcp runs --db`
// reads the history of a running server.
//
// Interrupt adds its reason to that error.
//
// Retention: when Options.Retention or Options.MaxRuns is set, finished
// runs (any final status, interrupted included) whose ended_at is older
// than the retention are deleted, and then the oldest finished runs (by
// started_at) while more than MaxRuns runs are stored, once at Open and
// then in the background on runtime.StartRetention's schedule. Close
// stops it. Running runs are never deleted; steps (with their outputs and
// content) go with their run.
//
// Unreadable rows: a JSON column (a run's output, params or error, a
// step's output or content) that does not decode, because the file was
// edited or damaged, reads as null and never fails a read: GetRun and
// ListRuns still return the run, with a note on the step. Unreadable
// names such columns, so vmcp ends a run left unfinished with one
// interrupted, saying which, instead of resuming it.
//
// Truncation: an output (a step's or the run's) whose JSON is larger than
// Options.MaxOutputBytes is stored as a marker object instead, still valid
// JSON: {"truncated": true, "bytes": N, "limit": M, "preview": "<first bytes
// of the JSON>"}. The step's Note says that the store truncated it. The
// engine's own run record is never touched: only the stored copy shrinks.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/internal/rowcodec"
)

// schemaVersion is stored in PRAGMA user_version. Open refuses a file with a
// newer version, and migrates older ones step by step: one migration per
// version (migrations[v-1] makes version v).
const schemaVersion = 8

// DefaultListLimit is the number of runs ListRuns returns when the filter
// sets no limit.
const DefaultListLimit = 100

// Options configure a Store. The zero value keeps runs forever and never
// truncates.
type Options struct {
	// Retention is how long finished runs are kept; 0 keeps them forever.
	Retention time.Duration
	// MaxRuns is how many runs are kept at most, the oldest finished ones
	// deleted first; 0 means no cap.
	MaxRuns int
	// MaxOutputBytes caps the JSON size of each stored output; 0 means no cap.
	MaxOutputBytes int
	// Synchronous is SQLite's synchronous setting: "NORMAL" (the default,
	// safe against process crashes) or "FULL" (also against power loss).
	Synchronous string
	// Logger receives recovery and retention reports; nil discards them.
	Logger *slog.Logger
	// KeepUnfinished makes Open leave the runs a previous process left
	// pending or running as they are, listed in Store.Unfinished, instead
	// of marking them interrupted: the caller resumes them or ends them
	// with Interrupt.
	KeepUnfinished bool
	// now replaces time.Now in tests, and every the retention loop's
	// interval.
	now   func() time.Time
	every time.Duration
}

// ErrLocked is returned by Open when another process owns the file.
var ErrLocked = errors.New("the state file is in use by another vmcp process")

// errReadOnly is returned by writes on a store from OpenReadOnly.
var errReadOnly = errors.New("sqlite store opened read-only")

// Store is a runtime.Store backed by one SQLite file.
type Store struct {
	w, r *sql.DB // writer (one connection; nil when read-only) and readers
	lock *os.File
	opts Options
	log  *slog.Logger

	// Recovered lists the ids of runs that Open marked interrupted.
	Recovered []string
	// Unfinished lists, oldest first, the ids of the runs that Open found
	// pending or running and left so (Options.KeepUnfinished).
	Unfinished []string

	stop chan struct{} // closed by Close: the writer stops
	// stopRetention stops the retention loop and waits for it.
	stopRetention func()
	queue         chan writeReq
	writerDone    chan struct{}
	closeErr      error
	once          sync.Once
}

var _ runtime.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path, brings its schema up
// to date, marks runs left running by a previous process as interrupted and
// starts the retention loop.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite store: empty path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite store: path %q must not contain '?' or '#'", path)
	}
	if opts.MaxOutputBytes < 0 || opts.Retention < 0 || opts.MaxRuns < 0 {
		return nil, errors.New("sqlite store: retention, max runs and max output bytes must not be negative")
	}
	syncMode := strings.ToUpper(opts.Synchronous)
	switch syncMode {
	case "":
		syncMode = "NORMAL"
	case "NORMAL", "FULL":
	default:
		return nil, fmt.Errorf("sqlite store: synchronous %q: want NORMAL or FULL", opts.Synchronous)
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %s: %w", path, err)
	}
	w, err := sql.Open("sqlite", path+"?"+commonDSN+"&_pragma=journal_mode(WAL)&_pragma=synchronous("+syncMode+")&_txlock=immediate")
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	s := &Store{w: w, lock: lock, opts: opts, log: log, stop: make(chan struct{}), stopRetention: func() {}}
	if err := s.migrate(); err != nil {
		w.Close()
		lock.Close()
		return nil, fmt.Errorf("sqlite store: %s: %w", path, err)
	}
	s.r = openReader(path)
	if err := s.recover(); err != nil {
		s.w.Close()
		s.r.Close()
		lock.Close()
		return nil, fmt.Errorf("sqlite store: recovering %s: %w", path, err)
	}
	s.queue, s.writerDone = make(chan writeReq), make(chan struct{})
	go s.writer()
	if r := s.retention(); r.Enabled() {
		s.retain()
		s.stopRetention = runtime.StartRetention(r, s.retain)
	}
	return s, nil
}

const commonDSN = "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"

func openReader(path string) *sql.DB {
	// sql.Open only validates its arguments, and these are fixed.
	r, _ := sql.Open("sqlite", path+"?"+commonDSN+"&_pragma=query_only(1)")
	r.SetMaxOpenConns(4)
	return r
}

// OpenReadOnly opens an existing database for reading only, without the
// ownership lock, recovery or retention, so it can read the file of a
// running vmcp. Runs that a crashed process left running show as running
// until the next Open recovers them.
func OpenReadOnly(path string) (*Store, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite store: path %q must not contain '?' or '#'", path)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	s := &Store{r: openReader(path), log: slog.New(slog.DiscardHandler), stop: make(chan struct{}), stopRetention: func() {}}
	var v int
	if err := s.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		s.r.Close()
		return nil, fmt.Errorf("sqlite store: %s: %w", path, err)
	}
	if v != schemaVersion {
		s.r.Close()
		return nil, fmt.Errorf("sqlite store: %s: schema version %d; this vmcp reads version %d (is it a vmcp state file?)", path, v, schemaVersion)
	}
	return s, nil
}

// Close stops the retention loop, closes the database and releases the
// ownership lock.
func (s *Store) Close() error {
	s.once.Do(func() {
		s.stopRetention()
		close(s.stop)
		if s.writerDone != nil {
			<-s.writerDone
		}
		errs := []error{s.r.Close()}
		if s.w != nil {
			errs = append(errs, s.w.Close())
		}
		if s.lock != nil {
			errs = append(errs, s.lock.Close())
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

var migrations = []string{
	// 0 -> 1
	`CREATE TABLE runs (
		id         TEXT PRIMARY KEY,
		workflow   TEXT NOT NULL,
		status     TEXT NOT NULL,
		started_at INTEGER NOT NULL,
		ended_at   INTEGER,
		output     TEXT,
		error      TEXT,
		step_count INTEGER NOT NULL
	);
	CREATE INDEX runs_started ON runs(started_at);
	CREATE INDEX runs_workflow ON runs(workflow, started_at);
	CREATE INDEX runs_status ON runs(status, started_at);
	CREATE TABLE steps (
		run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		idx        INTEGER NOT NULL,
		id         TEXT NOT NULL,
		status     TEXT NOT NULL,
		attempts   INTEGER NOT NULL,
		started_at INTEGER,
		ended_at   INTEGER,
		output     TEXT,
		error      TEXT NOT NULL DEFAULT '',
		note       TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (run_id, idx)
	) WITHOUT ROWID;`,
	// 1 -> 2: the index of a run's first finally step.
	`ALTER TABLE runs ADD COLUMN finally_from INTEGER NOT NULL DEFAULT 0;`,
	// 2 -> 3: child runs of workflow steps.
	`ALTER TABLE runs ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN parent_step TEXT NOT NULL DEFAULT '';
	CREATE INDEX runs_parent ON runs(parent_id, started_at);`,
	// 3 -> 4: authored workflows, and the workflow version each run ran.
	`ALTER TABLE runs ADD COLUMN workflow_version TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN draft INTEGER NOT NULL DEFAULT 0;
	CREATE TABLE workflows (
		name       TEXT NOT NULL,
		version    INTEGER NOT NULL,
		source     TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		deleted    INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (name, version)
	) WITHOUT ROWID;`,
	// 4 -> 5: what a run needs to resume after a crash.
	`ALTER TABLE runs ADD COLUMN params TEXT;
	ALTER TABLE runs ADD COLUMN plan_digest TEXT NOT NULL DEFAULT '';
	ALTER TABLE steps ADD COLUMN content TEXT;
	ALTER TABLE steps ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0;`,
	// 5 -> 6: who owns each run.
	`ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
	CREATE INDEX runs_owner ON runs(owner, started_at);`,
	// 6 -> 7: what started a run when it was not a client (re-runs).
	`ALTER TABLE runs ADD COLUMN triggered_by TEXT NOT NULL DEFAULT '';`,
	// 7 -> 8: the run's trace, which a resumed run continues.
	`ALTER TABLE runs ADD COLUMN trace TEXT NOT NULL DEFAULT '';`,
}

func (s *Store) migrate() error {
	ctx := context.Background()
	var v int
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > schemaVersion {
		return fmt.Errorf("schema version %d is newer than this vmcp understands (%d)", v, schemaVersion)
	}
	for ; v < schemaVersion; v++ {
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrating schema to version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// codec encodes the store's rows (rowcodec: the encodings both SQL stores
// share).
func (s *Store) codec() rowcodec.Codec { return rowcodec.Codec{MaxOutputBytes: s.opts.MaxOutputBytes} }

// CreateRun inserts a run and its steps. Like UpdateStep and FinishRun,
// it returns once the write is committed (see writer.go for how concurrent
// writes share commits).
func (s *Store) CreateRun(ctx context.Context, run *runtime.Run) error {
	rr, err := s.codec().EncodeRun(run)
	if err != nil {
		return err
	}
	rows := rr.Steps
	ctx = context.WithoutCancel(ctx) // a write is never abandoned half way; see tx
	return s.write(false, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, workflow, status, started_at, ended_at, output, error, step_count, finally_from, parent_id, parent_step,
			workflow_version, draft, params, plan_digest, owner, triggered_by, trace)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			run.ID, run.Workflow, string(run.Status), rowcodec.Nanos(run.StartedAt), rowcodec.NullNanos(run.EndedAt), rr.Out, rr.ErrJSON, len(run.Steps), run.FinallyFrom, run.ParentID, run.ParentStep,
			run.WorkflowVersion, run.Draft, rr.Params, run.PlanDigest, run.Owner, run.Trigger, rowcodec.EncodeTrace(run))
		if err != nil {
			if strings.Contains(err.Error(), "UNIQUE constraint") {
				return fmt.Errorf("run %s already exists", run.ID)
			}
			return err
		}
		for i, row := range rows {
			if err := insertStep(ctx, tx, row, run.ID, i); err != nil {
				return err
			}
		}
		return nil
	})
}

// UpdateStep replaces the record of step index of a run, durably.
func (s *Store) UpdateStep(ctx context.Context, runID string, index int, step runtime.StepState) error {
	row, err := s.codec().EncodeStep(step)
	if err != nil {
		return fmt.Errorf("run %s step %s: %w", runID, step.ID, err)
	}
	ctx = context.WithoutCancel(ctx) // a write is never abandoned half way; see tx
	return s.write(true, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE steps SET id = ?, status = ?, attempts = ?, started_at = ?, ended_at = ?,
			output = ?, error = ?, note = ?, content = ?, truncated = ? WHERE run_id = ? AND idx = ?`,
			row.ID, row.Status, row.Attempts, row.Started, row.Ended, row.Output, row.Err, row.Note, row.Content, row.Truncated, runID, index)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var count int
		if err := tx.QueryRowContext(ctx, `SELECT step_count FROM runs WHERE id = ?`, runID).Scan(&count); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("run %s: %w", runID, runtime.ErrRunNotFound)
			}
			return err
		}
		return fmt.Errorf("run %s has %d steps; no step index %d", runID, count, index)
	})
}

// FinishRun records a run's final status, output and error, and the final
// state of every step.
func (s *Store) FinishRun(ctx context.Context, run *runtime.Run) error {
	rr, err := s.codec().EncodeRun(run)
	if err != nil {
		return err
	}
	rows := rr.Steps
	ctx = context.WithoutCancel(ctx) // a write is never abandoned half way; see tx
	return s.write(false, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET workflow = ?, status = ?, started_at = ?, ended_at = ?, output = ?, error = ?, step_count = ?,
			finally_from = ?, params = ?, plan_digest = ? WHERE id = ?`,
			run.Workflow, string(run.Status), rowcodec.Nanos(run.StartedAt), rowcodec.NullNanos(run.EndedAt), rr.Out, rr.ErrJSON, len(run.Steps), run.FinallyFrom,
			rr.Params, run.PlanDigest, run.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("run %s: %w", run.ID, runtime.ErrRunNotFound)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM steps WHERE run_id = ?`, run.ID); err != nil {
			return err
		}
		for i, row := range rows {
			if err := insertStep(ctx, tx, row, run.ID, i); err != nil {
				return err
			}
		}
		return nil
	})
}

// GetRun reads one run and its steps.
func (s *Store) GetRun(ctx context.Context, id string) (*runtime.Run, error) {
	runs, err := s.query(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id)
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
	if f.Workflow != "" {
		where = append(where, "workflow = ?")
		args = append(args, f.Workflow)
	}
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, string(f.Status))
	}
	if f.Parent != "" {
		where = append(where, "parent_id = ?")
		args = append(args, f.Parent)
	}
	if f.Owner != "" {
		where = append(where, "owner = ?")
		args = append(args, f.Owner)
	}
	if f.Trigger != "" {
		where = append(where, "triggered_by = ?")
		args = append(args, f.Trigger)
	}
	if !f.StartedFrom.IsZero() {
		where = append(where, "started_at >= ?")
		args = append(args, rowcodec.Nanos(f.StartedFrom))
	}
	if !f.StartedTo.IsZero() {
		where = append(where, "started_at < ?")
		args = append(args, rowcodec.Nanos(f.StartedTo))
	}
	if f.ErrorContains != "" {
		// LIKE ignores ASCII case, as RunFilter.Match does.
		pat := "%" + likeEscaper.Replace(f.ErrorContains) + "%"
		// An error that is not JSON (a damaged row) matches nothing.
		where = append(where, `(CASE WHEN json_valid(error) THEN json_extract(error, '$.message') LIKE ? ESCAPE '\' OR json_extract(error, '$.step') LIKE ? ESCAPE '\' ELSE 0 END)`)
		args = append(args, pat, pat)
	}
	if !f.After.IsZero() {
		at := rowcodec.Nanos(f.After.StartedAt)
		where = append(where, "(started_at < ? OR (started_at = ? AND id < ?))")
		args = append(args, at, at, f.After.ID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	cols := runColumns
	if f.Summary {
		cols = summaryColumns
	}
	q := `SELECT ` + cols + ` FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY started_at DESC, id DESC LIMIT ?" // runtime/runfilter.go's order
	args = append(args, limit)
	if f.Summary {
		return s.queryRuns(ctx, nil, stepSummaryColumns, q, args...)
	}
	return s.query(ctx, q, args...)
}

// likeEscaper escapes LIKE's wildcards and its escape character.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// runColumns are the columns of runs that query scans, in its order.
const runColumns = `id, workflow, status, started_at, ended_at, output, error, finally_from, parent_id, parent_step, workflow_version, draft, params, plan_digest, owner, triggered_by, trace`

// summaryColumns are runColumns with the output and the parameters left
// out (RunFilter.Summary), and stepSummaryColumns the columns of steps
// that a summary reads, the others left empty.
const (
	summaryColumns     = `id, workflow, status, started_at, ended_at, NULL, error, finally_from, parent_id, parent_step, workflow_version, draft, NULL, plan_digest, owner, triggered_by, trace`
	stepColumns        = `run_id, id, status, attempts, started_at, ended_at, output, error, note, content`
	stepSummaryColumns = `run_id, id, status, 0, NULL, NULL, NULL, '', '', NULL`
)

// query reads runs selected by q, then their steps, in one read transaction
// so a run and its steps are one consistent snapshot.
func (s *Store) query(ctx context.Context, q string, args ...any) ([]*runtime.Run, error) {
	return s.queryRuns(ctx, nil, stepColumns, q, args...)
}

// queryRuns is query reading stepCols of the steps. A JSON column that
// cannot be decoded does not fail the read: its value reads as null, a
// step's note says so, and bad, when not nil, gets the problem.
func (s *Store) queryRuns(ctx context.Context, bad rowcodec.Unreadable, stepCols, q string, args ...any) ([]*runtime.Run, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, q, args...)
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
	// Steps of all selected runs in one query.
	ph := strings.TrimSuffix(strings.Repeat("?,", len(runs)), ",")
	idArgs := make([]any, len(runs))
	for i, r := range runs {
		idArgs[i] = r.ID
	}
	srows, err := tx.QueryContext(ctx, `SELECT `+stepCols+`
		FROM steps WHERE run_id IN (`+ph+`) ORDER BY run_id, idx`, idArgs...)
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

// tx runs fn in a write transaction on the single writer connection.
//
// Writes ignore the cancellation of ctx (they keep its values): a step
// that finished must be recorded even when its run is being cancelled, and
// one write takes well under a millisecond.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	if s.w == nil {
		return errReadOnly
	}
	ctx = context.WithoutCancel(ctx)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// insertStep writes one step row of run runID at index idx.
func insertStep(ctx context.Context, tx *sql.Tx, row rowcodec.StepRow, runID string, idx int) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO steps (run_id, idx, id, status, attempts, started_at, ended_at, output, error, note, content, truncated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		runID, idx, row.ID, row.Status, row.Attempts, row.Started, row.Ended, row.Output, row.Err, row.Note, row.Content, row.Truncated)
	return err
}

// Unreadable names what of run id's stored record cannot be read: its
// output, params or error column, or a step's output or content, that
// does not hold valid JSON (such a value reads as null), in the order of
// the columns, steps in plan order. A run with any cannot resume: vmcp
// ends it with Interrupt instead.
func (s *Store) Unreadable(ctx context.Context, id string) ([]string, error) {
	bad := rowcodec.Unreadable{}
	runs, err := s.queryRuns(ctx, bad, stepColumns, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("run %s: %w", id, runtime.ErrRunNotFound)
	}
	return bad[id], nil
}
