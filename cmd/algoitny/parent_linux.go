package main

import (
	"errors"
	"os"
	"syscall"
)

// dieWithParent asks the kernel to send this process SIGTERM when its parent
// dies (PR_SET_PDEATHSIG), so that `algoitny dev` under `make run` stops,
// and stops what it started, when `make` is killed on its own. A parent that
// died already is reported.
func dieWithParent() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno != 0 {
		return errno
	}
	if os.Getppid() == 1 {
		return errors.New("the parent process is gone")
	}
	return nil
}
