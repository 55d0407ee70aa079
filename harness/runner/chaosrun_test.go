package runner

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"logjam/harness/report"
	"logjam/internal/testkit"
)

// Bad input gets one line and status 2, before anything is built or run.
func TestBadInputIsOneLineAndStatus2(t *testing.T) {
	for _, args := range [][]string{
		{"chaos", "-shard", "5/4"},
		{"chaos", "-shard", "x"},
		{"chaos", "-repeat", "-1"},
		{"chaos", "-slots", "0"},
		{"chaos", "-profile", "nosuch"},
		{"chaos", "extra"},
		{"chaos", "-focus", "D1 ["},
		{"report", "merge"},
		{"report", "merge", "-out"},
		{"report", "merge", t.TempDir()},
		{"report", "diff", "a"},
	} {
		stderr := testkit.CaptureStderr(t, func() {
			var out bytes.Buffer
			if code := Main(args, &out); code != 2 {
				t.Errorf("%v: exit %d, want 2", args, code)
			}
			if out.Len() != 0 {
				t.Errorf("%v wrote to stdout: %q", args, out.String())
			}
		})
		if lines := strings.Count(stderr, "\n"); lines != 1 || !strings.HasPrefix(stderr, "logjam: ") {
			t.Errorf("%v: stderr %q, want one logjam: line", args, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join("..", "..", "suites", "deadlock", ".deadlock-"+strconv.Itoa(os.Getpid())+".test")); err == nil {
		t.Error("a bad command left a suite binary behind")
	}
}

// The rerun command a cell carries works from a folder deep inside the
// module (it is a shell line: cd to the module root, then Ginkgo).
func TestRerunRunsFromASubfolder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs one suite")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	line := report.Rerun("harness", "H2 calls an exit 0 without done NOMARKER", "local", 7, "")
	cmd := exec.Command("sh", "-c", line)
	// In a copy of the module: Ginkgo compiles the suite into its folder and
	// removes it after, which would pull the binary from under a `ginkgo -r`
	// running this test in the real tree.
	cmd.Dir = filepath.Join(testkit.CopyModule(t), "sim")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Ran 1 of") {
		t.Fatalf("the rerun line failed from sim/: %v\n%s", err, out)
	}
}

// A family's progress line has colour on a terminal only.
func TestProgressLineHasNoColourOffATerminal(t *testing.T) {
	fr := familyRun{name: "deadlock", seconds: 1.25, cells: report.Matrix{
		{Name: "D1 a", Family: "deadlock", Expected: "HANG", Observed: "HANG"},
		{Name: "D1 b", Family: "deadlock", Expected: "OK", Observed: "LOST"},
	}}
	plain, tty := familyLine(false, fr), familyLine(true, fr)
	if want := "logjam: deadlock    2 cells,   1 as expected, 1 not, 1.2 s"; plain != want {
		t.Errorf("off a terminal: %q, want %q", plain, want)
	}
	if !strings.Contains(tty, "\x1b[31m1 not\x1b[0m") {
		t.Errorf("on a terminal: %q has no red count", tty)
	}
	var f bytes.Buffer
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(&f) || isTerminal(null) {
		t.Error("a buffer or /dev/null is a terminal")
	}
}

// The build cache's key follows the build's inputs, and nothing that a run
// leaves behind.
func TestSourceKeyFollowsSourcesOnly(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	key := func() string {
		t.Helper()
		k, err := sourceKey(root)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write("go.mod", "module x\n")
	write("cell/cell.go", "package cell\n")
	k0 := key()
	write("reports/matrix.json", "[]")
	write(".git/HEAD", "ref")
	write("suites/a/.a-1.test", "binary")
	write("README.md", "docs")
	write("scripts/x.sh", "echo")
	if key() != k0 {
		t.Fatal("reports/, .git, a suite binary, docs or a script changed the key")
	}
	write("cell/embed.go", "package cell\n//go:embed x.txt\n")
	k1 := key()
	write("cell/x.txt", "embedded")
	if key() == k1 {
		t.Fatal("an embedded file left the key as it was")
	}
	write("cell/embed.go", "package cell\n")
	write("cell/cell.go", "package cell // edited\n")
	if key() == k0 {
		t.Fatal("an edited source left the key as it was")
	}
}

// An entry a run holds is never evicted; beyond the newest ones, the rest
// are.
func TestEvictKeepsHeldAndRecentEntries(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, age time.Duration) string {
		dir := filepath.Join(base, "suites-"+name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := lockEntry(dir, syscall.LOCK_SH)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		then := time.Now().Add(-age)
		os.Chtimes(dir+".lock", then, then)
		return dir
	}
	current := mk("current", 0)
	recent := mk("recent", time.Minute)
	held := mk("held", 3*time.Hour)
	old := mk("old", 2*time.Hour)
	older := mk("older", 4*time.Hour)
	h, err := lockEntry(held, syscall.LOCK_SH)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	then := time.Now().Add(-3 * time.Hour) // held, but not marked used lately
	os.Chtimes(held+".lock", then, then)
	// Lock files of entries evicted before: one an hour old and free, one
	// as old and held, one fresh (a build may be about to make its entry).
	orphan := func(name string, age time.Duration) string {
		l := filepath.Join(base, "suites-"+name+".lock")
		if err := os.WriteFile(l, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		then := time.Now().Add(-age)
		os.Chtimes(l, then, then)
		return l
	}
	gone, heldLock, fresh := orphan("gone", 2*time.Hour), orphan("heldlock", 2*time.Hour), orphan("fresh", time.Minute)
	hl, err := os.Open(heldLock)
	if err != nil {
		t.Fatal(err)
	}
	defer hl.Close()
	if err := syscall.Flock(int(hl.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	evict(base, current)
	for dir, want := range map[string]bool{current: true, recent: true, old: true, held: true, older: false} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
	for l, want := range map[string]bool{gone: false, older + ".lock": true, heldLock: true, fresh: true, current + ".lock": true} {
		if _, err := os.Stat(l); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", filepath.Base(l), err == nil, want)
		}
	}
}

// logjam chaos end to end on two fast cells, repeated twice: a progress
// line per family without colour, every repeat in the matrix and JUnit,
// the reports written where -out says.
func TestChaosKeepsEveryRepeatAndWritesTheReports(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the suites and runs two cells twice")
	}
	out := t.TempDir()
	var w bytes.Buffer
	code := Main([]string{"chaos", "-focus", `D1 .*policy=(pystderr|logjam) `, "-repeat", "2", "-procs", "1", "-out", out}, &w)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, w.String())
	}
	if strings.Contains(w.String(), "\x1b[") {
		t.Error("colour codes in output that is not a terminal")
	}
	if !strings.Contains(w.String(), "logjam: deadlock    2 cells,   2 as expected, 0 not,") {
		t.Errorf("no progress line for deadlock:\n%s", w.String())
	}
	runInfo, cells, err := report.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 || runInfo.Repeat != 2 || runInfo.Seed == 0 {
		t.Fatalf("%d runs (want 2 cells x 2 repeats), run %+v", len(cells), runInfo)
	}
	for _, c := range cells {
		if c.Repeat < 1 || c.Repeat > 2 || !strings.Contains(c.Rerun, "LOGJAM_SEED="+strconv.FormatInt(runInfo.Seed, 10)) {
			t.Errorf("run %s repeat %d rerun %q", c.Name, c.Repeat, c.Rerun)
		}
	}
	// run.json names the run's plan (what report merge checks shards
	// against): the two specs the focus selects, each row's spec among them.
	if len(runInfo.Plan) != 2 {
		t.Errorf("plan %v, want the 2 specs the focus selects", runInfo.Plan)
	}
	for _, c := range cells {
		if !slices.Contains(runInfo.Plan, report.PlannedSpec{Family: c.Family, Spec: c.Spec}) || !strings.HasSuffix(c.Spec, " "+c.Name) {
			t.Errorf("row %s names spec %q, not one of the plan %v", c.Name, c.Spec, runInfo.Plan)
		}
	}
	junit, err := os.ReadFile(filepath.Join(out, report.JUnitFile))
	if err != nil || strings.Count(string(junit), "<testcase ") != 4 {
		t.Errorf("junit.xml has %d testcases, want 4 (%v)", strings.Count(string(junit), "<testcase "), err)
	}
	for _, f := range []string{report.HTMLFile, report.MarkdownFile, "logs/deadlock.log", "ginkgo/deadlock.r2.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
}

func TestProcsAreFittedToTheCoresAndTheFamily(t *testing.T) {
	for _, c := range []struct {
		fam   string
		cores int
		want  int
	}{
		{"random", 2, 8}, {"random", 1, 4}, {"pipes", 2, 2}, {"signals", 4, 4},
		{"deadlock", 1, 1}, {"deadlock", 2, 1}, {"deadlock", 4, 2}, {"harness", 2, 1}, {"daemon", 2, 2},
	} {
		if got := fittedProcs(c.fam, c.cores); got != c.want {
			t.Errorf("fittedProcs(%s, %d) = %d, want %d", c.fam, c.cores, got, c.want)
		}
	}
	if got := (chaosOptions{procs: 3}).procsFor("random"); got != 3 {
		t.Errorf("-procs 3 gave random %d processes", got)
	}
}
