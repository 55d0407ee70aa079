// Package zoo is a bug zoo for random search: realistic bugs of the
// `logjam` policy, each a patch in this folder (a unified diff against the
// module, its first lines "# " the bug in words). Run plants each in a
// scratch copy of the module (never in the tree), builds the child there,
// and counts, per seed stream, the random runs of `logjam` to the first
// failure; with the matrix, it also runs the matrix's logjam cells there
// and says whether any cell changed verdict.
package zoo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"logjam/internal/childbin"
	"logjam/internal/config"
	"logjam/internal/scratch"
	"logjam/random/search"
	"logjam/scenario/schedule"
)

// Bug is one patch of the zoo.
type Bug struct {
	ID    string // the file name without .patch
	What  string // the bug in words (the patch's "# " lines)
	Patch string // the patch's path
}

// Load lists the zoo's bugs in dir, by name.
func Load(dir string) ([]Bug, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.patch"))
	if err != nil {
		return nil, err
	}
	var bugs []Bug
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var what []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(l, "#") {
				break
			}
			if w := strings.TrimSpace(strings.TrimPrefix(l, "#")); w != "" {
				what = append(what, w)
			}
		}
		if len(what) == 0 {
			return nil, fmt.Errorf("%s: no \"# \" lines saying what the bug is", p)
		}
		bugs = append(bugs, Bug{ID: strings.TrimSuffix(filepath.Base(p), ".patch"), What: strings.Join(what, " "), Patch: p})
	}
	if len(bugs) == 0 {
		return nil, fmt.Errorf("no patches in %s", dir)
	}
	return bugs, nil
}

// Options bound a zoo run.
type Options struct {
	Streams int    // seed streams per bug
	Cap     int    // runs per stream at most
	Procs   int    // children at a time
	Matrix  bool   // also run the matrix's logjam cells
	Profile string // ginkgo.yml profile
}

// StreamSeed is the first seed of stream k (streams far apart).
func StreamSeed(k int) uint64 { return uint64(k+1) * 1_000_000 }

// Result is one bug's figures.
type Result struct {
	Bug Bug
	// First: per stream, the runs to the first failure of `logjam`
	// (1-based), 0 when none within the cap.
	First []int
	// Causes: the cause of each stream's first failure.
	Causes []string
	// Matrix: "caught" (some logjam cell not as expected), "missed", or
	// "not run".
	Matrix string
	Err    error
}

// Found is how many streams found the bug.
func (r Result) Found() int {
	n := 0
	for _, f := range r.First {
		if f > 0 {
			n++
		}
	}
	return n
}

// Median and Max of the runs to the first failure over the streams that
// found it (0 when none did).
func (r Result) Median() float64 {
	var xs []int
	for _, f := range r.First {
		if f > 0 {
			xs = append(xs, f)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return float64(xs[len(xs)/2])
	}
	return float64(xs[len(xs)/2-1]+xs[len(xs)/2]) / 2
}

func (r Result) Max() int {
	m := 0
	for _, f := range r.First {
		m = max(m, f)
	}
	return m
}

// Run plants each bug in turn in a scratch copy of the module at root and
// measures it; progress lines go to log.
func Run(ctx context.Context, root string, bugs []Bug, o Options, log io.Writer) ([]Result, error) {
	prof, err := config.Load(filepath.Join(root, "ginkgo.yml"), o.Profile)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "logjam-zoo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	mod := filepath.Join(work, "module")
	if err := scratch.CopyModule(root, mod); err != nil {
		return nil, err
	}
	// The unplanted child: a failure counts as the bug's only when the
	// same schedule passes without it.
	base := filepath.Join(work, "simrt-unplanted")
	if out, err := buildChild(ctx, mod, base); err != nil {
		return nil, fmt.Errorf("building the unplanted child: %v\n%s", err, out)
	}
	unplanted := search.Runner{Bin: base, Profile: prof}
	var results []Result
	for _, b := range bugs {
		if ctx.Err() != nil {
			return results, ctx.Err()
		}
		r := Result{Bug: b, Matrix: "not run"}
		r.Err = plantAndMeasure(ctx, mod, work, b, o, prof, unplanted, &r, log)
		results = append(results, r)
		fmt.Fprintf(log, "zoo: %-32s found %d/%d, median %.1f, max %d, matrix %s\n", b.ID, r.Found(), len(r.First), r.Median(), r.Max(), r.Matrix)
		if r.Err != nil {
			fmt.Fprintf(log, "zoo: %s: %v\n", b.ID, r.Err)
		}
	}
	return results, nil
}

func plantAndMeasure(ctx context.Context, mod, scratch string, b Bug, o Options, prof config.Profile, unplanted search.Runner, r *Result, log io.Writer) error {
	patch, err := filepath.Abs(b.Patch)
	if err != nil {
		return err
	}
	if out, err := goOrGit(ctx, mod, "git", "apply", "-p1", patch); err != nil {
		return fmt.Errorf("planting: %v\n%s", err, out)
	}
	defer func() {
		if out, err := goOrGit(context.Background(), mod, "git", "apply", "-R", "-p1", patch); err != nil {
			fmt.Fprintf(log, "zoo: removing %s: %v\n%s", b.ID, err, out)
		}
	}()
	bin := filepath.Join(scratch, "simrt")
	if out, err := buildChild(ctx, mod, bin); err != nil {
		return fmt.Errorf("building the child: %v\n%s", err, out)
	}
	run := search.Runner{Bin: bin, Profile: prof}
	f := schedule.Filter{Kind: schedule.KindSink, Policies: []string{"logjam"}}
	r.First = make([]int, o.Streams)
	r.Causes = make([]string, o.Streams)
	for k := 0; k < o.Streams; k++ {
		n, cause, err := firstFailure(ctx, run, unplanted, StreamSeed(k), o.Cap, o.Procs, f)
		if err != nil {
			return err
		}
		r.First[k], r.Causes[k] = n, cause
		// One line per stream: a measurement stopped early keeps what it found.
		if n == 0 {
			fmt.Fprintf(log, "zoo: %-32s stream %d (seed %d): no failure in %d runs\n", b.ID, k+1, StreamSeed(k), o.Cap)
		} else {
			fmt.Fprintf(log, "zoo: %-32s stream %d (seed %d): first failure at run %d: %s\n", b.ID, k+1, StreamSeed(k), n, firstLine(cause))
		}
	}
	if o.Matrix {
		out, err := goOrGit(ctx, mod, "go", "run", "./cmd/logjam", "chaos", "-profile", o.Profile, "-focus", "logjam", "-out", filepath.Join(scratch, "reports"))
		var exit *exec.ExitError
		switch {
		case err == nil:
			r.Matrix = "missed"
		case ctx.Err() == nil && asExit(err, &exit) && exit.ExitCode() == 1:
			r.Matrix = "caught"
		default:
			return fmt.Errorf("the matrix: %v\n%s", err, tail(out))
		}
	}
	return nil
}

// firstFailure plays the stream from seed, procs runs at a time, and
// returns the index (1-based) of the first run that failed because of the
// bug, and its cause; 0 when none did within cap. A failure is the bug's
// when a replay fails with the same cause and the unplanted child passes
// the schedule (a timing-dependent failure, or one the policy has without
// the bug, is not the bug's). A batch's runs after the first failure do
// not count: the answer does not depend on procs.
func firstFailure(ctx context.Context, run, unplanted search.Runner, seed uint64, cap, procs int, f schedule.Filter) (int, string, error) {
	for i := 0; i < cap; i += procs {
		n := min(procs, cap-i)
		causes := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for j := 0; j < n; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := search.Draw(search.SeedOf(seed, i+j), f)
				out, err := run.Run(ctx, s)
				if err != nil {
					errs[j] = err
					return
				}
				causes[j] = search.Cause(s, out)
			}()
		}
		wg.Wait()
		for j := 0; j < n; j++ {
			if errs[j] != nil {
				return 0, "", errs[j]
			}
			if causes[j] == "" {
				continue
			}
			s := search.Draw(search.SeedOf(seed, i+j), f)
			again, err := run.Run(ctx, s)
			if err != nil {
				return 0, "", err
			}
			without, err := unplanted.Run(ctx, s)
			if err != nil {
				return 0, "", err
			}
			if search.Cause(s, again) == causes[j] && search.Cause(s, without) == "" {
				return i + j + 1, causes[j], nil
			}
		}
	}
	return 0, "", nil
}

// Table is the results as a markdown table.
func Table(w io.Writer, results []Result, o Options) {
	fmt.Fprintf(w, "| bug | what goes wrong | found | median | max | first failure (stream 1) | matrix |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- |\n")
	sorted := slices.Clone(results)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Bug.ID < sorted[j].Bug.ID })
	for _, r := range sorted {
		if r.Err != nil {
			fmt.Fprintf(w, "| `%s` | %s | error: %s | | | | |\n", r.Bug.ID, r.Bug.What, firstLine(r.Err.Error()))
			continue
		}
		med, mx := "-", "-"
		if r.Found() > 0 {
			med, mx = fmt.Sprintf("%g", r.Median()), fmt.Sprint(r.Max())
		}
		cause := ""
		for _, c := range r.Causes {
			if c != "" {
				cause = c
				break
			}
		}
		fmt.Fprintf(w, "| `%s` | %s | %d/%d | %s | %s | %s | %s |\n", r.Bug.ID, r.Bug.What, r.Found(), len(r.First), med, mx, cause, r.Matrix)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

func asExit(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}

// buildChild builds the child of the module at dir into bin, as everywhere.
func buildChild(ctx context.Context, dir, bin string) ([]byte, error) {
	cmd := childbin.BuildCommand(ctx, bin)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

func goOrGit(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}
