package sandbox

import (
	"strings"
	"testing"
)

// TestBwrapHint: what bwrap prints in a container leads to the container's
// settings, not only to the host's sysctls (the messages of bubblewrap 0.8,
// measured in Docker 20.10 with its default profile and masked /proc).
func TestBwrapHint(t *testing.T) {
	for _, c := range []struct{ stderr, want string }{
		{"bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.", "seccomp profile"},
		{"bwrap: Can't mount proc on /newroot/proc: Operation not permitted", "fully visible procfs"},
		{"exit 1: something else", "unprivileged user namespaces"},
	} {
		if got := bwrapHint(c.stderr); !strings.Contains(got, c.want) {
			t.Errorf("bwrapHint(%q) = %q, want it to mention %q", c.stderr, got, c.want)
		}
	}
}
