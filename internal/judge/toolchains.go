package judge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// toolchainCacheFile, in the engine's CacheDir, remembers the version line
// of every toolchain whose check passed in the sandbox. A version check
// starts the toolchain (kotlinc -version is a JVM loading the compiler:
// ~3 s of CPU), and every engine start checks every language: a server's
// start-up, each worker process, and each of a test suite's many servers
// paid for it. A language is checked again when any of its tools' files
// changes (an upgrade), when its command changes, and whenever its last
// check failed; delete the file to check everything again.
const toolchainCacheFile = "toolchains.json"

// toolchainCacheVersion is part of every key: raise it when what makes a
// check pass changes (the sandbox's mounts, say) so that old entries no
// longer match.
const toolchainCacheVersion = 1

// toolchainKey fingerprints what a language's version check depends on:
// the sandbox mode, the command and its environment, and each tool's file
// (resolved path, size, modification time). ok is false when a tool
// cannot be found (the check reports that itself).
func (e *Engine) toolchainKey(l Language) (key string, ok bool) {
	parts := []string{fmt.Sprint("v", toolchainCacheVersion), fmt.Sprint("sandboxed=", e.sandboxed),
		strings.Join(l.versionArgs(), " "), strings.Join(l.Env, " ")}
	for _, tool := range l.tools() {
		p, err := lookSandboxPath(tool)
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
		parts = append(parts, fmt.Sprintf("%s:%d:%d", p, fi.Size(), fi.ModTime().UnixNano()))
	}
	return strings.Join(parts, "|"), true
}

// loadToolchains returns the remembered version lines by key (empty when
// the file is missing or unreadable: everything is checked).
func (e *Engine) loadToolchains() map[string]string {
	known := map[string]string{}
	b, err := os.ReadFile(filepath.Join(e.cacheDir, toolchainCacheFile))
	if err == nil {
		json.Unmarshal(b, &known)
	}
	return known
}

// saveToolchains writes the version lines of the checks that passed,
// atomically (engines in other processes read the file at any time). A
// failure to write only means checking again next time.
func (e *Engine) saveToolchains(known map[string]string) {
	b, err := json.MarshalIndent(known, "", "  ")
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(e.cacheDir, toolchainCacheFile+".*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), filepath.Join(e.cacheDir, toolchainCacheFile)); err != nil {
		os.Remove(tmp.Name())
	}
}
