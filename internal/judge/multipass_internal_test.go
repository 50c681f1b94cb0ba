package judge

import (
	"os"
	"path/filepath"
	"testing"
)

// TestShareFeedback: what one pass's validator left in its feedback
// directory becomes writable by the next pass's, which may run as another
// uid; a link it left there is not followed.
func TestShareFeedback(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "secret")
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{filepath.Join(dir, "judgemessage.txt"), 0o644}, {outside, 0o600}} {
		if err := os.WriteFile(f.path, []byte("x"), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	shareFeedback(dir)
	for path, want := range map[string]os.FileMode{
		filepath.Join(dir, "judgemessage.txt"): 0o666,
		filepath.Join(dir, "state"):            0o777 | os.ModeDir,
		outside:                                0o600,
	} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, st.Mode(), want)
		}
	}
}
