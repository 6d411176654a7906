package temporalrun

// Elicitation on Temporal. An elicitation step cannot ask anyone from a
// worker: the client is connected to the vmcp run process. So the step
// opens a question (numbered, shown by the run query), the vmcp run
// process that follows the run asks its client (follow.go) and sends the
// answer back as a Temporal update, validated against the open question;
// the step waits for it with a workflow timer as its timeout.

import (
	"fmt"

	"github.com/vmcp-dev/vmcp/runtime"
)

// questions is a run's elicitation state (the workflow's coroutine only).
type questions struct {
	seq     int
	open    []Question // in the order asked
	answers map[int]Answer
}

// ask opens a question for req.
func (q *questions) ask(req runtime.ElicitRequest) Question {
	q.seq++
	qu := Question{Seq: q.seq, StepID: req.StepID, Message: req.Message, Schema: req.Schema}
	q.open = append(q.open, qu)
	return qu
}

// close withdraws question seq (answered, timed out or stopped).
func (q *questions) close(seq int) {
	for k, o := range q.open {
		if o.Seq == seq {
			q.open = append(q.open[:k:k], q.open[k+1:]...)
			break
		}
	}
	delete(q.answers, seq)
}

// list is the open questions.
func (q *questions) list() []Question { return append([]Question(nil), q.open...) }

// validate refuses an answer to a question that is not open, or answered
// already, so a late or duplicated answer never lands in the history.
func (q *questions) validate(a Answer) error {
	if _, done := q.answers[a.Seq]; done {
		return fmt.Errorf("question %d is answered already", a.Seq)
	}
	for _, o := range q.open {
		if o.Seq == a.Seq {
			return nil
		}
	}
	return fmt.Errorf("question %d is not open (the step may have timed out, or it was answered)", a.Seq)
}
