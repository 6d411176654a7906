// Package lazyre holds regular expressions that are compiled on first
// use instead of when the program starts.
//
// The compiler and the engine rewrite the messages of the libraries they
// use (text/template, go-jmespath) with regular expressions that only an
// error ever needs. Compiled at init, they cost every process, a run
// that never fails included, its startup time and about 60 KB of live
// heap that each garbage collection marks again.
package lazyre
