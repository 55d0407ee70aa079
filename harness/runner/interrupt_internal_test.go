package runner

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gleak"

	"logjam/internal/proc"
)

// startFamily starts script as logjam chaos starts a family (its own process
// group, registered with the stopper) and waits until the script has
// written "started" to $MARK. done is closed when it has exited.
func startFamily(t *testing.T, st *stopper, script string) (mark string, done chan error) {
	g := NewWithT(t)
	mark = filepath.Join(t.TempDir(), "mark")
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "MARK="+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	g.Expect(cmd.Start()).To(Succeed())
	st.add(cmd)
	done = make(chan error, 1)
	go func() { err := cmd.Wait(); st.done(cmd); done <- err }()
	g.Eventually(func() string { b, _ := os.ReadFile(mark); return string(b) }).
		WithTimeout(30 * time.Second).Should(HavePrefix("started"))
	return mark, done
}

func TestTheFirstSIGINTIsPassedOnceToEachFamily(t *testing.T) {
	g := NewWithT(t)
	before := gleak.Goroutines()
	var errw bytes.Buffer
	_, cancel := context.WithCancel(context.Background())
	st := newStopper(cancel, &errw)
	script := `trap 'echo stopped >> "$MARK"; exit 3' INT; echo started > "$MARK"; while :; do sleep 0.05; done`
	markA, doneA := startFamily(t, st, script)
	markB, doneB := startFamily(t, st, script)
	g.Expect(syscall.Kill(os.Getpid(), syscall.SIGINT)).To(Succeed())
	for _, done := range []chan error{doneA, doneB} {
		g.Eventually(done).WithTimeout(30 * time.Second).Should(Receive(HaveOccurred()))
	}
	g.Expect(st.Interrupted()).To(BeClosed())
	st.close()
	for _, m := range []string{markA, markB} {
		b, _ := os.ReadFile(m)
		g.Expect(string(b)).To(Equal("started\nstopped\n"), "each family got exactly one SIGINT")
	}
	g.Expect(st.Signal()).To(Equal(os.Signal(syscall.SIGINT)))
	g.Expect(exitStatusFor(st.Signal())).To(Equal(130))
	g.Expect(errw.String()).To(ContainSubstring("interrupted (SIGINT): stopping the families"))
	g.Eventually(gleak.Goroutines).ShouldNot(gleak.HaveLeaked(before))
}

func TestASecondSIGINTKillsTheFamilies(t *testing.T) {
	g := NewWithT(t)
	var errw bytes.Buffer
	_, cancel := context.WithCancel(context.Background())
	st := newStopper(cancel, &errw)
	defer st.close()
	_, done := startFamily(t, st, `trap '' INT; echo started > "$MARK"; while :; do sleep 0.05; done`)
	g.Expect(syscall.Kill(os.Getpid(), syscall.SIGINT)).To(Succeed())
	g.Eventually(st.Interrupted()).Should(BeClosed())
	g.Consistently(done).WithTimeout(200*time.Millisecond).ShouldNot(Receive(), "the family ignores SIGINT")
	g.Expect(syscall.Kill(os.Getpid(), syscall.SIGINT)).To(Succeed())
	g.Eventually(done).WithTimeout(30 * time.Second).Should(Receive(HaveOccurred()))
	g.Eventually(errw.String).Should(ContainSubstring("killing the families"))
}

// A process that left its family's group (setsid) and outlived it is
// adopted by logjam, the child subreaper, killed by close and named; a
// process killed with its family's group (as the watchdog kills H6's
// grandchild) is adopted dead, a zombie: close reaps it and names nothing.
func TestWhatTheFamiliesLeaveRunningIsKilled(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid(1)")
	}
	g := NewWithT(t)
	var errw bytes.Buffer
	_, cancel := context.WithCancel(context.Background())
	st := newStopper(cancel, &errw)
	// The escaped process writes the mark once it has its own session: the
	// family exits only then (the group kill cannot reach it).
	live := leave(t, st, `setsid sh -c 'echo "started $$" > "$MARK"; exec sleep 300' & while [ ! -s "$MARK" ]; do sleep 0.01; done`)
	dead := leaveZombie(t, st)
	st.close()
	g.Expect(syscall.Kill(live, 0)).To(MatchError(syscall.ESRCH), "the escaped sleep %d is still alive", live)
	g.Expect(syscall.Kill(dead, 0)).To(MatchError(syscall.ESRCH), "the zombie %d was not reaped", dead)
	g.Expect(errw.String()).To(MatchRegexp(`^logjam: killed what the families left running: %d \((sh|sleep)\)\n$`, live))
}

// A clean run leaves only the dead: close says nothing.
func TestAZombieIsReapedWithoutAWarning(t *testing.T) {
	g := NewWithT(t)
	var errw bytes.Buffer
	_, cancel := context.WithCancel(context.Background())
	st := newStopper(cancel, &errw)
	dead := leaveZombie(t, st)
	st.close()
	g.Expect(syscall.Kill(dead, 0)).To(MatchError(syscall.ESRCH), "the zombie %d was not reaped", dead)
	g.Expect(errw.String()).To(BeEmpty())
}

// leave runs script as a family, waits until it has exited and returns the
// pid it wrote after "started".
func leave(t *testing.T, st *stopper, script string) int {
	g := NewWithT(t)
	mark, done := startFamily(t, st, script)
	g.Eventually(done).WithTimeout(30 * time.Second).Should(Receive())
	b, _ := os.ReadFile(mark)
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(b), "started")))
	g.Expect(err).NotTo(HaveOccurred())
	return pid
}

// leaveZombie runs a family whose sleep stays in its group, so that the
// group kill after the family exits kills it: it returns the sleep's pid
// once it is this process's zombie.
func leaveZombie(t *testing.T, st *stopper) int {
	pid := leave(t, st, `sleep 300 & echo "started $!" > "$MARK"`)
	NewWithT(t).Eventually(func() string { return stateAndParent(pid) }).WithTimeout(30*time.Second).
		Should(Equal("Z "+strconv.Itoa(os.Getpid())), "the sleep %d, killed with its group, adopted by this process", pid)
	return pid
}

// stateAndParent is a process's state and parent pid, as "Z 123".
func stateAndParent(pid int) string {
	p, err := proc.Read(pid)
	if err != nil {
		return ""
	}
	return string(p.State) + " " + strconv.Itoa(p.PPid)
}
