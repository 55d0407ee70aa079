package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTheShippedFileLoadsEveryProfile(t *testing.T) {
	for _, name := range []string{"local", "nightly", "focus"} {
		p, err := Load("../../"+FileName, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.ScaledDeadline() < time.Second {
			t.Errorf("%s: deadline %s is no bound for a slow CI machine", name, p.ScaledDeadline())
		}
	}
}

func TestBadFilesNameTheProblem(t *testing.T) {
	for _, c := range []struct{ body, profile, want string }{
		{"profiles: [", "local", "malformed"},
		{"profiles:\n  local:\n    deadline: 20s\n    timeout_scale: 1\n    mode: fast\n    repeat: 1\n    colour: red\n", "local", "colour"},
		{"profiles:\n  local:\n    deadline: soon\n", "local", "malformed"},
		{"profiles:\n  local:\n    deadline: 20s\n    timeout_scale: 1\n    mode: fast\n    repeat: 1\n", "nightly", `no profile "nightly" (profiles: local)`},
		{"profiles:\n  local:\n    deadline: 20s\n    timeout_scale: 1\n    mode: slow\n    repeat: 1\n", "local", "not fast or strict"},
		{"profiles:\n  local:\n    deadline: 0s\n    timeout_scale: 1\n    mode: fast\n    repeat: 1\n", "local", "deadline must be"},
	} {
		_, err := Load(write(t, c.body), c.profile)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.body, err, c.want)
		}
	}
}

func TestScaleKnobFromTheEnvironment(t *testing.T) {
	t.Setenv("LOGJAM_TIMEOUT_SCALE", "3")
	p, err := Load("../../"+FileName, "local")
	if err != nil || p.ScaledDeadline() != 3*p.Deadline {
		t.Fatalf("scaled deadline %s, %v; want 3 x %s", p.ScaledDeadline(), err, p.Deadline)
	}
	for _, bad := range []string{"x", "NaN", "nan", "Inf", "+Inf", "-Inf", "1e400", "0", "-1"} {
		t.Setenv("LOGJAM_TIMEOUT_SCALE", bad)
		if _, err := Load("../../"+FileName, "local"); err == nil {
			t.Errorf("LOGJAM_TIMEOUT_SCALE=%s was accepted", bad)
		}
	}
}

// The local profile replays only the own columns of the row schedules;
// nightly, and LOGJAM_RANDOM_ROWS=all (set by .ci/run), every column.
func TestRowsKnobAndItsOverride(t *testing.T) {
	t.Setenv("LOGJAM_RANDOM_ROWS", "") // .ci/run exports all: the file's own values first
	for name, own := range map[string]bool{"local": true, "nightly": false} {
		p, err := Load("../../"+FileName, name)
		if err != nil || p.Random.OwnRowsOnly() != own {
			t.Errorf("%s: own rows only %v (%v), want %v", name, p.Random.OwnRowsOnly(), err, own)
		}
	}
	t.Setenv("LOGJAM_RANDOM_ROWS", RowsAll)
	if p, err := Load("../../"+FileName, "local"); err != nil || p.Random.OwnRowsOnly() {
		t.Errorf("LOGJAM_RANDOM_ROWS=all: own rows only %v (%v)", p.Random.OwnRowsOnly(), err)
	}
	t.Setenv("LOGJAM_RANDOM_ROWS", "some")
	if _, err := Load("../../"+FileName, "local"); err == nil || !strings.Contains(err.Error(), "LOGJAM_RANDOM_ROWS") {
		t.Errorf("LOGJAM_RANDOM_ROWS=some: %v, want it refused", err)
	}
	t.Setenv("LOGJAM_RANDOM_ROWS", "")
	body := "profiles:\n  local:\n    deadline: 20s\n    timeout_scale: 1\n    mode: fast\n    repeat: 1\n    grace_floor: 2s\n    random:\n      rows: some\n"
	if _, err := Load(write(t, body), "local"); err == nil || !strings.Contains(err.Error(), "rows") {
		t.Errorf("rows: some: %v, want it refused", err)
	}
}
