package devstack

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// State says where the stack of a running `make run` (`algoitny dev`) is, so
// that the other subcommands of the same checkout (`admin`, `migrate`,
// `seed-plans`, `worker`, `serve`) reach the same DynamoDB tables, the same
// PostgreSQL database and the same change channel without being told, and
// a second `make run` can say what is running instead of starting another
// DynamoDB Local on the same data. It is written to stack.json in the data
// directory once the stack is up, and counts only while the stack holds the
// data directory's lock.
type State struct {
	// Pid is the `algoitny dev` process; DynamoDBPid its DynamoDB Local
	// (0 when DYNAMODB_ENDPOINT named another).
	Pid, DynamoDBPid int
	// API is the GraphQL endpoint, e.g. http://localhost:8080/query.
	API string
	// DynamoDB is the endpoint, DatabaseURL the PostgreSQL database.
	DynamoDB, DatabaseURL string
	// TablePrefix, RiverSchema and PubsubChannel are the dev server's, ""
	// for the defaults.
	TablePrefix, RiverSchema, PubsubChannel string
	Started                                 time.Time
}

const (
	stateFile = "stack.json"
	lockFile  = "stack.lock"
)

// DataDir is where `make run` keeps its data: ALGOITNY_DATA_DIR, else .data
// in the checkout (the directory of the nearest go.mod).
func DataDir() (string, error) {
	if d := os.Getenv("ALGOITNY_DATA_DIR"); d != "" {
		return filepath.Abs(d)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".data"), nil
}

// Claim is the lock of a data directory held by a running `make run`.
type Claim struct {
	dir  string
	lock *os.File
}

// ErrRunning is returned by ClaimDataDir when a stack already runs on the
// data directory; the *RunningError says which.
var ErrRunning = errors.New("a make run stack is already running")

// RunningError says what runs on a data directory.
type RunningError struct {
	Dir   string
	State *State // nil while the other stack is still starting
}

func (e *RunningError) Error() string {
	if e.State == nil {
		return fmt.Sprintf("another `make run` is starting on %s; stop it first", e.Dir)
	}
	s := e.State
	return fmt.Sprintf("`make run` is already running on %s (pid %d, since %s): API %s, DynamoDB %s; use it, or stop it first (Ctrl-C in its terminal, or kill %d)",
		e.Dir, s.Pid, s.Started.Format(time.DateTime), s.API, s.DynamoDB, s.Pid)
}

func (e *RunningError) Is(target error) bool { return target == ErrRunning }

// ClaimDataDir takes dir's lock for this process, or returns a
// *RunningError naming the stack that holds it. The lock is the kernel's
// (flock): it goes with the process, however it ends.
func ClaimDataDir(dir string) (*Claim, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			st, _ := readState(dir)
			return nil, &RunningError{Dir: dir, State: st}
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	os.Remove(filepath.Join(dir, stateFile)) // a crashed run's
	return &Claim{dir: dir, lock: f}, nil
}

// Publish writes the stack's state for the other subcommands.
func (c *Claim) Publish(s State) error {
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(c.dir, stateFile))
}

// Release removes the state and lets the data directory go.
func (c *Claim) Release() {
	os.Remove(filepath.Join(c.dir, stateFile))
	c.lock.Close()
}

// Running returns the state of the stack running on dir, or nil when none
// is (no state, or its lock is free: the stack ended without cleaning up).
func Running(dir string) (*State, error) {
	st, err := readState(dir)
	if err != nil || st == nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, lockFile))
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return nil, nil // nobody holds it
	}
	return st, nil
}

func readState(dir string) (*State, error) {
	raw, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	return &st, nil
}

var notIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// DatabaseName is the PostgreSQL database of the stack on dataDir:
// algoitny_<checkout>_<hash of the path>, so two checkouts on one machine
// have their own job queue and channels.
func DatabaseName(dataDir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(dataDir)))
	base := filepath.Base(filepath.Dir(filepath.Clean(dataDir)))
	if filepath.Base(dataDir) != ".data" {
		base = filepath.Base(dataDir)
	}
	base = strings.Trim(notIdent.ReplaceAllString(strings.ToLower(base), "_"), "_")
	if len(base) > 30 {
		base = base[:30]
	}
	if base == "" {
		base = "checkout"
	}
	return "algoitny_" + base + "_" + hex.EncodeToString(sum[:4])
}
