package mcpclient

import "syscall"

// backendProcAttr puts a stdio backend in a process group of its own (the
// terminal's Ctrl-C goes to vmcp, which shuts backends down in order, and
// Close can kill whatever the backend itself started) and, on Linux, has
// the kernel kill it if vmcp dies without closing it (kill -9, a crash).
func backendProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
