//go:build !linux

package mcpclient

import "syscall"

// backendProcAttr puts a stdio backend in a process group of its own; see
// the Linux version, which also sets a parent-death signal.
func backendProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
