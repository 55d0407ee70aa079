package childbin

import (
	"debug/elf"
	"path/filepath"
	"runtime"
	"testing"
)

// The child is built static (BuildEnv): no dynamic loader runs at each of
// its starts.
func TestTheChildIsBuiltStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads an ELF binary")
	}
	bin := filepath.Join(t.TempDir(), "simrt")
	build := BuildCommand(t.Context(), bin)
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", Package, err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s is dynamically linked (it names an interpreter)", Package)
		}
	}
}
