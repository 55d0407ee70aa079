// Command stress runs the whole chaos matrix (logjam chaos) N times while
// `yes > /dev/null` loaders keep the cores busy, and prints a table of every
// cell whose verdict ever differed: between runs, or from its expected
// verdict. A verdict that changes on a loaded machine is a scenario bug.
//
//	go run ./stress [-n 20] [-load 2] [-profile local] [-focus REGEXP]
//
// Each run's matrix is kept in reports/stress/run-<k>.json; the table is
// also written to reports/stress/table.txt. Exit status 1 when any cell
// differed, 130 when interrupted (the runs so far are tabled).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout)) }

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "stress: "+format+"\n", args...)
	return 2
}

// cell is the part of a reports/matrix.json row the table needs.
type cell struct {
	Name     string `json:"name"`
	Family   string `json:"family"`
	Expected string `json:"expected"`
	Observed string `json:"observed"`
}

func run(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("stress", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("n", 20, "how many runs of the matrix")
	load := fs.Int("load", runtime.NumCPU(), "how many `yes > /dev/null` loaders run meanwhile")
	profile := fs.String("profile", "local", "profile from ginkgo.yml")
	focus := fs.String("focus", "", "run only the cells whose names match")
	const use = "usage: go run ./stress [-n N] [-load L] [-profile P] [-focus REGEXP]"
	if err := fs.Parse(args); err != nil {
		return fail("%v (%s)", err, use)
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q (%s)", fs.Arg(0), use)
	case *n < 1:
		return fail("-n %d: accepted: at least 1", *n)
	case *load < 0:
		return fail("-load %d: accepted: 0 or more", *load)
	}
	if _, err := regexp.Compile(*focus); err != nil {
		return fail("-focus %q is not a regular expression: %v", *focus, err)
	}
	root, err := moduleRoot()
	if err != nil {
		return fail("%v", err)
	}
	out := filepath.Join(root, "reports", "stress")
	if err := os.RemoveAll(out); err != nil {
		return fail("%v", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fail("%v", err)
	}
	logjam := filepath.Join(out, "logjam")
	build := exec.Command("go", "build", "-o", logjam, "./cmd/logjam")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fail("building logjam: %v", err)
	}

	// A Ctrl-C reaches logjam too (same process group); it stops its run and
	// exits 130. stress only stops starting runs.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)

	loaders, err := startLoaders(*load)
	defer stopLoaders(loaders)
	if err != nil {
		return fail("starting loaders: %v", err)
	}
	fmt.Fprintf(w, "stress: %d runs of logjam chaos -profile %s, %d loader(s) on %d CPU(s)\n", *n, *profile, *load, runtime.NumCPU())
	var runs [][]cell
	interrupted := false
	for k := 1; k <= *n && !interrupted; k++ {
		args := []string{"chaos", "-profile", *profile}
		if *focus != "" {
			args = append(args, "-focus", *focus)
		}
		cmd := exec.Command(logjam, args...)
		cmd.Dir = root
		logPath := filepath.Join(out, fmt.Sprintf("run-%d.log", k))
		logf, err := os.Create(logPath)
		if err != nil {
			return fail("%v", err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		start := time.Now()
		runErr := cmd.Start()
		if runErr == nil {
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case runErr = <-done:
			case <-signals:
				interrupted = true
				runErr = <-done
			}
		}
		logf.Close()
		code := -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		if code == 130 || interrupted {
			interrupted = true
			fmt.Fprintf(w, "run %d: interrupted; not counted\n", k)
			break
		}
		cells, err := readMatrix(filepath.Join(root, "reports", "matrix.json"))
		if err != nil {
			return fail("run %d (exit %d, %v): %v; see %s", k, code, runErr, err, logPath)
		}
		b, _ := json.MarshalIndent(cells, "", "  ")
		_ = os.WriteFile(filepath.Join(out, fmt.Sprintf("run-%d.json", k)), b, 0o644)
		runs = append(runs, cells)
		fmt.Fprintf(w, "run %d: %d cells, %d not as expected, exit %d, %s\n", k, len(cells), countBad(cells), code, time.Since(start).Round(time.Second))
	}
	stopLoaders(loaders)
	loaders = nil
	table := differing(runs)
	tf, _ := os.Create(filepath.Join(out, "table.txt"))
	for _, dst := range []io.Writer{w, tf} {
		printTable(dst, runs, table)
	}
	tf.Close()
	switch {
	case interrupted:
		return 130
	case len(table) > 0:
		return 1
	}
	return 0
}

func startLoaders(n int) ([]*exec.Cmd, error) {
	var ls []*exec.Cmd
	for i := 0; i < n; i++ {
		cmd := exec.Command("yes")
		cmd.Stdout = nil // /dev/null
		cmd.SysProcAttr = loaderAttr()
		if err := cmd.Start(); err != nil {
			return ls, err
		}
		ls = append(ls, cmd)
	}
	return ls, nil
}

func stopLoaders(ls []*exec.Cmd) {
	for _, l := range ls {
		_ = l.Process.Kill()
		_ = l.Wait()
	}
}

func readMatrix(path string) ([]cell, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cells []cell
	return cells, json.Unmarshal(raw, &cells)
}

func countBad(cells []cell) int {
	n := 0
	for _, c := range cells {
		if c.Observed != c.Expected {
			n++
		}
	}
	return n
}

// row is one cell that differed: its observations over the runs.
type row struct {
	family, name, expected string
	seen                   map[string]int // verdict -> runs
	missing                int            // runs without this cell
}

// differing lists every cell whose verdict ever differed, between runs or
// from its expected verdict, or that is missing from a run.
func differing(runs [][]cell) []row {
	byName := map[string]*row{}
	for _, cells := range runs {
		for _, c := range cells {
			r := byName[c.Name]
			if r == nil {
				r = &row{family: c.Family, name: c.Name, expected: c.Expected, seen: map[string]int{}}
				byName[c.Name] = r
			}
			r.seen[c.Observed]++
		}
	}
	var rows []row
	for _, r := range byName {
		total := 0
		for _, n := range r.seen {
			total += n
		}
		r.missing = len(runs) - total
		if len(r.seen) > 1 || r.seen[r.expected] != total || r.missing > 0 {
			rows = append(rows, *r)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].family != rows[j].family {
			return rows[i].family < rows[j].family
		}
		return rows[i].name < rows[j].name
	})
	return rows
}

func printTable(w io.Writer, runs [][]cell, rows []row) {
	cells := 0
	if len(runs) > 0 {
		cells = len(runs[0])
	}
	fmt.Fprintf(w, "\n%d loaded runs of %d cells: %d cell(s) whose verdict ever differed\n", len(runs), cells, len(rows))
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "%-9s %-10s %-70s %s\n", "family", "expected", "cell", "observed (runs)")
	for _, r := range rows {
		var obs []string
		for v, n := range r.seen {
			obs = append(obs, fmt.Sprintf("%s x%d", v, n))
		}
		sort.Strings(obs)
		if r.missing > 0 {
			obs = append(obs, fmt.Sprintf("missing x%d", r.missing))
		}
		fmt.Fprintf(w, "%-9s %-10s %-70s %s\n", r.family, r.expected, r.name, strings.Join(obs, ", "))
	}
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the logjam module")
	}
	return filepath.Dir(mod), nil
}
