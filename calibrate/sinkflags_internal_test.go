package calibrate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -profiles is the old spelling of -buffering: still read, never shown.
func TestTheOldBufferingFlagIsReadButNotShown(t *testing.T) {
	sink := filepath.Join(t.TempDir(), "mine.cpp")
	if err := os.WriteFile(sink, []byte("logjam::Sink *logjam_make_sink();\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"-buffering", "-profiles"} {
		var out bytes.Buffer
		setErrOut(t, &out)
		if code := Command([]string{"-sink", sink, flag, "nosuch"}, &out); code != 2 || !strings.Contains(out.String(), `-buffering: unknown "nosuch"`) {
			t.Errorf("%s nosuch: exit %d, %q", flag, code, out.String())
		}
	}
	var help bytes.Buffer
	Command([]string{"-h"}, &help)
	if !strings.Contains(help.String(), "-buffering") || strings.Contains(help.String(), "profiles") {
		t.Errorf("the help names -buffering and never -profiles:\n%s", help.String())
	}
}
