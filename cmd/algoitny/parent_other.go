//go:build !linux

package main

// dieWithParent is Linux only; elsewhere `make run` relies on Ctrl-C
// reaching the whole process group.
func dieWithParent() error { return nil }
