// Package scratch makes the temporary folders a run works in (a build's,
// the random search's) and removes those a killed run left behind.
//
// A folder is named <prefix>-<pid>-<random> and its owner holds an
// exclusive flock on it for its whole life; the kernel drops the lock when
// the owner dies, however it dies. Sweep removes every folder of a prefix
// whose lock it can take: its owner is gone. A pid that was reused does
// not fool it, and a live run's folder is never touched.
package scratch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Dir is a scratch folder held by this process.
type Dir struct {
	Dir  string
	lock *os.File
}

// New makes a scratch folder under parent named prefix-<pid>-<random>,
// locked before it bears a name Sweep looks at.
func New(parent, prefix string) (*Dir, error) {
	tmp, err := os.MkdirTemp(parent, ".new-"+prefix+"-")
	if err != nil {
		return nil, err
	}
	lock, err := os.Open(tmp)
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		os.RemoveAll(tmp)
		return nil, err
	}
	dir := filepath.Join(parent, fmt.Sprintf("%s-%d-%s", prefix, os.Getpid(), strings.TrimPrefix(filepath.Base(tmp), ".new-"+prefix+"-")))
	if err := os.Rename(tmp, dir); err != nil {
		lock.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	return &Dir{Dir: dir, lock: lock}, nil
}

// Remove removes the folder and lets go of it. A Dir whose folder was
// renamed into place elsewhere (Keep) has nothing left to remove.
func (d *Dir) Remove() {
	if d == nil {
		return
	}
	os.RemoveAll(d.Dir)
	d.lock.Close()
}

// Release lets go of the folder without removing it (it was renamed away).
func (d *Dir) Release() { d.lock.Close() }

// Sweep removes the folders under parent named prefix-* (and the
// half-made .new-prefix-*) whose owner is gone, and returns how many.
func Sweep(parent, prefix string) int {
	found, _ := filepath.Glob(filepath.Join(parent, prefix+"-*"))
	half, _ := filepath.Glob(filepath.Join(parent, ".new-"+prefix+"-*"))
	removed := 0
	for _, dir := range append(found, half...) {
		st, err := os.Lstat(dir)
		if err != nil || !st.IsDir() {
			continue
		}
		// A half-made folder is locked a moment after it is made: leave a
		// young one to its maker.
		if strings.HasPrefix(filepath.Base(dir), ".new-") && time.Since(st.ModTime()) < time.Minute {
			continue
		}
		f, err := os.Open(dir)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			if os.RemoveAll(dir) == nil {
				removed++
			}
		}
		f.Close()
	}
	return removed
}

// CopyModule copies the module at root into dst: the files git knows of
// (tracked, or untracked and not ignored), so no reports and no binaries.
// The mutation kit and the bug zoo plant their bugs in such a copy.
func CopyModule(root, dst string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or not a file
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		d := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(d, b, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}
