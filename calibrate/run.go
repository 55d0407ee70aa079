package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"logjam/ledger"
	"logjam/pipes"
	"logjam/sim/scenario"
	"logjam/watchdog"
)

// Verdicts beyond the ledger's (as cell's).
const (
	Hang        = "HANG"
	Crash       = "CRASH"
	Failed      = "FAILED"
	NoMarker    = "NOMARKER"
	Interrupted = "INTERRUPTED"
)

// Profiles of sys.stderr's buffering.
const (
	Buffered   = "buffered"   // PYTHONUNBUFFERED unset: TextIOWrapper -> BufferedWriter -> FileIO
	Unbuffered = "unbuffered" // PYTHONUNBUFFERED=1 (python -u): write_through to a raw FileIO
)

// Options tune one real run.
type Options struct {
	Scale      float64       // the timeout-scale knob (1 when zero)
	GraceFloor time.Duration // watchdog's (its default when zero)
	Deadline   time.Duration // overrides the row's when set
}

// Outcome is one real cell.
type Outcome struct {
	Row, Policy, Variant, Profile, Python string
	Observed                              string
	Reason                                string
	Ledger                                ledger.Evidence
	Ms                                    int64
	Result                                *watchdog.Result
	FD2                                   []byte
	Stdout                                string
}

// Run plays row under policy on the interpreter in, with the extension
// built in dir (Build), under the watchdog.
func Run(ctx context.Context, in Interpreter, dir string, row Row, policy, variant, profile string, o Options) (*Outcome, error) {
	contract, err := row.Contract()
	if err != nil {
		return nil, err
	}
	fd2, err := arrange(row.FD2, row.Stalled)
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "run_row.py")
	args := []string{in.Path, script, row.ID, policy}
	if row.Ignored {
		// sh's trap "" sets SIG_IGN, which exec keeps: Python then
		// installs no SIGINT handler.
		args = append([]string{"/bin/sh", "-c", `trap "" INT; exec "$0" "$@"`}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = childEnv(dir, variant, profile)
	cmd.Stderr = fd2.child
	deadline := row.Deadline
	if deadline == 0 {
		deadline = 8 * time.Second
	}
	if o.Deadline > 0 {
		deadline = o.Deadline
	}
	scale := o.Scale
	if scale <= 0 {
		scale = 1
	}
	sig := &signaller{fd2: fd2}
	res, err := watchdog.Run(ctx, cmd, watchdog.Config{
		Deadline:   time.Duration(float64(deadline) * scale),
		Scale:      scale,
		GraceFloor: o.GraceFloor,
		Mode:       watchdog.Fast,
		OnEvent:    sig.onEvent,
	})
	if err != nil {
		fd2.abandon()
		return nil, err
	}
	b, ferr := fd2.collect()
	out := &Outcome{Row: row.ID, Policy: policy, Variant: variant, Profile: profile, Python: in.Version,
		Ms: res.Duration.Milliseconds(), Reason: res.Reason, Result: res, FD2: b, Stdout: string(res.Stdout)}
	if ferr != nil {
		out.Reason += "; " + ferr.Error()
	}
	if res.Cycle != nil {
		var c struct {
			Text string `json:"text"`
		}
		if res.Cycle.Decode(&c) == nil {
			out.Reason += "; cycle: " + c.Text
		}
	}
	out.Observed = classify(contract, res, b, out)
	return out, nil
}

// classify is cell.classify's rule: HANG > CRASH > (FAILED, NOMARKER) >
// the ledger's verdicts; an abort the contract expects (SIGABRT after an
// "abort" event) and a kill it expects are judged by the ledger.
func classify(c scenario.Contract, res *watchdog.Result, fd2 []byte, out *Outcome) string {
	judge := func() string {
		j := ledger.Judge(c.Contract, res.Events, fd2)
		out.Ledger = j.Evidence
		if j.Evidence.Detail != "" {
			out.Reason += "; " + j.Evidence.Detail
		}
		return j.Verdict
	}
	switch res.Verdict {
	case watchdog.Interrupted:
		return Interrupted
	case watchdog.Hang:
		if c.Ends == scenario.EndsKilled && res.Cycle == nil {
			return judge()
		}
		return Hang
	case watchdog.Crash:
		if c.Ends == scenario.EndsAbort && res.Signal == "SIGABRT" && sawEvent(res, "abort") {
			return judge()
		}
		if res.Signal == "SIGABRT" && sawEvent(res, "pythonbuf-throws") {
			out.Reason += "; pythonbuf threw out of the noexcept ostream::sentry destructor (std::terminate)"
		}
		return Crash
	case watchdog.Failed:
		return Failed
	case watchdog.NoMarker:
		return NoMarker
	}
	if c.Ends != scenario.EndsDone {
		out.Reason += fmt.Sprintf("; the contract says the run ends by %s, but it completed", c.Ends)
		return Failed
	}
	return judge()
}

func sawEvent(res *watchdog.Result, kind string) bool {
	for _, e := range res.Events {
		if e.Ev == kind {
			return true
		}
	}
	return false
}

// childEnv: the parent's environment with PYTHONUNBUFFERED set or unset
// EXPLICITLY by profile, the extension on PYTHONPATH, and nothing ambient
// that changes the interpreter (PYTHONSTARTUP, PYTHONWARNINGS...).
func childEnv(dir, variant, profile string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PYTHON") || k == "LOGJAM_VARIANT" || k == "GO_FAILPOINTS" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8")
	if profile == Unbuffered {
		env = append(env, "PYTHONUNBUFFERED=1")
	}
	if variant != "" {
		env = append(env, "LOGJAM_VARIANT="+variant)
	}
	return env
}

// ---------------------------------------------------------------- parent side

// signaller answers the child's marks: "sigint" (kill(2) SIGINT on the pid
// of the "start" event; with "resume_ms", the fd-2 reader resumes that long
// after), "fd2-resume", and "fd2-pause" ("ms").
type signaller struct {
	fd2  *arrangement
	mu   sync.Mutex
	pid  int
	sent int
}

func (s *signaller) onEvent(ev watchdog.Event) {
	switch ev.Ev {
	case "start":
		var st struct {
			Pid int `json:"pid"`
		}
		if json.Unmarshal(ev.Raw, &st) == nil {
			s.mu.Lock()
			s.pid = st.Pid
			s.mu.Unlock()
		}
	case watchdog.KindMark:
		var m struct {
			Name     string `json:"name"`
			Ms       int64  `json:"ms"`
			ResumeMs int64  `json:"resume_ms"`
		}
		if json.Unmarshal(ev.Raw, &m) != nil {
			return
		}
		switch m.Name {
		case "sigint":
			s.mu.Lock()
			if s.pid > 1 {
				_ = syscall.Kill(s.pid, syscall.SIGINT)
				s.sent++
			}
			s.mu.Unlock()
			if m.ResumeMs > 0 {
				s.fd2.resumeAfter(time.Duration(m.ResumeMs) * time.Millisecond)
			}
		case "fd2-resume":
			s.fd2.resumeAfter(0)
		case "fd2-pause":
			s.fd2.pause(time.Duration(m.Ms) * time.Millisecond)
		}
	}
}

// arrangement is the parent's end of the child's fd 2 (after cell's
// fd2Arrangement, trimmed to a file and a one-page pipe).
type arrangement struct {
	child  *os.File
	file   *os.File
	parent *os.File
	reader *pipes.Reader

	mu     sync.Mutex
	timers []*time.Timer
	done   bool
}

// PipeSize is the capacity of the fd-2 pipe: one page.
const PipeSize = 4096

func arrange(kind string, stalled bool) (*arrangement, error) {
	a := &arrangement{}
	switch kind {
	case FD2File, "":
		f, err := os.CreateTemp("", "logjam-calibrate-fd2-*")
		if err != nil {
			return nil, err
		}
		a.file, a.child = f, f
	case FD2Pipe:
		p, err := pipes.New(PipeSize)
		if err != nil {
			return nil, err
		}
		a.child, a.parent = p.W, p.R
		a.reader = pipes.NewReader(p.R, pipes.ReaderOptions{Stalled: stalled})
	case FD2PTY:
		master, slave, err := pipes.OpenPTY()
		if err != nil {
			return nil, err
		}
		a.child, a.parent = slave, master
		a.reader = pipes.NewReader(master, pipes.ReaderOptions{Stalled: stalled})
	default:
		return nil, fmt.Errorf("unknown fd-2 arrangement %q", kind)
	}
	return a, nil
}

func (a *arrangement) resumeAfter(d time.Duration) {
	if a.reader == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return
	}
	if d <= 0 {
		a.reader.Resume()
		return
	}
	a.timers = append(a.timers, time.AfterFunc(d, a.reader.Resume))
}

func (a *arrangement) pause(d time.Duration) {
	if a.reader == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return
	}
	a.reader.Stall()
	a.timers = append(a.timers, time.AfterFunc(d, a.reader.Resume))
}

func (a *arrangement) collect() ([]byte, error) {
	a.mu.Lock()
	a.done = true
	for _, t := range a.timers {
		t.Stop()
	}
	a.mu.Unlock()
	if a.file != nil {
		defer os.Remove(a.file.Name())
		defer a.file.Close()
		return os.ReadFile(a.file.Name())
	}
	_ = a.child.Close()
	a.reader.Resume()
	err := a.reader.Wait(5 * time.Second)
	if err != nil {
		a.reader.Stop()
	}
	b := a.reader.Bytes()
	_ = a.parent.Close()
	if err != nil && !errors.Is(err, pipes.ErrStopped) {
		return b, fmt.Errorf("reading fd 2 to EOF: %w", err)
	}
	return b, nil
}

func (a *arrangement) abandon() { _, _ = a.collect() }

// WriteEvidence leaves the run's telemetry, stdout, fd-2 bytes and verdict
// in dir.
func (o *Outcome) WriteEvidence(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var tel []byte
	for _, e := range o.Result.Events {
		tel = append(tel, e.Raw...)
		tel = append(tel, '\n')
	}
	v := fmt.Sprintf("%s %s%s py%s %s: %s\n%s\n%s\n", o.Row, o.Policy, o.Variant, o.Python, o.Profile, o.Observed, o.Reason, o.Result.Command)
	for name, b := range map[string][]byte{"telemetry.jsonl": tel, "stdout.txt": o.Result.Stdout, "fd2.bin": o.FD2, "verdict.txt": []byte(v)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
