package runtime

// Questions: the elicitations runs are waiting on, answerable from
// another place than the client that was asked (the console's run page).
//
// Questions.Wrap(inner) is the Elicitor a run gets. It records the
// question, then waits for whichever answer comes first: the inner
// Elicitor's (the MCP client that started the run, a task client) or one
// given to Answer. When Answer comes first, the inner request's context is
// cancelled (the client's question is withdrawn) and the run goes on with
// that answer, exactly as if the client had sent it; the client sees the
// run continue and gets its result. With no inner Elicitor (a scheduled
// run, a re-run: no client to ask) the run waits for Answer alone, until
// the step's timeout. An inner Elicitor that fails (a client that cannot
// answer elicitations) fails the step as before. The question is removed
// when the step stops waiting, whatever ended it.

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"
)

// PendingQuestion is an elicitation a run waits on.
type PendingQuestion struct {
	ElicitRequest
	Asked time.Time
}

// ErrNoQuestion is Answer for a run and step that wait on no question.
var ErrNoQuestion = errors.New("no question is waiting for an answer there")

// Questions holds the pending questions of every run. Its zero value is
// not ready; use NewQuestions. Safe for concurrent use.
type Questions struct {
	mu sync.Mutex
	m  map[questionKey]*pending
}

type questionKey struct{ run, step string }

type pending struct {
	q      PendingQuestion
	answer chan ElicitResult // buffered 1; Answer sends at most once
}

// NewQuestions returns an empty registry.
func NewQuestions() *Questions { return &Questions{m: map[questionKey]*pending{}} }

// Wrap returns the Elicitor that asks inner (nil: nobody) and also waits
// for Answer.
func (q *Questions) Wrap(inner Elicitor) Elicitor { return &answerable{q: q, inner: inner} }

// Pending lists run's questions, oldest first.
func (q *Questions) Pending(runID string) []PendingQuestion {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []PendingQuestion
	for k, p := range q.m {
		if k.run == runID {
			out = append(out, p.q)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Asked.Equal(out[j].Asked) {
			return out[i].Asked.Before(out[j].Asked)
		}
		return out[i].StepID < out[j].StepID
	})
	return out
}

// Answer answers the question of run's step; ErrNoQuestion when there is
// none (already answered, timed out, or never asked).
func (q *Questions) Answer(runID, stepID string, res ElicitResult) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := questionKey{runID, stepID}
	p, ok := q.m[k]
	if !ok {
		return ErrNoQuestion
	}
	delete(q.m, k) // answered once
	p.answer <- res
	return nil
}

func (q *Questions) add(req ElicitRequest) (*pending, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := questionKey{req.RunID, req.StepID}
	if _, dup := q.m[k]; dup {
		// A backend's relayed question while another of the step waits:
		// only the first is answerable here.
		return nil, errors.New("the step already waits on a question")
	}
	p := &pending{q: PendingQuestion{ElicitRequest: req, Asked: time.Now()}, answer: make(chan ElicitResult, 1)}
	q.m[k] = p
	return p, nil
}

func (q *Questions) remove(req ElicitRequest, p *pending) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := questionKey{req.RunID, req.StepID}
	if q.m[k] == p {
		delete(q.m, k)
	}
}

type answerable struct {
	q     *Questions
	inner Elicitor
}

func (a *answerable) Elicit(ctx context.Context, req ElicitRequest) (ElicitResult, error) {
	p, err := a.q.add(req)
	if err != nil {
		if a.inner == nil {
			return ElicitResult{}, err
		}
		return a.inner.Elicit(ctx, req)
	}
	defer a.q.remove(req, p)
	if a.inner == nil {
		select {
		case res := <-p.answer:
			return res, nil
		case <-ctx.Done():
			return ElicitResult{}, context.Cause(ctx)
		}
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		res ElicitResult
		err error
	}
	client := make(chan answer, 1)
	go func() {
		res, err := a.inner.Elicit(ictx, req)
		client <- answer{res, err}
	}()
	select {
	case x := <-client:
		return x.res, x.err
	case res := <-p.answer:
		return res, nil // the deferred cancel withdraws the client's question
	}
}
