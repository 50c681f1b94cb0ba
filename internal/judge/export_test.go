package judge

import "path/filepath"

// HeldPIDs returns the host pids of e's held sandboxes (bwrap and the
// supervisor of each): the processes of the engine's uids that may live
// between runs.
func HeldPIDs(e *Engine) []int { return e.sb.HeldPIDs() }

// Executable returns the path of p's built executable on the host, for
// running the very same binary without the judge.
func Executable(p *Program) string { return filepath.Join(p.build, "main") }
