package judge_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// TestDefaultLanguages: the built-in table (languages.json) parses, with
// unique ids, and every language can be warmed and is found by its files.
func TestDefaultLanguages(t *testing.T) {
	t.Parallel()
	langs := judge.DefaultLanguages()
	want := []string{"python", "c", "cpp", "cpp20", "java", "go", "javascript", "rust", "kotlin",
		"pypy3", "csharp", "ruby", "php", "haskell"}
	if len(langs) != len(want) {
		t.Fatalf("%d built-in languages, want %d", len(langs), len(want))
	}
	for i, l := range langs {
		if l.ID != want[i] || l.Warm == "" || l.Name == "" || len(l.Run) == 0 {
			t.Errorf("language %d: %+v, want %s with a name, a run command and a warm-up program", i, l, want[i])
		}
	}
	// Each call is a table of its own.
	langs[0].Run[0] = "changed"
	if judge.DefaultLanguages()[0].Run[0] == "changed" {
		t.Fatal("DefaultLanguages shares its slices between calls")
	}
	java := langs[4]
	if java.ExtraTime != time.Second || java.ExtraMemoryBytes != 96<<20 || java.ExtraProcesses != 31 || java.MemoryPolicy != judge.MemoryResident {
		t.Fatalf("java's allowances %+v", java)
	}
}

// writeTable writes a language table file and returns its path.
func writeTable(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "languages.json")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadLanguages: an operator's table replaces languages by id, adds
// new ones after the built-in ones, removes disabled ones, or replaces the
// whole table; a malformed one is refused with ErrInvalidInput naming the
// language.
func TestLoadLanguages(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		langs, err := judge.LoadLanguages(writeTable(t, `{"languages": [
			{"id": "cpp", "name": "C++17 (clang)", "source": "main.cpp", "compile": ["clang++", "-O2", "-o", "main", "main.cpp"],
			 "run": ["{dir}/main"], "memory": "address-space", "addressSpaceSlack": "32MiB", "timeFactor": 1.5, "extraTime": "250ms"},
			{"id": "kotlin", "disabled": true},
			{"id": "zig", "name": "Zig", "source": "main.zig", "compile": ["zig", "build-exe", "main.zig"], "run": ["{dir}/main"],
			 "memory": "data-segment", "sandboxPaths": ["/opt/zig"], "sandboxEtc": ["zig"], "extensions": [".zig"]}
		]}`))
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, l := range langs {
			ids = append(ids, l.ID)
		}
		if got := strings.Join(ids, " "); got != "python c cpp cpp20 java go javascript rust pypy3 csharp ruby php haskell zig" {
			t.Fatalf("ids %s", got)
		}
		cpp := langs[2]
		if cpp.Name != "C++17 (clang)" || cpp.AddressSpaceSlackBytes != 32<<20 || cpp.TimeFactor != 1.5 || cpp.ExtraTime != 250*time.Millisecond {
			t.Fatalf("cpp %+v", cpp)
		}
		if zig := langs[len(langs)-1]; zig.MemoryPolicy != judge.MemoryDataSegment || zig.SandboxPaths[0] != "/opt/zig" ||
			judge.LanguageForFileIn(langs, "a.zig") != "zig" {
			t.Fatalf("zig %+v", zig)
		}
	})

	t.Run("Replace", func(t *testing.T) {
		t.Parallel()
		langs, err := judge.LoadLanguages(writeTable(t, `{"replace": true, "languages": [
			{"id": "python", "name": "Python 3", "source": "main.py", "run": ["python3", "{dir}/main.py"], "memory": "address-space"}]}`))
		if err != nil || len(langs) != 1 || langs[0].ID != "python" || langs[0].Compile != nil {
			t.Fatalf("replaced table %+v (%v), want python alone", langs, err)
		}
	})

	t.Run("Default", func(t *testing.T) {
		t.Parallel()
		langs, err := judge.LoadLanguages("")
		if err != nil || len(langs) != len(judge.DefaultLanguages()) {
			t.Fatalf("no file: %d languages (%v)", len(langs), err)
		}
	})

	valid := `"name": "X", "source": "main.x", "run": ["x"], "memory": "address-space"`
	for name, table := range map[string]string{
		"UnknownKey":        `{"languages": [{"id": "x", ` + valid + `, "extraMemroy": "1MiB"}]}`,
		"BadID":             `{"languages": [{"id": "X Y", ` + valid + `}]}`,
		"NoRun":             `{"languages": [{"id": "x", "name": "X", "source": "main.x", "memory": "resident"}]}`,
		"BadMemoryPolicy":   `{"languages": [{"id": "x", "name": "X", "source": "main.x", "run": ["x"], "memory": "rss"}]}`,
		"BadSize":           `{"languages": [{"id": "x", ` + valid + `, "extraMemory": "96MB"}]}`,
		"BadDuration":       `{"languages": [{"id": "x", ` + valid + `, "extraTime": "a second"}]}`,
		"SourceWithPath":    `{"languages": [{"id": "x", "name": "X", "source": "../main.x", "run": ["x"], "memory": "resident"}]}`,
		"RelativePath":      `{"languages": [{"id": "x", ` + valid + `, "sandboxPaths": ["opt/x"]}]}`,
		"EtcOutside":        `{"languages": [{"id": "x", ` + valid + `, "sandboxEtc": ["../shadow"]}]}`,
		"BadEnv":            `{"languages": [{"id": "x", ` + valid + `, "env": ["NOEQUALS"]}]}`,
		"Twice":             `{"languages": [{"id": "x", ` + valid + `}, {"id": "x", ` + valid + `}]}`,
		"DisabledUnknown":   `{"languages": [{"id": "cobol", "disabled": true}]}`,
		"Empty":             `{"replace": true, "languages": []}`,
		"NotJSON":           `languages: [x]`,
		"TrailingValue":     `{"languages": []} {}`,
		"NegativeProcesses": `{"languages": [{"id": "x", ` + valid + `, "extraProcesses": -1}]}`,
	} {
		t.Run("ErrInvalidInput_"+name, func(t *testing.T) {
			t.Parallel()
			_, err := judge.LoadLanguages(writeTable(t, table))
			if !errors.Is(err, judge.ErrInvalidInput) {
				t.Fatalf("err %v, want ErrInvalidInput", err)
			}
		})
	}
	t.Run("ErrInvalidInput_Missing", func(t *testing.T) {
		t.Parallel()
		if _, err := judge.LoadLanguages(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, judge.ErrInvalidInput) {
			t.Fatalf("err %v, want ErrInvalidInput", err)
		}
	})
}
