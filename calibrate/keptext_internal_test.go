package calibrate

import (
	"os"
	"path/filepath"
	"testing"
)

// A cached extension is reused only when it hashes to the sum written
// beside it at its build, in a folder only this user can write; otherwise
// the entry is removed and rebuilt (an .so is code the interpreter loads).
func TestACachedExtensionIsVerifiedBeforeReuse(t *testing.T) {
	entry := func(t *testing.T) (string, string) {
		dir := filepath.Join(t.TempDir(), "3.12.1-abc")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		so := filepath.Join(dir, "logjamext.so")
		if err := os.WriteFile(so, []byte("built"), 0o644); err != nil {
			t.Fatal(err)
		}
		sum, _ := fileSum(so)
		if err := os.WriteFile(filepath.Join(dir, soSumFile), []byte(sum+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir, so
	}
	dir, so := entry(t)
	if !keptExtension(dir, so) {
		t.Fatal("a good entry was not reused")
	}
	for name, spoil := range map[string]func(dir, so string){
		"swapped .so":    func(_, so string) { _ = os.WriteFile(so, []byte("evil"), 0o644) },
		"no sum":         func(dir, _ string) { _ = os.Remove(filepath.Join(dir, soSumFile)) },
		"an open folder": func(dir, _ string) { _ = os.Chmod(dir, 0o777) },
	} {
		dir, so := entry(t)
		spoil(dir, so)
		if keptExtension(dir, so) {
			t.Errorf("%s: reused", name)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: the entry was left (%v)", name, err)
		}
	}
}
