package failpoints_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"logjam/failpoints"
)

// rerunSelf runs this test binary again, only TestAmbientHelper, with env.
func rerunSelf(t *testing.T, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAmbientHelper$")
	cmd.Env = append(os.Environ(), append([]string{"LOGJAM_AMBIENT_HELPER=1"}, env...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// TestAmbientHelper is the re-executed process: it prints what it saw.
func TestAmbientHelper(t *testing.T) {
	if os.Getenv("LOGJAM_AMBIENT_HELPER") == "" {
		t.Skip("helper process only")
	}
	v, ok := failpoints.Int(failpoints.Probe)
	os.Stdout.WriteString("ambient=" + failpoints.Ambient().Env() + " env=" + os.Getenv("GO_FAILPOINTS"))
	if ok {
		os.Stdout.WriteString(" probe=" + string(rune('0'+v)))
	}
	os.Stdout.WriteString("\n")
}

// envguard's init must run before pingcap/failpoint's, which would exit 1.
func TestEnvguardInitsBeforePingcap(t *testing.T) {
	_, stderr, code := rerunSelf(t, "GODEBUG=inittrace=1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var order []string
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 1 && f[0] == "init" && (f[1] == "logjam/failpoints/envguard" || f[1] == "github.com/pingcap/failpoint" || f[1] == "os") {
			order = append(order, f[1])
		}
	}
	want := []string{"logjam/failpoints/envguard", "os", "github.com/pingcap/failpoint"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("init order %v, want %v", order, want)
	}
}

func TestAmbientFailpoints(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		code      int
		stdout    string
		stderr    string // a substring of the one line
	}{
		{"valid value enabled and passed on", "GO_FAILPOINTS=logjam/probe=return(7)", 0, "ambient=logjam/probe=return(7) env=logjam/probe=return(7) probe=7", ""},
		{"empty value", "GO_FAILPOINTS=", 0, "ambient= env=", ""},
		{"no name=terms", "GO_FAILPOINTS=bad", 2, "", `malformed GO_FAILPOINTS entry "bad"`},
		{"two equals", "GO_FAILPOINTS=logjam/probe=return(1)=x", 2, "", "want name=terms"},
		{"unknown point", "GO_FAILPOINTS=logjam/nope=return", 2, "", `unknown failpoint "logjam/nope"`},
		{"parser panics", "GO_FAILPOINTS=logjam/probe=return(abc)", 2, "", "malformed terms"},
		{"action does not fit", "GO_FAILPOINTS=logjam/probe=sleep(5)", 2, "", "does not fit"},
		{"trailing separator", "GO_FAILPOINTS=logjam/probe=return(1);", 2, "", `malformed GO_FAILPOINTS entry ""`},
		{"control server", "GO_FAILPOINTS_HTTP=127.0.0.1:0", 2, "", "GO_FAILPOINTS_HTTP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := rerunSelf(t, tc.env)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, stdout, stderr)
			}
			if tc.code == 0 {
				if !strings.Contains(stdout, tc.stdout) {
					t.Fatalf("stdout %q, want %q", stdout, tc.stdout)
				}
				return
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing (pingcap's init would print there)", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want one line containing %q", stderr, tc.stderr)
			}
		})
	}
}
