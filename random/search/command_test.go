package search

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"logjam/internal/testkit"
	"logjam/scenario/schedule"
)

// Bad random-schedule input gets one line and status 2, before the child is
// built or anything runs.
func TestBadRandomInputIsOneLineAndStatus2(t *testing.T) {
	for _, args := range [][]string{
		{"chaos", "-random", "0"},
		{"chaos", "-random", "-3"},
		{"chaos", "-random", "10", "-policy", "nosuch"},
		{"chaos", "-random", "10", "-kind", "nosuch"},
		{"chaos", "-random", "10", "-kind", "lazyinit", "-policy", "logjam"},
		{"chaos", "-random", "10", "-family", "lazyinit", "-policy", "logjam"}, // the old spelling of -kind, still read
		{"chaos", "-random", "10", "-j", "0"},
		{"chaos", "-random", "10", "-replays", "-1"},
		{"chaos", "-random", "10", "-replay", "e30"},
		{"chaos", "-replay", "not-a-schedule"},
		{"chaos", "-replay", `{"kind":"sink"}`},
		{"chaos", "-random", "10", "extra"},
		{"chaos", "-random", "10", "-profile", "nosuch"},
	} {
		stderr := testkit.CaptureStderr(t, func() {
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

// -family is the old spelling of -kind: still read, never shown.
func TestTheOldKindFlagIsReadButNotShown(t *testing.T) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	r := addRandomFlags(fs)
	addRandomAliases(fs, r)
	if err := fs.Parse([]string{"-random", "1", "-family", "lazyinit"}); err != nil || r.filter().Kind != schedule.KindLazyInit {
		t.Fatalf("-family lazyinit: %v, kind %q", err, r.filter().Kind)
	}
	var help bytes.Buffer
	Usage(&help)
	if !strings.Contains(help.String(), "-kind") || strings.Contains(help.String(), "family") {
		t.Errorf("the help names -kind and never -family:\n%s", help.String())
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

// A replay says when its schedule lies outside the contract (ENOSPC on a
// terminal, as the generator once drew it), and says nothing for one
// inside it.
func TestAReplayNamesAScheduleOutsideTheContract(t *testing.T) {
	s, err := schedule.Decode(`{"kind":"sink","policy":"logjam","platform":"linux","python":"3.13.8","sink":{"fd2":{"kind":"pty","errors":{"errno":"ENOSPC","after":113,"times":1}},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":28,"size":125,"level":"E"}]}],"abort":{"after":13}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if n := contractNote(s); !strings.Contains(n, "outside the contract: ENOSPC on a terminal") {
		t.Errorf("note %q, want it to name ENOSPC on a terminal", n)
	}
	s.Sink.FD2.Errors = nil // EAGAIN aside, a terminal takes no refusal inside the contract
	if n := contractNote(s); n != "" {
		t.Errorf("a schedule inside the contract got the note %q", n)
	}
}
