package calibrate

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"logjam/internal/childbin"
	"logjam/internal/cpuslot"
	"logjam/internal/owndir"
)

// extSources is the extension: ext/logjamext.cpp, the one file compiled,
// and the parts it includes (ext/*.hpp, one job each: a unity build, so the
// parts share one anonymous namespace and the build stays one g++ run).
//
//go:embed ext
var extSources embed.FS

// extFiles is every file of ext/ with its bytes, in name order: what the
// build writes beside logjamext.cpp and what its cache key hashes.
func extFiles() ([]extFile, error) {
	ents, err := extSources.ReadDir("ext")
	if err != nil {
		return nil, err
	}
	var files []extFile
	for _, e := range ents {
		b, err := extSources.ReadFile("ext/" + e.Name())
		if err != nil {
			return nil, err
		}
		files = append(files, extFile{e.Name(), b})
	}
	return files, nil
}

type extFile struct {
	name string
	b    []byte
}

// HeaderSource is logjam.hpp, the sink a binding includes; the extension
// includes it as is.
//
//go:embed include/logjam/logjam.hpp
var HeaderSource []byte

//go:embed run_row.py
var driverSource []byte

//go:embed bench/sinkbench.cpp
var benchSource []byte

//go:embed bench/drive.py
var benchDriver []byte

// BuildBench compiles bench/sinkbench.cpp (the header's per-line cost in
// C++) for in into a fresh directory under the cache and returns it with
// the driver's path (drive.py, run with the directory on PYTHONPATH).
func BuildBench(in Interpreter) (dir, driver string, err error) {
	if in.Missing != "" {
		return "", "", fmt.Errorf("python %s: %s", in.Version, in.Missing)
	}
	cxx, err := Compiler()
	if err != nil {
		return "", "", fmt.Errorf("no C++ compiler (g++ or $CXX): %w", err)
	}
	if err := owndir.Ensure(CacheDir()); err != nil {
		return "", "", fmt.Errorf("the calibration cache: %w", err)
	}
	dir, err = os.MkdirTemp(CacheDir(), "bench-"+in.Version+"-")
	if err != nil {
		return "", "", err
	}
	inc := filepath.Join(dir, "include")
	src := filepath.Join(dir, "sinkbench.cpp")
	driver = filepath.Join(dir, "drive.py")
	for _, f := range []struct {
		path string
		b    []byte
	}{{filepath.Join(inc, "logjam", "logjam.hpp"), HeaderSource}, {src, benchSource}, {driver, benchDriver}} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(f.path, f.b, 0o644); err != nil {
			return "", "", err
		}
	}
	cmd := exec.Command(cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-I"+inc, "-I"+in.Include, src, "-o", filepath.Join(dir, "sinkbench"+in.ExtSuffix), "-lpthread")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building sinkbench for python %s: %v\n%s", in.Version, err, b)
	}
	return dir, driver, nil
}

// Pybind11Include is the directory holding pybind11/iostream.h
// ($LOGJAM_PYBIND11_INCLUDE, else /usr/include from Debian's pybind11-dev),
// or "" when there is none.
func Pybind11Include() string {
	for _, d := range []string{os.Getenv("LOGJAM_PYBIND11_INCLUDE"), "/usr/include"} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "pybind11", "iostream.h")); err == nil {
			return d
		}
	}
	return ""
}

// Pythonbuf says which pythonbuf the extension built in dir uses.
func Pythonbuf(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "pythonbuf.txt"))
	return string(b)
}

// CacheDir is where built extensions live: $LOGJAM_CALIBRATE_CACHE, or
// logjam-calibrate under the user cache directory (without one, a
// per-user logjam-calibrate-UID under the temp dir). Every use checks it is
// a directory only this user can write (owndir).
func CacheDir() string {
	if d := os.Getenv("LOGJAM_CALIBRATE_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "logjam-calibrate")
	}
	return owndir.TempPath("logjam-calibrate")
}

// soSumFile holds the SHA-256 of a cache entry's extension, written when
// it was built and checked before every reuse.
const soSumFile = "logjamext.sha256"

// keptExtension reports whether dir holds an extension so that hashes to
// what was written beside it when it was built, in a directory only this
// user can write; an entry that does not is removed (and rebuilt).
func keptExtension(dir, so string) bool {
	if _, err := os.Stat(so); err != nil {
		return false
	}
	want, err := os.ReadFile(filepath.Join(dir, soSumFile))
	got, herr := fileSum(so)
	if err != nil || herr != nil || owndir.Check(dir) != nil || strings.TrimSpace(string(want)) != got {
		fmt.Fprintf(os.Stderr, "calibrate: the cached extension %s is not what was built here: removed, rebuilt\n", so)
		_ = os.RemoveAll(dir)
		return false
	}
	return true
}

func fileSum(path string) (string, error) { return childbin.Digest(path) }

// Compiler is the C++ compiler: $CXX or g++.
func Compiler() (string, error) {
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	return exec.LookPath(cxx)
}

// Builds: one at a time for each cache entry (a lock each), side by side
// for different interpreters; an entry this process made or checked is
// not checked again.
var (
	buildMu      sync.Mutex
	buildEntries = map[string]*buildEntry{}
)

// buildEntry is one cache entry's build: held while it is made or
// checked; done once it was.
type buildEntry struct {
	sync.Mutex
	done bool
}

// entryFor is the build of the cache entry dir.
func entryFor(dir string) *buildEntry {
	buildMu.Lock()
	defer buildMu.Unlock()
	if buildEntries[dir] == nil {
		buildEntries[dir] = &buildEntry{}
	}
	return buildEntries[dir]
}

// Build compiles the extension for in into the cache (keyed by its
// sources, the header, the driver and the interpreter) and returns the
// directory to put on PYTHONPATH: it holds logjamext and run_row.py.
func Build(in Interpreter) (string, error) { return BuildSink(in, nil) }

// UserSink is a sink of someone's own: a C++ file that includes
// logjam/logjam.hpp and defines logjam::Sink *logjam_make_sink()
// (docs/SINK.md); the extension plays it as policy "user".
type UserSink struct {
	Path   string // where it came from (for messages)
	Abs    string // its absolute path ("" when unknown): what printed commands name
	Source []byte
}

// Digest is the hex SHA-256 of the sink's source.
func (u *UserSink) Digest() string {
	sum := sha256.Sum256(u.Source)
	return hex.EncodeToString(sum[:])
}

// CompileError is a user's sink that does not compile: bad input (exit
// status 2), the compiler's output naming the user's file.
type CompileError struct {
	Sink, Python, Output string
}

// Error is one line that names the first error where it is (the user's
// file, line and column, as the compiler says it), then the compiler's
// whole output.
func (e *CompileError) Error() string {
	first := ""
	for _, l := range strings.Split(e.Output, "\n") {
		if strings.HasPrefix(l, e.Sink+":") && (strings.Contains(l, ": error: ") || strings.Contains(l, ": fatal error: ")) {
			first = ": " + l
			break
		}
	}
	return fmt.Sprintf("%s does not compile (python %s)%s\n%s", e.Sink, e.Python, first, strings.TrimRight(e.Output, "\n"))
}

// BuildSink is Build with a user's sink linked into the extension (nil:
// none).
func BuildSink(in Interpreter, user *UserSink) (string, error) {
	if in.Missing != "" {
		return "", fmt.Errorf("python %s: %s", in.Version, in.Missing)
	}
	cxx, err := Compiler()
	if err != nil {
		return "", fmt.Errorf("no C++ compiler (g++ or $CXX): %w", err)
	}
	ext, err := extFiles()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, f := range ext {
		fmt.Fprintf(h, "%s %d\n", f.name, len(f.b))
		h.Write(f.b)
	}
	h.Write(HeaderSource)
	h.Write(driverSource)
	fmt.Fprintf(h, "pybind11:%s|", Pybind11Include())
	if user != nil {
		h.Write([]byte("user sink\x00"))
		h.Write(user.Source)
	}
	fmt.Fprintf(h, "%s|%s|%s|%s", in.Path, in.Version, in.Include, cxx)
	dir := filepath.Join(CacheDir(), in.Version+"-"+hex.EncodeToString(h.Sum(nil))[:12])
	entry := entryFor(dir)
	entry.Lock()
	defer entry.Unlock()
	if entry.done {
		return dir, nil
	}
	if err := owndir.Ensure(CacheDir()); err != nil {
		return "", fmt.Errorf("the calibration cache: %w", err)
	}
	so := filepath.Join(dir, "logjamext"+in.ExtSuffix)
	if keptExtension(dir, so) {
		if err := os.WriteFile(filepath.Join(dir, "run_row.py"), driverSource, 0o644); err != nil {
			return "", err
		}
		entry.done = true
		return dir, nil
	}
	// The compiler computes: a CPU slot while it runs, when the caller
	// serves them (cpuslot).
	release, err := cpuslot.Acquire(context.Background())
	if err != nil {
		return "", err
	}
	defer release()
	tmp, err := os.MkdirTemp(CacheDir(), "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, f := range ext {
		if err := os.WriteFile(filepath.Join(tmp, f.name), f.b, 0o644); err != nil {
			return "", err
		}
	}
	src := filepath.Join(tmp, "logjamext.cpp")
	inc := filepath.Join(tmp, "include")
	if err := os.MkdirAll(filepath.Join(inc, "logjam"), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(inc, "logjam", "logjam.hpp"), HeaderSource, 0o644); err != nil {
		return "", err
	}
	srcs := []string{src}
	if user != nil {
		us := filepath.Join(tmp, "user_sink.cpp")
		if err := os.WriteFile(us, user.Source, 0o644); err != nil {
			return "", err
		}
		srcs = append(srcs, us)
	}
	out := filepath.Join(tmp, "logjamext"+in.ExtSuffix)
	args := append([]string{"-O2", "-std=c++17", "-shared", "-fPIC", "-fvisibility=hidden", "-I" + inc, "-I" + in.Include}, srcs...)
	args = append(args, "-o", out, "-lpthread")
	// pystderr through pybind11's own pythonbuf when its headers are here
	// and compile against this interpreter; else the extension's copy.
	pythonbuf := "a copy of pybind11 2.10's (no pybind11 headers: apt-get install pybind11-dev)"
	var b []byte
	if pb := Pybind11Include(); pb != "" {
		b, err = exec.Command(cxx, append([]string{"-DLOGJAM_PYBIND11", "-I" + pb}, args...)...).CombinedOutput()
		if err == nil {
			pythonbuf = "pybind11's (" + pb + ")"
		} else {
			pythonbuf = "a copy of pybind11 2.10's (pybind11 under " + pb + " does not compile against python " + in.Version + ")"
		}
	}
	if !strings.HasPrefix(pythonbuf, "pybind11") {
		if b, err = exec.Command(cxx, args...).CombinedOutput(); err != nil {
			if user != nil {
				// The compiler names the copy in the build folder: name
				// the user's own file instead.
				out := strings.ReplaceAll(string(b), filepath.Join(tmp, "user_sink.cpp"), user.Path)
				return "", &CompileError{Sink: user.Path, Python: in.Version, Output: out}
			}
			return "", fmt.Errorf("building logjamext for python %s: %v\n%s", in.Version, err, b)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "run_row.py"), driverSource, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "pythonbuf.txt"), []byte(pythonbuf), 0o644); err != nil {
		return "", err
	}
	sum, err := fileSum(out)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, soSumFile), []byte(sum+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(out, so); err != nil {
		return "", err
	}
	entry.done = true
	return dir, nil
}
