// Package owndir makes and checks a directory only this user can write: a
// cache whose files logjam later runs or loads (child binaries, the
// suites, the calibration's extension) must not be one another user can
// put a file into. TestOwndirRefusesWhatOthersCanWrite pins the rules.
package owndir

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Ensure creates dir (and its missing parents, 0700) and checks it: a
// directory, not a symlink, owned by this user, writable by no one else.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return Check(dir)
}

// Check reports why dir is not a directory only this user can write.
func Check(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if info.Mode()&os.ModeSymlink != 0 || !info.IsDir() {
		return fmt.Errorf("%s is not a directory (a symlink or a file): refused", dir)
	}
	if info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by others (mode %04o): refused; chmod go-w it", dir, info.Mode().Perm())
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to user %d, not to you (%d): refused", dir, st.Uid, os.Geteuid())
	}
	return nil
}

// TempPath is TempFallback's path, not made or checked (a caller that
// checks it at each use).
func TempPath(name string) string {
	return filepath.Join(os.TempDir(), name+"-"+strconv.Itoa(os.Geteuid()))
}

// TempFallback is a per-user directory under the system's temporary one,
// for when the user has no cache directory ($HOME unset): name-uid, made
// 0700 and checked, never a path another user could have made first.
func TempFallback(name string) (string, error) {
	dir := TempPath(name)
	if err := Ensure(dir); err != nil {
		return "", err
	}
	return dir, nil
}
