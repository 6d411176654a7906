//go:build !unix

package sqlite

import "os"

// lockFile is a no-op where flock is not available: two vmcp processes on
// one state file are then the operator's responsibility.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
}
