package watchdog

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"logjam/pipes"
	"logjam/telemetry"
)

// plumbing is the pipes Run puts between itself and the child.
type plumbing struct {
	telemetry, telemetryChild *os.File
	stdout, stderr            *streamCapture // nil when the caller's file goes to the child as is
}

// plumb wires cmd for Run: telemetry on fd 3, captured or tee'd outputs, a
// process group of its own, the death signal and WaitDelay.
func plumb(cmd *exec.Cmd, marker string, grace time.Duration) (*plumbing, error) {
	p := &plumbing{}
	var err error
	if p.telemetry, p.telemetryChild, err = os.Pipe(); err != nil {
		return nil, err
	}
	if _, isFile := cmd.Stdout.(*os.File); !isFile {
		if p.stdout, err = newStreamCapture(cmd.Stdout, cmd.Stdout == nil, newMarkerScanner(marker)); err != nil {
			p.closeAll()
			return nil, err
		}
	}
	_, stderrIsFile := cmd.Stderr.(*os.File)
	shareStdout := cmd.Stderr != nil && !stderrIsFile && sameWriter(cmd.Stdout, cmd.Stderr)
	if !stderrIsFile && !shareStdout {
		if p.stderr, err = newStreamCapture(cmd.Stderr, cmd.Stderr == nil, nil); err != nil {
			p.closeAll()
			return nil, err
		}
	}
	if p.stdout != nil {
		cmd.Stdout = p.stdout.child
	}
	switch {
	case shareStdout:
		// One pipe for both keeps their interleaving, as os/exec does.
		cmd.Stderr = p.stdout.child
	case p.stderr != nil:
		cmd.Stderr = p.stderr.child
	}
	cmd.ExtraFiles = append([]*os.File{p.telemetryChild}, cmd.ExtraFiles...)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, telemetry.FDEnv+"=3")

	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		copied := *cmd.SysProcAttr // the caller's struct may be shared
		attr = &copied
	}
	if !attr.Setsid { // a new session is a new group already
		attr.Setpgid, attr.Pgid = true, 0
	}
	setDeathSignal(attr)
	cmd.SysProcAttr = attr
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = grace // bounds os/exec's own stdin copying
	}
	return p, nil
}

func (p *plumbing) captures() []*streamCapture {
	var list []*streamCapture
	for _, s := range []*streamCapture{p.stdout, p.stderr} {
		if s != nil {
			list = append(list, s)
		}
	}
	return list
}

// closeChildEnds closes the parent's copies of the child's pipe ends, so that
// EOF comes when the child's group lets go of them.
func (p *plumbing) closeChildEnds() {
	_ = p.telemetryChild.Close()
	for _, s := range p.captures() {
		_ = s.child.Close()
	}
}

func (p *plumbing) closeAll() {
	p.closeChildEnds()
	_ = p.telemetry.Close()
	for _, s := range p.captures() {
		_ = s.pipe.Close()
	}
}

// drain waits until every pipe reached EOF, then closes the read ends. A
// process that escaped the group may hold a write end open forever, so at
// until drain stops waiting, but only for pipes that hold no unread bytes
// (FIONREAD; off Linux, unknown: it stops):
// what the group wrote before it died is finite and is always read. A
// reader that fell behind on a loaded machine would lose the child's last
// events, the ones that decide a verdict (an abort's "abort" event; pinned
// by TestEventsStillInThePipeAtTheDeadlineAreRead). unreadCap bounds the
// wait for a writer that escaped and never stops writing.
func (p *plumbing) drain(telemetryDone <-chan struct{}, until time.Time) {
	files := append([]*os.File{p.telemetry}, pipesOf(p.captures())...)
	pending := []<-chan struct{}{telemetryDone}
	for _, s := range p.captures() {
		pending = append(pending, s.finished)
	}
	hardStop := until.Add(unreadCap)
	for i := 0; i < len(pending); {
		wait := time.Until(until)
		if !time.Now().Before(until) {
			if !time.Now().Before(hardStop) {
				break
			}
			if n, err := pipes.QueuedFile(files[i]); err != nil || n == 0 {
				i++ // held open, but all it holds was read: the next pipe
				continue
			}
			wait = unreadPoll
		}
		timer := time.NewTimer(wait)
		select {
		case <-pending[i]:
			i++
		case <-timer.C:
		}
		timer.Stop()
	}
	for _, f := range files {
		_ = f.SetReadDeadline(time.Now()) // wakes a blocked Read
		_ = f.Close()
	}
	// The telemetry reader ends at once now (unless OnEvent blocks), and
	// OnEvent must not be called after Run returns.
	<-telemetryDone
	// A copier with no caller's writer ends at once now, after recording
	// what it read. One with a writer can be stuck in it; give it a moment,
	// then leave it: it no longer records anything for the Result.
	grace := time.NewTimer(drainAllowance(0))
	defer grace.Stop()
	for _, s := range p.captures() {
		if s.out == nil {
			<-s.finished
			continue
		}
		select {
		case <-s.finished:
		case <-grace.C:
			return
		}
	}
}

const (
	// unreadCap bounds how long drain waits past its deadline for a reader
	// to take what a pipe still holds.
	unreadCap = 30 * time.Second
	// unreadPoll is how often drain looks at a pipe past its deadline.
	unreadPoll = 20 * time.Millisecond
)

func pipesOf(captures []*streamCapture) []*os.File {
	files := make([]*os.File, 0, len(captures))
	for _, s := range captures {
		files = append(files, s.pipe)
	}
	return files
}

// sameWriter reports whether a and b are the same writer, without panicking
// on writers that are not comparable.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
