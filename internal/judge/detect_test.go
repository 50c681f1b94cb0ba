package judge_test

import (
	"errors"
	"testing"

	"github.com/algoitny/api/internal/judge"
)

// TestDetectLanguage chooses programs' languages as problemtools does.
func TestDetectLanguage(t *testing.T) {
	t.Parallel()
	f := func(name, head string) judge.ProgramFile { return judge.ProgramFile{Name: name, Head: []byte(head)} }
	for _, tc := range []struct {
		name         string
		files        []judge.ProgramFile
		problemtools string
		language     string
	}{
		{"CC", []judge.ProgramFile{f("submissions/accepted/a.cc", "")}, "cpp", "cpp20"},
		{"CPP", []judge.ProgramFile{f("sol.cpp", "#include <bits/stdc++.h>")}, "cpp", "cpp20"},
		{"CapitalC", []judge.ProgramFile{f("sol.C", "")}, "cpp", "cpp20"},
		// C, Haskell and Objective C all take *.c: C's priority wins.
		{"C", []judge.ProgramFile{f("sol.c", "")}, "c", "c"},
		{"Python3", []judge.ProgramFile{f("sol.py", "import sys\n")}, "python3", "python"},
		{"Python3Shebang", []judge.ProgramFile{f("sol.py", "#!/usr/bin/env python3\nprint(1)\n")}, "python3", "python"},
		// A helper without a shebang goes with the program's language.
		{"Python2Shebang", []judge.ProgramFile{f("sol.py", "#!/usr/bin/env python2\nprint 1\n")}, "python2", ""},
		{"Python2File", []judge.ProgramFile{f("sol.py2", "print 1\n")}, "python2", ""},
		{"Python2MajorityOfFiles", []judge.ProgramFile{f("a.py", "#!/usr/bin/python2\n"), f("b.py", "#!/usr/bin/python2\n"), f("c.py", "")}, "python3", "python"},
		{"HaskellWithC", []judge.ProgramFile{f("Main.hs", ""), f("ffi.c", "")}, "haskell", "haskell"},
		{"Java", []judge.ProgramFile{f("Main.java", ""), f("README.md", "")}, "java", "java"},
		{"CSharp", []judge.ProgramFile{f("a.cs", "")}, "csharp", "csharp"},
		{"Ruby", []judge.ProgramFile{f("a.rb", "")}, "ruby", "ruby"},
		{"PHP", []judge.ProgramFile{f("a.php", "<?php")}, "php", "php"},
		{"Kotlin", []judge.ProgramFile{f("a.kt", "")}, "kotlin", "kotlin"},
		{"Rust", []judge.ProgramFile{f("a.rs", "")}, "rust", "rust"},
		{"Go", []judge.ProgramFile{f("a.go", "")}, "go", "go"},
		{"JavaScript", []judge.ProgramFile{f("a.js", "")}, "javascript", "javascript"},
		{"Pascal", []judge.ProgramFile{f("a.pas", "")}, "pascal", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := judge.DetectLanguage(tc.files, nil)
			if d.Problemtools != tc.problemtools || d.Language != tc.language || len(d.Files) == 0 {
				t.Fatalf("detected %+v (%v), want %s judged as %q", d, err, tc.problemtools, tc.language)
			}
			if tc.language == "" && !errors.Is(err, judge.ErrUnknownLanguage) {
				t.Fatalf("an unsupported language: err %v, want ErrUnknownLanguage", err)
			}
			if tc.language != "" && err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("ErrUnknownLanguage_NoSource", func(t *testing.T) {
		t.Parallel()
		if _, err := judge.DetectLanguage([]judge.ProgramFile{f("notes.txt", "")}, nil); !errors.Is(err, judge.ErrUnknownLanguage) {
			t.Fatalf("err %v, want ErrUnknownLanguage", err)
		}
	})
	t.Run("OperatorTable", func(t *testing.T) {
		t.Parallel()
		// The table decides which of its languages judges C++.
		langs := judge.DefaultLanguages()
		for i := range langs {
			langs[i].Problemtools = ""
			if langs[i].ID == "cpp" {
				langs[i].Problemtools = "cpp"
			}
		}
		if d, err := judge.DetectLanguage([]judge.ProgramFile{f("a.cc", "")}, langs); err != nil || d.Language != "cpp" {
			t.Fatalf("detected %+v (%v), want cpp", d, err)
		}
	})
}
