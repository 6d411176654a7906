package temporalrun

// Elicitation on Temporal. An elicitation step cannot ask anyone from a
// worker: the client is connected to the vmcp run process. So the step
// opens a question (numbered, shown by the run query), the vmcp run
// process that follows the run asks its client (follow.go) and sends the
// answer back as a Temporal update, validated against the open question;
// the step waits for it with a workflow timer as its timeout.

import (
	"fmt"
)

// questions is a run's elicitation state (the workflow's coroutine only).
type questions struct {
	seq     int
	open    *Question
	answers map[int]Answer
}

// validate refuses an answer to a question that is not open, so a late or
// duplicated answer never lands in the history.
func (q *questions) validate(a Answer) error {
	if q.open == nil || a.Seq != q.open.Seq {
		return fmt.Errorf("question %d is not open (the step may have timed out, or it was answered)", a.Seq)
	}
	return nil
}
