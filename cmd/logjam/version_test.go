package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

// TestVersionNamesTheModuleTheCommitAndGo: `logjam version` is three
// lines: the module, the commit (stamped, or the checkout's HEAD), the Go
// toolchain that built it.
func TestVersionNamesTheModuleTheCommitAndGo(t *testing.T) {
	var out bytes.Buffer
	if code := version(nil, &out); code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "logjam: module logjam ") || !strings.HasPrefix(lines[1], "commit ") || lines[2] != runtime.Version() {
		t.Fatalf("logjam version printed %q; want the module, the commit and %s on three lines", out.String(), runtime.Version())
	}
	if c := strings.TrimPrefix(lines[1], "commit "); !strings.HasPrefix(c, "unknown") && len(strings.Fields(c)[0]) < 40 {
		t.Errorf("commit %q is neither a full hash nor says why there is none", c)
	}
	out.Reset()
	if code := version([]string{"-h"}, &out); code != 0 || !strings.HasPrefix(out.String(), versionUsage) {
		t.Errorf("logjam version -h: exit %d, %q; want its usage and 0", code, out.String())
	}
}
