package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"logjam/internal/axes"
)

// listed is what logjam list prints under env: each family's specs. (Which
// spec is a cell of the matrix only its run says: a spec's report entry.)
type listed struct {
	specs map[string]int
	rows  map[string]bool // the matrix rows played as schedules ("matrix row D1 as a schedule, ...")
}

func (l listed) total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func list(t *testing.T, root string, env []string, args ...string) listed {
	t.Helper()
	cmd := exec.Command(logjamBin, append([]string{"list"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("logjam list %v: %v", args, err)
	}
	l := listed{map[string]int{}, map[string]bool{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fam, _, _ := strings.Cut(line, " ")
		l.specs[fam]++
		if m := rowSchedule.FindStringSubmatch(line); m != nil {
			l.rows[m[1]] = true
		}
	}
	return l
}

var rowSchedule = regexp.MustCompile(`matrix row ([A-Z]+[0-9]+) as a schedule`)

// docFigure is one count a document states: where, the figure, and what
// the tree gives, with the command that prints it.
type docFigure struct {
	file, re string // re's first group is the figure
	want     int
	from     string
}

// Every count of specs, rows, policies and mutants that README.md (and
// docs/RANDOM.md, of the rows played as schedules) states is the tree's own: what logjam list reads from the built suites
// (under the local profile, the one `./logjam chaos` runs, and with every
// row schedule), the policy names and cmd/mutants/mutants.yml. A stale
// figure fails here, naming the command that prints the right one (the
// bench block's, scripts/bench-matrix.sh -readme).
func TestTheDocumentedCountsAreTheTrees(t *testing.T) {
	root := suiteTest(t, "compiles the suites to list their specs")
	clean := []string{"LOGJAM_PROFILE=local", "LOGJAM_RANDOM_ROWS=", "LOGJAM_RANDOM_RUNS="}
	local := list(t, root, clean)
	allRows := list(t, root, append(clean, "LOGJAM_RANDOM_ROWS=all"), "random")
	ownRows := list(t, root, clean, "-label-filter", "row-schedule", "random")
	olderRows := list(t, root, append(clean, "LOGJAM_RANDOM_ROWS=all"), "-label-filter", "row-schedule", "random")
	yml, err := os.ReadFile(filepath.Join(root, "cmd", "mutants", "mutants.yml"))
	if err != nil {
		t.Fatal(err)
	}
	mutants := len(regexp.MustCompile(`(?m)^- id: `).FindAll(yml, -1))

	figures := []docFigure{
		{"README.md", `This tree's matrix: (\d+) specs, \d+ cells`, local.total(local.specs), "scripts/bench-matrix.sh -readme"},
		{"README.md", "4 a core for `random` \\((\\d+) specs under `local`", local.specs["random"], "./logjam list random"},
		{"README.md", "runs only logjam's and fixed's column \\(`rows: own`, (\\d+) specs\\)", ownRows.total(ownRows.specs), "./logjam list -label-filter row-schedule random"},
		{"README.md", "older policies' columns \\((\\d+) specs,", olderRows.total(olderRows.specs) - ownRows.total(ownRows.specs), "LOGJAM_RANDOM_ROWS=all ./logjam list -label-filter row-schedule random, less rows: own's"},
		{"README.md", "random` \\(\\d+ specs under `local`, (\\d+) with every row schedule", allRows.specs["random"], "LOGJAM_RANDOM_ROWS=all ./logjam list random"},
		{"README.md", `go run ./cmd/mutants: (\d+) semantic mutants`, mutants, "grep -c '^- id:' cmd/mutants/mutants.yml"},
		{"README.md", `D1-D5 x (\d+) policies`, len(axes.Policies), "internal/axes.Policies"},
		{"docs/RANDOM.md", `for (\d+) rows of the sink families and the three lazy-init rows`, sinkRows(olderRows.rows), "LOGJAM_RANDOM_ROWS=all ./logjam list -label-filter row-schedule random"},
		{"README.md", `L1-L3 x (\d+) variants`, len(axes.LazyVariants), "internal/axes.LazyVariants"},
	}
	// The suite table, a family a row: "| `deadlock` | D1-D5 x 6 policies: 30 specs | ...".
	for fam, n := range local.specs {
		figures = append(figures, docFigure{"README.md", "(?m)^\\| `" + regexp.QuoteMeta(fam) + "` \\| [^|]*?: (\\d+) specs \\|", n, "./logjam list " + fam})
	}
	docs := map[string]string{}
	for _, f := range figures {
		if _, ok := docs[f.file]; !ok {
			b, err := os.ReadFile(filepath.Join(root, f.file))
			if err != nil {
				t.Fatal(err)
			}
			docs[f.file] = string(b)
		}
		m := regexp.MustCompile(f.re).FindStringSubmatch(docs[f.file])
		if m == nil {
			t.Errorf("%s states no figure matching %q (the tree's: %d, from %s)", f.file, f.re, f.want, f.from)
			continue
		}
		if got, _ := strconv.Atoi(m[1]); got != f.want {
			t.Errorf("%s says %q: %d, the tree has %d (%s prints it)", f.file, m[0], got, f.want, f.from)
		}
	}
	fmt.Fprintf(os.Stderr, "documented counts checked: %d\n", len(figures))
}

// sinkRows counts the rows of rows that are no lazy-init row (L...).
func sinkRows(rows map[string]bool) int {
	n := 0
	for r := range rows {
		if !strings.HasPrefix(r, "L") {
			n++
		}
	}
	return n
}
