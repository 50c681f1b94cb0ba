package problempkg

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Bounds of what Open unpacks from a zip, so that a small archive cannot
// fill the disk (a zip bomb) or the inode table.
const (
	// MaxUnpackedBytes bounds the sum of the unpacked files' sizes.
	MaxUnpackedBytes = 2 << 30
	// MaxFiles bounds the number of entries.
	MaxFiles = 20000
)

// Open reads the package at path: a directory, or a zip of one (the
// package's files at the archive's root or in a single top-level
// directory). A zip is unpacked into a temporary directory that Close
// removes. The format is told by the files: problem.xml is Polygon,
// problem.yaml is ICPC.
//
// Errors: *Error for a package that cannot be read as either format (what
// is wrong and in which file), or an I/O error.
func Open(p string) (*Package, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return read(p, filepath.Base(filepath.Clean(p)))
	}
	dir, err := unzip(p)
	if err != nil {
		return nil, err
	}
	root, name, err := packageRoot(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	}
	pkg, err := read(root, name)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	pkg.cleanup = func() { _ = os.RemoveAll(dir) }
	return pkg, nil
}

// read reads the package in the directory root.
func read(root, name string) (*Package, error) {
	switch {
	case exists(filepath.Join(root, "problem.xml")):
		return readPolygon(root, name)
	case exists(filepath.Join(root, "problem.yaml")):
		return readICPC(root, name)
	}
	return nil, errorf("", "neither problem.yaml (ICPC package) nor problem.xml (Polygon package) found")
}

// packageRoot is dir, or its one subdirectory (and that directory's name)
// when the archive held a single top-level directory with the package in
// it.
func packageRoot(dir string) (root, name string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", "", err
	}
	var dirs []os.DirEntry
	for _, e := range entries {
		switch {
		case e.Name() == "problem.xml" || e.Name() == "problem.yaml":
			return dir, "", nil
		case e.IsDir() && !ignored(e.Name()):
			dirs = append(dirs, e)
		}
	}
	if len(dirs) == 1 {
		return filepath.Join(dir, dirs[0].Name()), dirs[0].Name(), nil
	}
	return dir, "", nil
}

// unzip unpacks the zip at p into a new temporary directory. Entries that
// would land outside it, symbolic links, and archives past MaxFiles or
// MaxUnpackedBytes are refused.
func unzip(p string) (string, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return "", errorf("", "not a directory nor a zip archive: %v", err)
	}
	defer func() { _ = zr.Close() }()
	if len(zr.File) > MaxFiles {
		return "", errorf("", "the archive has %d entries, more than %d", len(zr.File), MaxFiles)
	}
	dir, err := os.MkdirTemp("", "algoitny-package-")
	if err != nil {
		return "", err
	}
	budget := int64(MaxUnpackedBytes)
	for _, f := range zr.File {
		if err := unzipOne(dir, f, &budget); err != nil {
			_ = os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

func unzipOne(dir string, f *zip.File, budget *int64) error {
	name := path.Clean(strings.ReplaceAll(f.Name, `\`, "/"))
	if name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
		return errorf(f.Name, "an archive entry outside the package")
	}
	target := filepath.Join(dir, filepath.FromSlash(name))
	mode := f.Mode()
	switch {
	case mode.IsDir():
		return os.MkdirAll(target, 0o755)
	case !mode.IsRegular():
		return nil // symbolic links and devices are not unpacked
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	r, err := f.Open()
	if err != nil {
		return errorf(f.Name, "unreadable archive entry: %v", err)
	}
	defer r.Close()
	w, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644|(mode&0o111))
	if err != nil {
		return err
	}
	n, err := io.Copy(w, io.LimitReader(r, *budget+1))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errorf(f.Name, "unreadable archive entry: %v", err)
	}
	if *budget -= n; *budget < 0 {
		return errorf("", "the archive unpacks to more than %d bytes", int64(MaxUnpackedBytes))
	}
	return nil
}

// ignored says a file or directory name is not part of the package: the
// ICPC format ignores names that begin with a dot or a dash (.git,
// .gitignore) or hold other characters than letters, digits, '.', '_' and
// '-'.
func ignored(name string) bool {
	if name == "" || name[0] == '.' || name[0] == '-' {
		return true
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return true
		}
	}
	return false
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// readInside reads the file rel under root, refusing one whose real path
// (symbolic links followed) leaves root.
func readInside(root, rel string) ([]byte, error) {
	full, err := inside(root, rel)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(full)
}

// inside is the path of rel under root once symbolic links are followed,
// or an *Error when it leaves root.
func inside(root, rel string) (string, error) {
	full := filepath.Join(root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", errorf(rel, "missing")
		}
		return "", err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(realRoot, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", errorf(rel, "a link to a file outside the package")
	}
	return real, nil
}

// listDir lists the entries of dir that are part of a package, in
// lexicographic order (os.ReadDir sorts by name).
func listDir(dir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	kept := entries[:0]
	for _, e := range entries {
		if !ignored(e.Name()) {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

// loadProgram reads the program at rel (a file or a directory) under root.
// Its language comes from Detect; Main is the file that is compiled or run.
func loadProgram(root, rel string) (Program, error) {
	full, err := inside(root, rel)
	if err != nil {
		return Program{}, err
	}
	prog := Program{Name: strings.TrimSuffix(path.Base(rel), path.Ext(rel)), Path: rel}
	st, err := os.Stat(full)
	if err != nil {
		return Program{}, err
	}
	if !st.IsDir() {
		prog.Main = path.Base(rel)
		data, err := os.ReadFile(full)
		if err != nil {
			return Program{}, err
		}
		prog.Language, prog.why, _ = detect(map[string][]byte{prog.Main: data})
		return prog, nil
	}
	prog.Name = path.Base(rel)
	return prog, loadDirProgram(full, &prog)
}

// loadDirProgram fills prog from the files of a program directory: its
// language as problemtools chooses it, its entry point the one source file
// of that language (or __main__.py, main.*, the one holding main), the
// rest in Files.
func loadDirProgram(dir string, prog *Program) error {
	entries, err := listDir(dir)
	if err != nil {
		return err
	}
	prog.Files = map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue // nested directories of a program are not supported
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		prog.Files[e.Name()] = data
	}
	if prog.Files["build"] != nil || prog.Files["run"] != nil {
		prog.why = "programs with build and run scripts are not supported"
		return nil
	}
	var sources []string
	prog.Language, prog.why, sources = detect(prog.Files)
	if prog.why != "" {
		return nil
	}
	main, err := entryPoint(prog.Files, sources)
	if err != nil {
		return errorf(prog.Path, "%v", err)
	}
	prog.Main = main
	delete(prog.Files, main)
	return nil
}

// entryPoint chooses the source a multi-file program starts from.
func entryPoint(files map[string][]byte, sources []string) (string, error) {
	if len(sources) == 0 {
		return "", fmt.Errorf("no source file of a known language")
	}
	if len(sources) == 1 {
		return sources[0], nil
	}
	for _, name := range []string{"__main__.py", "main.py", "main.js", "main.php"} {
		if _, ok := files[name]; ok {
			return name, nil
		}
	}
	var withMain []string
	for _, s := range sources {
		if hasMainFunction(files[s]) {
			withMain = append(withMain, s)
		}
	}
	if len(withMain) == 1 {
		return withMain[0], nil
	}
	return "", fmt.Errorf("cannot tell which of %s is the program's entry point", strings.Join(sources, ", "))
}

// joinRel is the path of rel (forward slashes) under root.
func joinRel(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
