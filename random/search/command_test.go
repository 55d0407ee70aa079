package search

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// Bad random-schedule input gets one line and status 2, before the child is
// built or anything runs.
func TestBadRandomInputIsOneLineAndStatus2(t *testing.T) {
	for _, args := range [][]string{
		{"chaos", "-random", "0"},
		{"chaos", "-random", "-3"},
		{"chaos", "-random", "10", "-policy", "nosuch"},
		{"chaos", "-random", "10", "-family", "nosuch"},
		{"chaos", "-random", "10", "-family", "lazyinit", "-policy", "logjam"},
		{"chaos", "-random", "10", "-j", "0"},
		{"chaos", "-random", "10", "-replays", "-1"},
		{"chaos", "-random", "10", "-replay", "e30"},
		{"chaos", "-replay", "not-a-schedule"},
		{"chaos", "-replay", `{"family":"sink"}`},
		{"chaos", "-random", "10", "extra"},
		{"chaos", "-random", "10", "-profile", "nosuch"},
	} {
		stderr := captureStderr(t, func() {
			var out bytes.Buffer
			if code := Command(args[1:], &out); code != 2 {
				t.Errorf("%v: exit %d, want 2", args, code)
			}
			if out.Len() != 0 {
				t.Errorf("%v wrote to stdout: %q", args, out.String())
			}
		})
		if lines := strings.Count(strings.TrimRight(stderr, "\n"), "\n") + 1; lines != 1 || !strings.HasPrefix(stderr, "logjam: ") {
			t.Errorf("%v: want one line on stderr, got %q", args, stderr)
		}
	}
}

func TestRandomModeIsChosenByItsFlags(t *testing.T) {
	for args, want := range map[string]bool{
		"-random 5": true, "--random=5": true, "-replay x": true, "-profile nightly": false, "-focus random": false,
	} {
		if got := IsCommand(strings.Fields(args)); got != want {
			t.Errorf("%q: isRandom %v, want %v", args, got, want)
		}
	}
}

func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = old }()
	f()
	w.Close()
	var b bytes.Buffer
	b.ReadFrom(r)
	return b.String()
}
