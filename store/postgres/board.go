package postgres

// The task board: the questions a task's run waits on, shared by the
// replicas, so that a task made on one replica is read as input_required
// and answered through any.
//
// The replica that runs the task posts its waiting questions (as the
// opaque JSON mcpserver gives it) whenever they change; each post carries
// the poster's sequence number and replaces an older post only, so posts
// that race arrive in order. Another replica reads them back for
// tasks/get, and hands an answer to the runner over NOTIFY on
// AnswerChannel (payload: the task id, the question's key and the answer,
// as JSON); the runner's listener gives it to its handlers (OnAnswer). An
// answer sent while the runner's notification connection is down is lost:
// the question stays posted, and the client answers again.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// AnswerChannel is the LISTEN/NOTIFY channel of answers to task questions.
const AnswerChannel = "vmcp_answer"

// Post records the questions (JSON) task id waits on in this replica;
// seq orders the posts of one task, and nil questions clear them.
func (s *Store) Post(ctx context.Context, id string, seq int64, questions []byte) error {
	ctx = context.WithoutCancel(ctx)
	if questions == nil {
		_, err := s.pool.Exec(ctx, `DELETE FROM task_questions WHERE run_id = $1 AND seq < $2`, id, seq)
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO task_questions (run_id, seq, questions) VALUES ($1, $2, $3)
		ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, questions = excluded.questions
		WHERE task_questions.seq < excluded.seq`, id, seq, string(questions))
	return err
}

// Questions reads the questions (JSON) task id waits on, nil when none.
func (s *Store) Questions(ctx context.Context, id string) ([]byte, error) {
	var q string
	err := s.pool.QueryRow(ctx, `SELECT questions FROM task_questions WHERE run_id = $1`, id).Scan(&q)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return []byte(q), err
}

// boardAnswer is an answer on AnswerChannel.
type boardAnswer struct {
	ID     string          `json:"id"`
	Key    string          `json:"key"`
	Answer json.RawMessage `json:"answer"`
}

// Answer hands answer (JSON) to the question key of task id, to the
// replica that runs the task.
func (s *Store) Answer(ctx context.Context, id, key string, answer []byte) error {
	b, err := json.Marshal(boardAnswer{ID: id, Key: key, Answer: answer})
	if err != nil {
		return err
	}
	if len(b) > 7900 {
		return fmt.Errorf("task %s: the answer is %d bytes, more than a notification carries (7900)", id, len(b))
	}
	_, err = s.pool.Exec(context.WithoutCancel(ctx), `SELECT pg_notify($1, $2)`, AnswerChannel, string(b))
	return err
}

// OnAnswer calls fn with every answer handed to a task (Answer), on any
// replica; fn ignores the tasks it does not run.
func (s *Store) OnAnswer(fn func(id, key string, answer []byte)) {
	s.on(AnswerChannel, func(payload string) {
		var a boardAnswer
		if json.Unmarshal([]byte(payload), &a) == nil {
			fn(a.ID, a.Key, a.Answer)
		}
	})
}
