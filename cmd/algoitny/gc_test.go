package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCgroupMemoryLimit: v2's memory.max and v1's limit_in_bytes are read;
// "max", v1's unlimited and a missing file are no limit.
func TestCgroupMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		file, content string
		want          int64
	}{
		{"memory.max", "1073741824\n", 1 << 30},
		{"memory.max", "max\n", 0},
		{"memory/memory.limit_in_bytes", "536870912\n", 512 << 20},
		{"memory/memory.limit_in_bytes", "9223372036854771712\n", 0},
		{"", "", 0},
	} {
		root := t.TempDir()
		if c.file != "" {
			path := filepath.Join(root, c.file)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := cgroupMemoryLimit(root); got != c.want {
			t.Errorf("%s = %q: %d, want %d", c.file, c.content, got, c.want)
		}
	}
}
