// Command logjam runs the chaos suites with a profile from ginkgo.yml and
// renders their matrix: reports/matrix.json and a table, with the command
// that reruns each cell that did not come out as expected.
//
//	logjam chaos [-profile local|nightly|focus] [-focus REGEXP] [-procs N]
//	logjam report [reports/ginkgo.json]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"logjam/config"
	"logjam/report"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout)) }

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "logjam: "+format+"\n", args...)
	return 2
}

func run(args []string, w io.Writer) int {
	if len(args) == 0 {
		return fail("usage: logjam chaos [-profile P] [-focus REGEXP] | logjam report [FILE]")
	}
	switch args[0] {
	case "chaos":
		return chaos(args[1:], w)
	case "report":
		path := filepath.Join("reports", "ginkgo.json")
		if len(args) > 2 {
			return fail("usage: logjam report [FILE]")
		}
		if len(args) == 2 {
			path = args[1]
		}
		n, err := render(path, filepath.Join(filepath.Dir(path), "matrix.json"), w)
		if err != nil {
			return fail("%v", err)
		}
		if n > 0 {
			return 1
		}
		return 0
	}
	return fail("unknown command %q (accepted: chaos, report)", args[0])
}

func chaos(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	profile := fs.String("profile", envOr("LOGJAM_PROFILE", "local"), "run profile from ginkgo.yml")
	focus := fs.String("focus", "", "run only the cells whose names match")
	procs := fs.Int("procs", 1, "parallel spec processes per suite")
	if err := fs.Parse(args); err != nil {
		return fail("chaos: %v (usage: logjam chaos [-profile P] [-focus REGEXP] [-procs N])", err)
	}
	wd, _ := os.Getwd()
	cfgPath, err := config.Find(wd)
	if err != nil {
		return fail("%v", err)
	}
	prof, err := config.Load(cfgPath, *profile)
	if err != nil {
		return fail("%v", err)
	}
	root := filepath.Dir(cfgPath)
	reports := filepath.Join(root, "reports")
	if err := os.MkdirAll(reports, 0o755); err != nil {
		return fail("%v", err)
	}
	_ = os.RemoveAll(filepath.Join(reports, "evidence"))
	gargs := []string{"tool", "ginkgo", "-r", "--keep-going", "--output-dir=" + reports, "--json-report=ginkgo.json",
		fmt.Sprintf("--procs=%d", *procs), "--silence-skips"}
	if prof.Repeat > 1 {
		gargs = append(gargs, fmt.Sprintf("--repeat=%d", prof.Repeat-1))
	}
	if *focus != "" {
		gargs = append(gargs, "--focus="+*focus)
	}
	env := append(os.Environ(), "LOGJAM_PROFILE="+prof.Name)
	if prof.Seed != 0 {
		// One seed for Ginkgo's spec order and the seeded checks (LOGJAM_SEED);
		// with 0, Ginkgo picks one and prints it.
		gargs = append(gargs, fmt.Sprintf("--seed=%d", prof.Seed))
		env = append(env, fmt.Sprintf("LOGJAM_SEED=%d", prof.Seed))
	}
	gargs = append(gargs, "./suites")
	fmt.Fprintf(w, "logjam: profile %s (deadline %s x %.2g, %s mode): go %s\n", prof.Name, prof.Deadline, prof.TimeoutScale, prof.Mode, strings.Join(gargs, " "))
	cmd := exec.Command("go", gargs...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	cmd.Env = env
	runErr := cmd.Run()
	n, err := render(filepath.Join(reports, "ginkgo.json"), filepath.Join(reports, "matrix.json"), w)
	if err != nil {
		return fail("%v", err)
	}
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		return fail("running ginkgo: %v", runErr)
	}
	if runErr != nil || n > 0 {
		return 1
	}
	return 0
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// render reads a Ginkgo JSON report, writes the matrix and prints it; it
// returns how many cells differ from their expected verdict.
func render(reportPath, matrixPath string, w io.Writer) (int, error) {
	m, err := report.FromGinkgo(reportPath)
	if err != nil {
		return 0, err
	}
	if err := report.WriteMatrix(matrixPath, m); err != nil {
		return 0, err
	}
	return report.RenderText(w, m), nil
}
