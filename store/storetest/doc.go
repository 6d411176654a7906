// Package storetest is the conformance suite every runtime.Store must pass.
//
// In: a function that opens a fresh, empty store for a test. Out: subtests
// of the caller's *testing.T that create, update, finish, read and list runs
// and fail with a statement of what the store did wrong. Entry point: Run.
//
// The suite pins down the contract in runtime/api.go that the engine and the
// HTTP API rely on: records survive the round trip (times compared with
// time.Time.Equal, outputs as JSON values), returned runs are copies, unknown
// ids give runtime.ErrRunNotFound, lists are newest first and honour the
// workflow, status and limit filters, and concurrent writers neither race nor
// lose updates (run the suite under -race).
package storetest
