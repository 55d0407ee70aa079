package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"logjam/verdict"
)

// ProgressEnv names the file logjam chaos gives its families (under
// <out>/logs): each suite process appends a line to it as its suite starts
// and as each of its specs ends, which logjam chaos follows while the
// families run. Unset (go test, go tool ginkgo), nothing is written.
const ProgressEnv = "LOGJAM_PROGRESS"

// ProgressEvent is one line of the progress file: a suite starting (Specs),
// a spec it counted that will not run after all (Dropped: skipped at run
// time, another shard's), or a spec that ended (Spec, with its cells).
type ProgressEvent struct {
	Family  string         `json:"family"`
	Specs   int            `json:"specs,omitempty"`
	Dropped int            `json:"dropped,omitempty"`
	Spec    string         `json:"spec,omitempty"`
	Failed  bool           `json:"failed,omitempty"` // the spec failed (a cell's verdict, or another check)
	Cells   []CellProgress `json:"cells,omitempty"`
}

// CellProgress is a cell as its spec ended: its place in the matrix (row
// and column, as the text matrix shows it) and its verdicts.
type CellProgress struct {
	Label    string          `json:"label"`
	Expected verdict.Verdict `json:"expected"`
	Observed verdict.Verdict `json:"observed"`
	Matches  bool            `json:"matches"` // observed is expected (or a named limit accepts it)
}

// SendProgress appends ev to the progress file, if logjam chaos gave one,
// in one write (O_APPEND: the suite's processes never interleave a line).
// Progress is a courtesy: an error is dropped.
func SendProgress(ev ProgressEvent) {
	path := os.Getenv(ProgressEnv)
	if path == "" {
		return
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	_, _ = f.Write(append(line, '\n'))
	_ = f.Close()
}

// countEvery is how often, when not every cell gets a line, a line says
// how many cells are done.
const countEvery = 5 * time.Second

// cellProgress prints the run's progress while the families run. With -v,
// a line per cell as it ends. Otherwise, on a terminal, one status line
// rewritten in place (the last cell that ended, and the count); elsewhere
// (CI, a pipe), the count every countEvery. Either way a cell not as
// expected gets a line of its own at once, and every family a line as it
// finishes: a log stays short, a failure is never lost in it.
type cellProgress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	verbose bool
	repeat  int
	totals  map[string]int // family -> specs per repeat, as its suite reported
	dropped int
	done    int
	cells   int // the cells of the specs done
	not     int
	status  string // shown in place (tty)
	counted time.Time
	changed bool // done moved since the last count line
}

func newCellProgress(w io.Writer, verbose bool, repeat int) *cellProgress {
	return &cellProgress{w: w, tty: isTerminal(w), verbose: verbose, repeat: max(repeat, 1), totals: map[string]int{}, counted: time.Now()}
}

// total is the specs the run will run, as far as the suites have said.
func (p *cellProgress) total() int {
	n := 0
	for _, t := range p.totals {
		n += t * p.repeat
	}
	return n - p.dropped
}

// selected is how many specs the suites said they would run, per repeat.
func (p *cellProgress) selected() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, t := range p.totals {
		n += t
	}
	return n
}

func (p *cellProgress) event(ev ProgressEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case ev.Specs > 0:
		if _, ok := p.totals[ev.Family]; !ok {
			p.totals[ev.Family] = ev.Specs
		}
		return
	case ev.Dropped > 0:
		p.dropped += ev.Dropped
		return
	case ev.Spec == "":
		return
	}
	p.done++
	p.cells += len(ev.Cells)
	p.changed = true
	var lines []string
	for _, c := range ev.Cells {
		ok := c.Matches && !ev.Failed
		if !ok {
			p.not++
		}
		lines = append(lines, p.cellLine(ev.Family, c, ev.Failed))
		if !ok && !p.verbose {
			p.printLocked(lines[len(lines)-1])
		}
	}
	if len(ev.Cells) == 0 {
		state := "passed"
		if ev.Failed {
			state = "FAILED"
			p.not++
		}
		lines = append(lines, fmt.Sprintf("logjam: [%d/%d] %s %s: %s", p.done, p.total(), ev.Family, ev.Spec, state))
		if ev.Failed && !p.verbose {
			p.printLocked(lines[0])
		}
	}
	switch {
	case p.verbose:
		for _, l := range lines {
			p.printLocked(l)
		}
	case p.tty:
		p.status = lines[len(lines)-1]
		p.drawLocked()
	case time.Since(p.counted) >= countEvery:
		p.countLocked()
	}
}

func (p *cellProgress) cellLine(fam string, c CellProgress, specFailed bool) string {
	var how string
	switch {
	case c.Matches && !specFailed:
		how = string(c.Observed) + " as expected"
	case c.Matches:
		how = string(c.Observed) + " as expected, but another check of its spec FAILED"
	default:
		how = fmt.Sprintf("%s, expected %s: NOT as expected", c.Observed, c.Expected)
	}
	return fmt.Sprintf("logjam: [%d/%d] %s %s %s", p.done, p.total(), fam, c.Label, how)
}

// countLocked prints how many cells are done (not on a terminal, without -v).
func (p *cellProgress) countLocked() {
	p.counted, p.changed = time.Now(), false
	fmt.Fprintf(p.w, "logjam: [%d/%d] specs done (%d cells, %d other specs), %d not as expected\n", p.done, p.total(), p.cells, p.done-p.cells, p.not)
}

// println prints a line of its own (a family finishing): above the status
// line on a terminal.
func (p *cellProgress) println(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.printLocked(line)
}

func (p *cellProgress) printLocked(line string) {
	if p.tty && p.status != "" {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintln(p.w, line)
	p.drawLocked()
}

// drawLocked shows the status line, cut to the terminal's width (a line
// that wrapped could not be rewritten in place).
func (p *cellProgress) drawLocked() {
	if !p.tty || p.status == "" {
		return
	}
	s := p.status
	if f, ok := p.w.(*os.File); ok {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 1 && len(s) >= width {
			s = s[:width-1]
		}
	}
	fmt.Fprint(p.w, "\r\x1b[K"+s)
}

// end clears the status line, or prints the last count.
func (p *cellProgress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.tty && p.status != "":
		fmt.Fprint(p.w, "\r\x1b[K")
		p.status = ""
	case !p.tty && !p.verbose && p.changed:
		p.countLocked()
	}
}

// followProgress reads the lines the suites append to path, as they come,
// until stop is closed; then it reads what is left and closes the returned
// channel.
func followProgress(path string, p *cellProgress, stop <-chan struct{}) <-chan struct{} {
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var f *os.File // opened once the first suite has written it
		defer func() {
			if f != nil {
				f.Close()
			}
		}()
		var partial []byte
		read := func() {
			if f == nil {
				var err error
				if f, err = os.Open(path); err != nil {
					f = nil
					return
				}
			}
			b, _ := io.ReadAll(f) // from where the last read ended
			partial = append(partial, b...)
			for {
				i := bytes.IndexByte(partial, '\n')
				if i < 0 {
					break
				}
				var ev ProgressEvent
				if json.Unmarshal(partial[:i], &ev) == nil {
					p.event(ev)
				}
				partial = partial[i+1:]
			}
		}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return finished
}

// buildTickEvery is how often, off a terminal, a line says the build is
// still going (on a terminal, a status line counts the seconds).
const buildTickEvery = 15 * time.Second

// buildTicker says how long the build has taken while it goes on, so that
// a first build (a minute or more) is never a silent one: on a terminal a
// status line rewritten every second, elsewhere a line every
// buildTickEvery. The returned function stops it (and clears the line).
func buildTicker(w io.Writer, what string) (stop func()) {
	tty, every := isTerminal(w), buildTickEvery
	if tty {
		every = time.Second
	}
	return tickBuild(w, tty, what, every)
}

func tickBuild(w io.Writer, tty bool, what string, every time.Duration) (stop func()) {
	started := time.Now()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				if tty {
					fmt.Fprint(w, "\r\x1b[K")
				}
				return
			case <-tick.C:
				if tty {
					fmt.Fprintf(w, "\r\x1b[Klogjam: building %s: %.0f s", what, time.Since(started).Seconds())
				} else {
					fmt.Fprintf(w, "logjam: still building %s: %.0f s so far\n", what, time.Since(started).Seconds())
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }
}
