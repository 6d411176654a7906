// Command testbackend is an MCP server (stdio, or streamable HTTP with
// -http ADDR) for vmcp's end-to-end tests and benchmarks. Its tools
// misbehave on request so the tests can watch vmcp cope:
//
//	echo   {text}            returns {text} at once (the benchmark's tool)
//	add    {a, b}            returns {sum}
//	sleep  {ms, label}       waits, or stops when the call is cancelled
//	fail   {message}         returns an isError result
//	crash  {after_ms}        kills the whole process mid-call
//	hang   {}                never answers and ignores cancellation
//	pid    {}                returns {pid} of this process
//	keys   {any...}          returns {keys}, the number of arguments
//
// echo and add declare themselves read-only, not destructive, idempotent
// and closed-world; the others keep mcp-go's default annotations.
//
// With -faults it also serves:
//
//	big    {bytes}           returns a text result of that many bytes
//	stop_reading {}          answers, then never reads stdin again (stdio):
//	                         vmcp's writes to it block once the pipe is full
//
// With -gated it also serves:
//
//	gated  {label, gate}     records "call LABEL", then waits until the file
//	                         gate exists (when given), then returns {label}
//	gated_idempotent         the same, declaring idempotentHint: true
//
// With -init-delay D it waits D before serving, so initialize is answered
// D late: a backend slow to come up (an npm server booting).
// With -askers it also serves testservers.AddAskers's tools: ask and
// ask_mrtr put a question to the caller, sample and sample_mrtr ask for
// sampling.
//
// With -record FILE, sleep appends "start LABEL", "done LABEL" or
// "cancelled LABEL" lines to FILE, so a test can see that a cancel reached
// the backend, and gated "call LABEL" lines, so a test can count calls.
// With -http and -record-auth FILE, every HTTP request appends "METHOD
// AUTHORIZATION" to FILE ("-" without the header), so a test can see
// which credentials reached the backend.
package main
