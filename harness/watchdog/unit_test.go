package watchdog

import (
	"logjam/verdict"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestMarkerScanner(t *testing.T) {
	cases := []struct {
		writes []string
		seen   bool
	}{
		{[]string{"done\n"}, true},
		{[]string{"work\nde", "fault\ndo", "ne\r\n"}, true},
		{[]string{"work\n  done  "}, true},
		{[]string{"almost done\n"}, false},
		{[]string{"done-ish\n", "undone\n"}, false},
		{[]string{strings.Repeat(" ", 1000) + "done\n"}, false},
		{[]string{""}, false},
	}
	for _, c := range cases {
		m := newMarkerScanner("done")
		for _, w := range c.writes {
			m.write([]byte(w))
		}
		m.endLine()
		if m.seen != c.seen {
			t.Errorf("%q: seen %v, want %v", c.writes, m.seen, c.seen)
		}
	}
}

func TestGrace(t *testing.T) {
	cases := []struct {
		cfg  Config
		want time.Duration
	}{
		{Config{Deadline: 10 * time.Second}, 2 * time.Second},
		{Config{Deadline: 10 * time.Second, Scale: 3}, 6 * time.Second},
		{Config{Deadline: 10 * time.Minute}, 30 * time.Second},
		{Config{Deadline: time.Second, GraceFloor: 100 * time.Millisecond, Scale: 0.5}, 50 * time.Millisecond},
		{Config{Deadline: time.Second, Scale: -1}, 2 * time.Second},
	}
	for _, c := range cases {
		if got := c.cfg.Grace(); got != c.want {
			t.Errorf("%+v: grace %s, want %s", c.cfg, got, c.want)
		}
	}
}

func TestRenderCommand(t *testing.T) {
	base := []string{"HOME=/root", "PATH=/bin", "LANG=C"}
	cmd := exec.Command("/bin/prog", "-run", "it's", "a b", "-x=^$")
	if got, want := renderCommand(cmd, base), `/bin/prog -run 'it'\''s' 'a b' '-x=^$'`; got != want {
		t.Errorf("no env: %s, want %s", got, want)
	}
	cmd.Env = append(append([]string{}, base...), "GO_FAILPOINTS=sim/slow=sleep(100)", "PATH=/bin", "EMPTY=")
	if got, want := renderCommand(cmd, base), `GO_FAILPOINTS='sim/slow=sleep(100)' EMPTY='' /bin/prog -run 'it'\''s' 'a b' '-x=^$'`; got != want {
		t.Errorf("added env: %s, want %s", got, want)
	}
	cmd.Env = []string{"HOME=/root", "PATH=/usr/bin", "PATH=/opt/bin", "weird-name=1"}
	cmd.Dir = "/tmp/a dir"
	if got, want := renderCommand(cmd, base), `cd '/tmp/a dir' && env -u LANG PATH=/opt/bin weird-name=1 /bin/prog -run 'it'\''s' 'a b' '-x=^$'`; got != want {
		t.Errorf("changed env: %s, want %s", got, want)
	}
}

func TestSummaryShowsTheTail(t *testing.T) {
	var out strings.Builder
	for i := range 30 {
		out.WriteString(strings.Repeat("x", i) + "\n")
	}
	res := &Result{Verdict: verdict.Failed, Reason: "exited with status 1", Stdout: []byte(out.String()), Command: "prog"}
	s := res.Summary()
	for _, want := range []string{"FAILED: exited with status 1", "stdout (last 20 of 30 lines)", "stderr: not captured", "rerun: prog"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "| "+strings.Repeat("x", 9)+"\n") {
		t.Errorf("summary shows an early line:\n%s", s)
	}
}
