package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"logjam/harness/report"
	"logjam/internal/claim"
)

// runFamily runs one family's compiled suite once per repeat: procsFor
// spec processes of the test binary itself, each a serial Ginkgo run that
// claims its specs from the others (claim: no Ginkgo CLI and no parallel
// server between logjam and the specs, which cost a process per family, a
// go command's version check and an RPC per spec). Their output goes to
// <out>/logs/<family>.log, their reports are joined into
// <out>/ginkgo/<family>.r<k>.json, as Ginkgo's CLI joins its parallel
// processes' (mergeReports).
func runFamily(o chaosOptions, fam, bin string, env []string, st *stopper) (fr familyRun) {
	fr.name = fam
	start := time.Now()
	defer func() { fr.seconds = time.Since(start).Seconds() }()
	logPath := filepath.Join(o.out, "logs", fam+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		fr.cells = append(fr.cells, report.SpecRow(fam, "suite", fam+" suite", "its log cannot be written: "+err.Error()))
		return fr
	}
	defer logf.Close()
	for r := 1; r <= o.prof.Repeat; r++ {
		select {
		case <-st.Interrupted():
			return fr // its cells are NOTRUN rows
		default:
		}
		js := filepath.Join(o.out, "ginkgo", fmt.Sprintf("%s.r%d.json", fam, r))
		runErr := runSpecProcesses(o, fam, bin, r, js, env, logf, st)
		fr.cells = append(fr.cells, repeatOutcome(fam, r, js, logPath, runErr, st.Signal() != nil)...)
		if plan, noCell, err := report.PlanOf(js, fam, r); err == nil {
			fr.plan = append(fr.plan, plan...)
			if st.Signal() == nil { // an interrupted repeat's skipped specs never ran
				fr.noCell = append(fr.noCell, noCell...)
			}
		}
	}
	return fr
}

// runSpecProcesses runs one repeat of a family: its spec processes at
// once, each with a log and a JSON report of its own, appended to the
// family's log and joined into js once all have ended. The error is the
// first process's that failed (one that could not start first).
func runSpecProcesses(o chaosOptions, fam, bin string, r int, js string, env []string, logf *os.File, st *stopper) error {
	n := o.procsFor(fam)
	args := []string{"-test.timeout=0", "-ginkgo.no-color", "-ginkgo.silence-skips", fmt.Sprintf("-ginkgo.seed=%d", o.prof.Seed)}
	if o.prof.Mode != "strict" {
		// In fast mode every spec is its own unit of the order, so that
		// the specs that wait longest (SpecPriority in the suites) start
		// first on the family's few processes instead of ending it. Strict
		// mode keeps Ginkgo's order (a family's specs as its file lists
		// them): its 12 processes a family let every deadline-waiting cell
		// wait at once anyway.
		args = append(args, "-ginkgo.randomize-all")
	}
	if o.focus != "" {
		args = append(args, "-ginkgo.focus="+o.focus)
	}
	if o.labels != "" {
		args = append(args, "-ginkgo.label-filter="+o.labels)
	}
	env = append(slices.Clip(env), fmt.Sprintf("LOGJAM_REPEAT=%d", r)) // families share env: never write into its array
	claims := ""
	if n > 1 {
		claims = filepath.Join(o.out, "claims", fmt.Sprintf("%s.r%d", fam, r))
		if err := os.MkdirAll(claims, 0o755); err != nil {
			return err
		}
		defer os.RemoveAll(claims)
		env = append(env, claim.Env+"="+claims)
	}
	type proc struct {
		cmd      *exec.Cmd
		js, log  string
		startErr error
	}
	procs := make([]proc, n)
	for i := range procs {
		p := &procs[i]
		p.js = fmt.Sprintf("%s.p%d", js, i+1)
		p.log = filepath.Join(o.out, "logs", fmt.Sprintf("%s.r%d.p%d.log", fam, r, i+1))
		out, err := os.Create(p.log)
		if err != nil {
			p.startErr = err
			continue
		}
		p.cmd = exec.Command(bin, args...)
		p.cmd.Dir = filepath.Join(o.root, "suites", fam) // where go test runs a package's tests
		p.cmd.Env = append(slices.Clip(env), SpecReportEnv+"="+p.js)
		p.cmd.Stdout, p.cmd.Stderr = out, out
		p.cmd.SysProcAttr = dieWithParent(&syscall.SysProcAttr{Setpgid: true}) // and its children with it (DieWithParentEnv)
		p.startErr = p.cmd.Start()
		out.Close()
		if p.startErr == nil {
			st.add(p.cmd) // a signal that came first is passed on here
		}
	}
	var runErr error
	var reports []string
	for i := range procs {
		p := &procs[i]
		err := p.startErr
		if err == nil {
			err = p.cmd.Wait()
			st.done(p.cmd)
		}
		var ee *exec.ExitError
		if err != nil && (runErr == nil || errors.As(runErr, &ee) && !errors.As(err, &ee)) {
			runErr = err
		}
		reports = append(reports, p.js)
		appendLog(logf, p.log, fmt.Sprintf("%s, repeat %d, spec process %d of %d", fam, r, i+1, n))
	}
	if err := mergeReports(reports, claims, js); err != nil {
		os.Remove(js) // no report: repeatOutcome says so
	}
	for _, p := range reports {
		os.Remove(p)
	}
	return runErr
}

// appendLog moves one spec process's output into the family's log, under
// a line naming it.
func appendLog(logf *os.File, path, what string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	fmt.Fprintf(logf, "=== %s\n", what)
	_, _ = io.Copy(logf, f)
	f.Close()
	os.Remove(path)
}

// mergeReports joins the Ginkgo JSON reports of a family's spec processes
// into one at out, as Ginkgo's CLI joins its parallel processes': every
// spec once, as the process that ran it reported it. Each process reports
// the specs it ran or skipped, not those another process claimed
// (suitekit, SpecReportEnv), so a spec is in the report of the process
// that claimed it. When a process left no report, the specs it claimed are
// read from their claims (claims, the family's folder of them; "" when it
// had one process): one no report has is a failed spec, saying so, never a
// spec that vanished. A process that left no report adds nothing else (its
// exit status is the repeat's row). Each spec's report is kept as its
// JSON: only the fields that place and rank it are decoded.
func mergeReports(paths []string, claims, out string) error {
	var top map[string]json.RawMessage // the first report's fields
	var specs []json.RawMessage
	var ranks []int
	succeeded := true
	reported := 0          // the reports read
	at := map[string]int{} // spec -> its index in specs
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var rs []map[string]json.RawMessage
		if json.Unmarshal(raw, &rs) != nil || len(rs) != 1 {
			continue
		}
		r := rs[0]
		var ok bool
		var reports []json.RawMessage
		if json.Unmarshal(r["SuiteSucceeded"], &ok) != nil || json.Unmarshal(r["SpecReports"], &reports) != nil {
			continue
		}
		first := top == nil
		if first {
			top = r
		}
		reported++
		succeeded = succeeded && ok
		for _, spec := range reports {
			var sr types.SpecReport
			if err := json.Unmarshal(spec, &placed{&sr}); err != nil {
				continue
			}
			if sr.LeafNodeType != types.NodeTypeIt {
				// The suite's own nodes (BeforeSuite, report nodes) run in
				// every process: the first's, and another's that failed.
				if first || sr.State.Is(types.SpecStateFailureStates) {
					specs, ranks = append(specs, spec), append(ranks, -1)
				}
				continue
			}
			key := specKey(sr)
			i, seen := at[key]
			switch {
			case !seen:
				at[key] = len(specs)
				specs, ranks = append(specs, spec), append(ranks, rank(sr))
			case rank(sr) > ranks[i]:
				specs[i], ranks[i] = spec, rank(sr)
			}
		}
	}
	if top == nil {
		return errors.New("no spec process left a report")
	}
	if reported < len(paths) && claims != "" {
		held, _ := claim.Claims(claims)
		for _, spec := range held {
			var sr types.SpecReport
			if json.Unmarshal(spec, &placed{&sr}) != nil || sr.LeafNodeType != types.NodeTypeIt {
				continue // cut short as its process died: that process left its repeat's row
			}
			key := specKey(sr)
			if _, seen := at[key]; !seen {
				at[key] = len(specs)
				specs, ranks = append(specs, spec), append(ranks, 0)
			}
		}
	}
	for i, spec := range specs {
		if ranks[i] != 0 {
			continue
		}
		var sr types.SpecReport
		if err := json.Unmarshal(spec, &sr); err != nil {
			return err
		}
		sr.State = types.SpecStateFailed
		sr.Failure = types.Failure{Message: "not run: the spec process that claimed it ended before it reported it"}
		b, err := json.Marshal(sr)
		if err != nil {
			return err
		}
		specs[i], succeeded = b, false
	}
	var err error
	if top["SuiteSucceeded"], err = json.Marshal(succeeded); err != nil {
		return err
	}
	if top["SpecReports"], err = json.Marshal(specs); err != nil {
		return err
	}
	raw, err := json.Marshal([]map[string]json.RawMessage{top})
	if err != nil {
		return err
	}
	return os.WriteFile(out, raw, 0o644)
}

// specKey is a spec's identity across its family's processes: its full
// text and where its node is.
func specKey(sr types.SpecReport) string {
	return sr.FullText() + "\x00" + sr.LeafNodeLocation.String()
}

// placed decodes only the fields of a spec's report that place and rank it
// (where it is, its state, its failure's message).
type placed struct{ sr *types.SpecReport }

func (p *placed) UnmarshalJSON(b []byte) error {
	var f struct {
		ContainerHierarchyTexts []string
		LeafNodeType            types.NodeType
		LeafNodeLocation        types.CodeLocation
		LeafNodeText            string
		State                   types.SpecState
		Failure                 struct{ Message string }
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*p.sr = types.SpecReport{ContainerHierarchyTexts: f.ContainerHierarchyTexts, LeafNodeType: f.LeafNodeType,
		LeafNodeLocation: f.LeafNodeLocation, LeafNodeText: f.LeafNodeText, State: f.State,
		Failure: types.Failure{Message: f.Failure.Message}}
	return nil
}

// rank orders one spec's reports from a family's processes: run (passed
// or failed) over skipped (the focus, a shard, an interrupt) over skipped
// as another process's claim.
func rank(sr types.SpecReport) int {
	switch {
	case sr.State == types.SpecStateSkipped && sr.Failure.Message == claim.SkipMessage:
		return 0
	case sr.State == types.SpecStateSkipped || sr.State == types.SpecStatePending:
		return 1
	}
	return 2
}
