package runtime

import (
	"context"
	"errors"
	"testing"
	"time"
)

// blockingElicitor answers when its context ends (a client that never
// does), reporting that on withdrawn.
type blockingElicitor struct {
	asked     chan ElicitRequest
	withdrawn chan struct{}
}

func (b *blockingElicitor) Elicit(ctx context.Context, req ElicitRequest) (ElicitResult, error) {
	b.asked <- req
	<-ctx.Done()
	close(b.withdrawn)
	return ElicitResult{}, ctx.Err()
}

func waitPending(t *testing.T, q *Questions, run string) PendingQuestion {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if p := q.Pending(run); len(p) == 1 {
			return p[0]
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no question pending for run %s", run)
	return PendingQuestion{}
}

func TestQuestionsAnswerWithdrawsTheClientsQuestion(t *testing.T) {
	q := NewQuestions()
	client := &blockingElicitor{asked: make(chan ElicitRequest, 1), withdrawn: make(chan struct{})}
	el := q.Wrap(client)
	got := make(chan ElicitResult, 1)
	go func() {
		res, err := el.Elicit(context.Background(), ElicitRequest{RunID: "r", StepID: "approve", Message: "ok?"})
		if err != nil {
			t.Error(err)
		}
		got <- res
	}()
	<-client.asked
	p := waitPending(t, q, "r")
	if p.StepID != "approve" || p.Message != "ok?" {
		t.Errorf("pending = %+v; want step approve, message ok?", p)
	}
	if err := q.Answer("r", "approve", ElicitResult{Action: ElicitAccept, Content: map[string]any{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	if res := <-got; res.Action != ElicitAccept || res.Content["n"] != 1 {
		t.Errorf("Elicit = %+v; want the console's accept", res)
	}
	<-client.withdrawn
	if err := q.Answer("r", "approve", ElicitResult{Action: ElicitDecline}); !errors.Is(err, ErrNoQuestion) {
		t.Errorf("a second Answer = %v; want ErrNoQuestion", err)
	}
	if p := q.Pending("r"); len(p) != 0 {
		t.Errorf("pending after the answer = %v; want none", p)
	}
}

func TestQuestionsWithoutAClientWaitForTheAnswerOrTheTimeout(t *testing.T) {
	q := NewQuestions()
	el := q.Wrap(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := el.Elicit(ctx, ElicitRequest{RunID: "s", StepID: "x"})
		done <- err
	}()
	waitPending(t, q, "s")
	cancel() // the step's timeout
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Elicit after the step's context ended = %v; want context.Canceled", err)
	}
	if p := q.Pending("s"); len(p) != 0 {
		t.Errorf("pending after the timeout = %v; want none", p)
	}
}
