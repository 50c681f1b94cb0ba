//go:build unix

package httpserver

import "syscall"

// RaiseOpenFileLimit raises the process's soft limit on open files
// (RLIMIT_NOFILE) to its hard limit, where it is lower, and returns the
// soft limit in force. Each socket is an open file: a low soft limit
// (often 1,024) would make accept fail long before memory runs out. Go's
// runtime does the same at start (to one below the hard limit, which is
// left as it is, so that the programs the judge starts keep the original
// limit); this makes sure of it and tells what the limit is, which the
// socket caps are sized from (DefaultSocketLimits). Raising the hard limit
// itself is the operator's (ulimit -Hn, systemd LimitNOFILE=).
func RaiseOpenFileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Max == 0 || lim.Cur >= lim.Max-1 {
		return uint64(lim.Cur), nil
	}
	raised := lim
	raised.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
		return uint64(lim.Cur), err
	}
	return uint64(raised.Cur), nil
}
