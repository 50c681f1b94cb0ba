//go:build !unix

package httpserver

// RaiseOpenFileLimit has nothing to raise on this system; 0 means unknown.
func RaiseOpenFileLimit() (uint64, error) { return 0, nil }
