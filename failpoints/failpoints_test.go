package failpoints

import (
	"strings"
	"testing"
)

func TestParseRefusesBadInputWithTheReason(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"logjam/probe", "malformed GO_FAILPOINTS entry"},
		{"logjam/probe=return(1)=x", "malformed GO_FAILPOINTS entry"},
		{"logjam/nope=return(1)", "unknown failpoint"},
		{"logjam/probe=retrun(1)", "malformed terms"},
		{"logjam/probe=return(abc)", "malformed"},
		{`logjam/stream-write-interrupt=return("sideways")`, "one of"},
		{"logjam/stream-write-delay=return(true)", "whole number"},
		{"logjam/stream-write-oserror=sleep(5)", "does not fit"},
	} {
		_, err := Parse(c.env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", c.env, err, c.want)
		}
	}
}

func TestParseAcceptsWhatTheCatalogueSays(t *testing.T) {
	for _, env := range []string{
		"",
		"logjam/probe=return(7)",
		`logjam/stream-write-interrupt=1*return("half")->return("before")`,
		"logjam/stream-write-oserror=return;logjam/stream-write-delay=50%return(20)",
		"logjam/backend-load-locked=sleep(10)",
	} {
		set, err := Parse(env)
		if err != nil {
			t.Errorf("Parse(%q): %v", env, err)
			continue
		}
		if set.Env() != env {
			t.Errorf("round trip: %q became %q", env, set.Env())
		}
	}
}

func TestScopeLeavesNoPointEnabled(t *testing.T) {
	s := NewScope()
	if err := s.Enable(Probe, "return(42)"); err != nil {
		t.Fatal(err)
	}
	if v, ok := Int(Probe); !ok || v != 42 {
		t.Fatalf("probe = %v %v, want 42", v, ok)
	}
	ran := 0
	if err := s.EnableHook(BackendLoadLocked, func() { ran++ }); err != nil {
		t.Fatal(err)
	}
	Hit(BackendLoadLocked)
	s.Close()
	s.Close()
	Hit(BackendLoadLocked)
	if _, ok := Int(Probe); ok || ran != 1 {
		t.Fatalf("after Close: probe still fires (%v) or the hook ran %d times, want once", ok, ran)
	}
}

func TestEveryPointIsDocumented(t *testing.T) {
	for _, p := range Catalogue {
		if !strings.HasPrefix(p.Name, "logjam/") || p.Does == "" || p.Terms == "" {
			t.Errorf("%+v: every point needs the logjam/ prefix, what it does and its terms", p)
		}
	}
}
