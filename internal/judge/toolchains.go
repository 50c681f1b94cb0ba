package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/algoitny/api/internal/judge/sandbox"
)

// toolchainCacheFile, in the engine's CacheDir, remembers the version line
// of every toolchain whose check passed in the sandbox. A version check
// starts the toolchain (kotlinc -version is a JVM loading the compiler:
// ~3 s of CPU), and every engine start checks every language: a server's
// start-up, each worker process, and each of a test suite's many servers
// paid for it. A language is checked again when any of its tools' files
// changes (an upgrade), when its command or the engine's sandbox settings
// change, when its last check failed, and once a day (what a tool loads,
// its libraries, is not in the key); delete the file to check everything
// again.
const toolchainCacheFile = "toolchains.json"

// toolchainCacheVersion is part of every key: raise it when what makes a
// check pass changes in a way the key does not see (the sandbox's mounts,
// say) so that old entries no longer match.
const toolchainCacheVersion = 2

// toolchainCheckLife is how long a passed check is trusted.
const toolchainCheckLife = 24 * time.Hour

// toolchainCheck is one remembered check that passed.
type toolchainCheck struct {
	Version   string    `json:"version"`
	CheckedAt time.Time `json:"checkedAt"`
}

// toolchainKey is the key of l's check on this engine (toolchainKeyOf).
func (e *Engine) toolchainKey(l Language) (key string, ok bool) {
	return toolchainKeyOf(e.sb.Fingerprint(), e.cfg.CompileLimits, l)
}

// toolchainKeyOf fingerprints what a language's version check depends on:
// the sandbox (sandbox.Sandbox.Fingerprint: mode, bwrap, uid switching,
// what is mounted), the compile limits, the command and its environment,
// and each tool's file (resolved path, size, modification time), hashed.
// ok is false when a tool cannot be found (the check reports that itself).
func toolchainKeyOf(sb []any, compile Limits, l Language) (key string, ok bool) {
	parts := []any{toolchainCacheVersion, sb, compile, l.versionArgs(), l.Env}
	for _, tool := range l.tools() {
		p, err := sandbox.LookPath(tool)
		if err != nil {
			return "", false
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		fi, err := os.Stat(p)
		if err != nil {
			return "", false
		}
		parts = append(parts, p, fi.Size(), fi.ModTime().UnixNano())
	}
	b, err := json.Marshal(parts)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(b)
	return l.ID + "-" + hex.EncodeToString(sum[:12]), true
}

// loadToolchains returns the remembered checks by key that are still
// young enough (empty when the file is missing or unreadable: everything
// is checked).
func (e *Engine) loadToolchains(now time.Time) map[string]toolchainCheck {
	known := map[string]toolchainCheck{}
	b, err := os.ReadFile(filepath.Join(e.sb.CacheDir(), toolchainCacheFile))
	if err == nil {
		_ = json.Unmarshal(b, &known) // a cache that does not parse only means checking again
	}
	for k, c := range known {
		if now.Sub(c.CheckedAt) > toolchainCheckLife || c.CheckedAt.After(now) {
			delete(known, k)
		}
	}
	return known
}

// saveToolchains writes the checks that passed, atomically (engines in
// other processes read the file at any time). A failure to write only
// means checking again next time.
func (e *Engine) saveToolchains(known map[string]toolchainCheck) {
	b, err := json.MarshalIndent(known, "", "  ")
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(e.sb.CacheDir(), toolchainCacheFile+".*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), filepath.Join(e.sb.CacheDir(), toolchainCacheFile)); err != nil {
		os.Remove(tmp.Name())
	}
}
