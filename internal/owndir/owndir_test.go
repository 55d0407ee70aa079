package owndir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestOwndirRefusesWhatOthersCanWrite(t *testing.T) {
	base := t.TempDir()
	ok := filepath.Join(base, "a", "b")
	if err := Ensure(ok); err != nil {
		t.Fatalf("a new directory: %v", err)
	}
	if info, _ := os.Stat(ok); info.Mode().Perm() != 0o700 {
		t.Errorf("made with mode %04o, want 0700", info.Mode().Perm())
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := Check(open); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("a world-writable directory: %v", err)
	}
	group := filepath.Join(base, "group")
	_ = os.Mkdir(group, 0o700)
	_ = os.Chmod(group, 0o770)
	if err := Check(group); err == nil {
		t.Error("a group-writable directory passed")
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	if err := Check(link); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a symlink to a good directory: %v", err)
	}
	file := filepath.Join(base, "file")
	_ = os.WriteFile(file, nil, 0o600)
	if err := Check(file); err == nil {
		t.Error("a file passed")
	}
	if os.Geteuid() == 0 {
		// root owns everything it makes; another owner is made by chown.
		other := filepath.Join(base, "other")
		_ = os.Mkdir(other, 0o700)
		if err := os.Chown(other, 12345, 12345); err == nil {
			if err := Check(other); err == nil || !strings.Contains(err.Error(), "belongs to user") {
				t.Errorf("another user's directory: %v", err)
			}
		}
	}
}

func TestTempFallbackIsPerUser(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir, err := TempFallback("logjam-test")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(dir, "-"+strconv.Itoa(os.Geteuid())) {
		t.Errorf("%s is not per user", dir)
	}
	// Another user's (here: an open) directory at that path is refused.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := TempFallback("logjam-test"); err == nil {
		t.Error("an open directory at the fallback's path was used")
	}
}
