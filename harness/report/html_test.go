package report

import (
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"logjam/internal/axes"
	"logjam/scenario"
	"logjam/verdict"
)

// chromium finds a headless browser: LOGJAM_CHROMIUM, or Debian's chromium.
func chromium(t *testing.T) string {
	for _, name := range []string{os.Getenv("LOGJAM_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium: the headless-browser check of matrix.html needs it (apt-get install chromium)")
	return ""
}

// loadInBrowser opens page in headless Chromium and returns the DOM after
// the page's scripts ran, and the console lines Chromium logged.
func loadInBrowser(t *testing.T, page string) (dom, console string) {
	bin := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+page)
	// Its own group, so the helpers it forks go with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

var (
	shownAttr  = regexp.MustCompile(`<body[^>]*\bdata-shown="(\d+)"`)
	errorsAttr = regexp.MustCompile(`<body[^>]*\bdata-errors="([^"]*)"`)
	cellAttr   = regexp.MustCompile(`<td [^>]*\bdata-cell="([^"]*)"`)
)

// pageProblems is what a headless load found wrong with a page, "" when
// it loaded cleanly and its script ran.
func pageProblems(dom, console string) string {
	var p []string
	if m := errorsAttr.FindStringSubmatch(dom); m != nil {
		p = append(p, "script errors: "+m[1])
	}
	for _, l := range strings.Split(console, "\n") {
		if strings.Contains(l, "CONSOLE") && (strings.Contains(l, "Uncaught") || strings.Contains(l, "Error")) {
			p = append(p, "console: "+l)
		}
	}
	if !shownAttr.MatchString(dom) {
		p = append(p, "the page's script did not run to the end (no data-shown)")
	}
	return strings.Join(p, "; ")
}

func TestHTMLLoadsInHeadlessChromiumAndShowsEveryCell(t *testing.T) {
	dir := t.TempDir()
	run, cells := nightlySample(dir)
	fams := Group(cells)
	dom, shown := renderInBrowser(t, run, fams, dir)
	expectEveryCellShown(t, fams, shown)
	if m := shownAttr.FindStringSubmatch(dom); m[1] != "5" || len(shown) != 5 {
		t.Errorf("the page counted %s cells and the DOM has %d; want 5", m[1], len(shown))
	}
	for _, want := range []string{`data-verdict="FLAKY"`, "deadlock: 2 cells, 1 as expected, 1 not, 1 flaky", "utf8: 2 cells, 1 as expected, 1 not,", "r1 OK, r2 HANG, r3 OK", "<summary>cycle</summary>",
		`href="evidence/U1-logjam-r1/"`, "LOGJAM_PROFILE=nightly LOGJAM_SEED=42", "profile</dt><dd>nightly (strict mode"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
}

// A negative control for the check above: a page whose script throws is
// caught.
func TestBrowserCheckCatchesAPageThatThrows(t *testing.T) {
	dir := t.TempDir()
	run, cells := nightlySample(dir)
	b, err := HTML(run, Group(cells), dir)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "var n = ", "undefinedFunction(); var n = ", 1))
	page := filepath.Join(dir, "broken.html")
	if err := os.WriteFile(page, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dom, console := loadInBrowser(t, page)
	if p := pageProblems(dom, console); !strings.Contains(p, "undefinedFunction") {
		t.Fatalf("a page that throws passed the check (problems: %q)", p)
	}
}

// fullSize is a matrix shaped like the real one: every scenario of the
// catalogue under every policy (lazy init: every variant and backend;
// harness: one cell), three repeats, a few cells FLAKY or not as expected.
func fullSize() []Cell {
	var cells []Cell
	add := func(info *scenario.Info, params string, c Cell) {
		c.ID, c.Scenario, c.Family = info.ID, info.ID, info.Family
		c.Name = info.ID + " " + info.Slug + " [" + params + "]"
		c.Rerun = Rerun(info.Family, c.Name, "nightly", 7, "")
		for rep := 1; rep <= 3; rep++ {
			c.Repeat, c.Expected, c.Observed = rep, verdict.OK, verdict.OK
			if len(cells)%37 == 0 {
				c.Observed = verdict.Hang
				c.Evidence.Cycle = "thread A holds <L> & waits for the GIL"
			}
			cells = append(cells, c)
		}
	}
	for _, info := range scenario.All() {
		switch info.Family {
		case "harness":
			add(info, "", Cell{})
		case "lazyinit":
			for _, v := range axes.LazyVariants {
				for _, b := range []string{"cuda", "xpu", "mtia"} {
					add(info, "variant="+v+" backend="+b+" platform=linux py=3.12", Cell{Cell: scenario.Cell{Variant: v, Backend: b, Platform: "linux"}})
				}
			}
		default:
			for _, p := range axes.Policies {
				add(info, "policy="+p+" platform=linux py=3.12", Cell{Cell: scenario.Cell{Policy: p, Platform: "linux", Python: "3.12"}})
				if info.Family == "utf8" { // a second interpreter of the same row must get a line of its own
					add(info, "policy="+p+" platform=linux py=3.10", Cell{Cell: scenario.Cell{Policy: p, Platform: "linux", Python: "3.10"}})
				}
			}
		}
	}
	return cells
}

func TestAFullSizeMatrixShowsEveryCellInChromium(t *testing.T) {
	dir := t.TempDir()
	run, _ := nightlySample(dir)
	cells := fullSize()
	fams := Group(cells)
	dom, shown := renderInBrowser(t, run, fams, dir)
	n := Count(fams).Cells
	expectEveryCellShown(t, fams, shown)
	if m := shownAttr.FindStringSubmatch(dom); m[1] != strconv.Itoa(n) || len(shown) != n {
		t.Errorf("the page counted %s cells and the DOM has %d; the matrix has %d", m[1], len(shown), n)
	}
}

// renderInBrowser writes matrix.html for fams, loads it in headless
// Chromium, fails on any load problem and returns the DOM and the cell
// names shown.
func renderInBrowser(t *testing.T, run Run, fams []Family, dir string) (dom string, shown map[string]bool) {
	t.Helper()
	b, err := HTML(run, fams, dir)
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, HTMLFile)
	if err := os.WriteFile(page, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dom, console := loadInBrowser(t, page)
	if p := pageProblems(dom, console); p != "" {
		t.Fatalf("matrix.html (%d families) did not load cleanly: %s", len(fams), p)
	}
	shown = map[string]bool{}
	for _, m := range cellAttr.FindAllStringSubmatch(dom, -1) {
		shown[html.UnescapeString(m[1])] = true
	}
	return dom, shown
}

// expectEveryCellShown fails for each cell of fams the browser did not show.
func expectEveryCellShown(t *testing.T, fams []Family, shown map[string]bool) {
	t.Helper()
	for _, f := range fams {
		for _, r := range f.Rows {
			if !shown[r.Name] {
				t.Errorf("the browser shows no cell %q", r.Name)
			}
		}
	}
}
