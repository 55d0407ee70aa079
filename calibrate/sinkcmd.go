package calibrate

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"logjam/harness/report"
	"logjam/internal/childbin"
	"logjam/internal/config"
	"logjam/internal/runfolder"
	"logjam/internal/textout"
	"logjam/scenario"
	"logjam/scenario/schedule"
	"logjam/verdict"
)

// SinkCell is one real row played with a user's sink.
type SinkCell struct {
	Row       string
	Python    string
	Buffering string
	Verdict   verdict.Verdict
	Reason    string
	Bundle    string // the evidence bundle's directory ("" when not written)
	Cell      report.Cell
}

// PlaySink builds the extension with the user's sink for every interpreter
// in ins and plays every real row (the lazy-init rows excepted: no sink
// plays a part in them) with it under buffered and unbuffered sys.stderr, writing an
// evidence bundle per cell under reports/evidence. progress, when set, is
// called after each cell.
func PlaySink(ctx context.Context, user *UserSink, ins []Interpreter, rows []Row, bufferings []string, reports string, progress func(SinkCell)) ([]SinkCell, error) {
	return playSink(ctx, user, ins, rows, bufferings, reports, 1, nil, progress)
}

// playSink is PlaySink, calling started before each interpreter's build.
func playSink(ctx context.Context, user *UserSink, ins []Interpreter, rows []Row, bufferings []string, reports string, repeat int, started func(Interpreter), progress func(SinkCell)) ([]SinkCell, error) {
	var out []SinkCell
	var built Interpreter
	var dir string
	for _, at := range sinkPlan(ins, rows, bufferings) {
		in, row, buf := at.in, at.row, at.buf
		if in.Path != built.Path || in.Version != built.Version {
			if started != nil {
				started(in)
			}
			var err error
			if dir, err = BuildSink(in, user); err != nil {
				return out, err
			}
			built = in
		}
		for r := 1; r <= max(1, repeat); r++ {
			if err := ctx.Err(); err != nil {
				return out, err // interrupted: the cells not played are NOTRUN (notPlayed)
			}
			t0 := time.Now()
			o, err := Run(ctx, in, dir, row, "user", "", buf, Options{CheckGIL: true})
			if err != nil {
				return out, fmt.Errorf("%s on python %s: %w", row.ID, in.Version, err)
			}
			if o.Observed == verdict.Crash {
				o.Reason += pythonFatal(o.FD2)
			}
			c := at.cell(user)
			c.Observed = o.Observed
			c.Ms = time.Since(t0).Milliseconds()
			c.Real = map[string]verdict.Verdict{in.Version: o.Observed}
			c.Evidence = report.Evidence{Reason: o.Reason, Ledger: o.Ledger, Command: o.Command}
			if repeat > 1 {
				c.Repeat = r
			}
			sc := SinkCell{Row: row.ID, Python: in.Version, Buffering: BufferingName(buf), Verdict: o.Observed, Reason: o.Reason}
			if reports != "" {
				sc.Bundle = report.BundleDir(reports, c.Name)
				if repeat > 1 {
					sc.Bundle += fmt.Sprintf(".r%d", r)
				}
				c.Bundle = sc.Bundle
				if err := report.WriteBundle(sc.Bundle, Bundle(o, c)); err != nil {
					sc.Bundle = ""
				}
			}
			sc.Cell = c
			out = append(out, sc)
			if progress != nil {
				progress(sc)
			}
		}
	}
	return out, nil
}

// sinkAt is one cell of a sink run (before its repeats): an interpreter
// found, a row with a sink, a buffering it plays under.
type sinkAt struct {
	in  Interpreter
	row Row
	buf string
}

// sinkPlan is every cell a sink run plays, in its order (interpreter by
// interpreter: each is built once): playSink plays them, cellCount counts
// them and notPlayed lists the ones an interrupt left.
func sinkPlan(ins []Interpreter, rows []Row, bufferings []string) []sinkAt {
	var plan []sinkAt
	for _, in := range ins {
		if in.Missing != "" {
			continue
		}
		for _, row := range rows {
			if row.Variants != nil {
				continue
			}
			for _, buf := range bufferings {
				if row.playsSinkUnder(buf) {
					plan = append(plan, sinkAt{in, row, buf})
				}
			}
		}
	}
	return plan
}

// cell is the matrix cell of at (its verdict not yet observed): a
// correct sink's promise, OK, expected on every real row.
func (at sinkAt) cell(user *UserSink) report.Cell {
	id, py, buf := at.row.ID, at.in.Version, at.buf
	return report.Cell{ID: id, Name: sinkCellName(id, user, buf, py), Family: "sink",
		Cell:     scenario.Cell{Scenario: id, Policy: sinkName(user.Path), Platform: scenario.DefaultPlatform, Python: py, Buffering: buf},
		Expected: verdict.OK,
		Rerun:    report.SinkRerun(sinkArg(user), id, py, BufferingName(buf)),
		Sink:     &report.SinkSource{File: filepath.Base(user.Path), SHA256: user.Digest(), Path: user.Abs}}
}

// Command is `logjam calibrate -sink FILE.cpp [-py 3.12,3.13] [-rows D1,I2]
// [-buffering buffered,unbuffered] [-out DIR]`: the user's sink compiled into
// the extension and played on every real row, on every interpreter found;
// one matrix row per (row, python, buffering) with the real verdict, and an
// evidence bundle per cell under DIR/evidence. Exit status 0 when every
// cell is OK, 1 when one is not, 2 on bad input.
func Command(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("logjam calibrate", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // one line on bad input, below
	sinkPath := fs.String("sink", "", "a C++ file defining logjam::Sink *logjam_make_sink() (docs/SINK.md)")
	py := fs.String("py", "", "keep these versions (3.12 or 3.12.1, comma-separated); default: every interpreter found")
	rowsArg := fs.String("rows", "", "keep these rows (comma-separated); default: every real row")
	bufArg := fs.String("buffering", "buffered,unbuffered", "how Python opens sys.stderr: buffered, unbuffered (python -u), comma-separated")
	fs.StringVar(bufArg, "profiles", *bufArg, "") // the old spelling of -buffering, left out of the help
	repeat := fs.Int("repeat", 1, "play each cell this many times: a row whose verdicts differ between its plays is named FLAKY")
	outDir := fs.String("out", "", "where the reports and the evidence bundles go (default: a folder of its own under the checkout's reports/, runs/<time>-sink-<name>, with reports/latest-sink-<name> moved to it when the run ends)")
	bad := func(format string, a ...any) int {
		fmt.Fprintf(errOut, "logjam calibrate: "+format+"\n", a...)
		return 2
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(w, "usage: logjam calibrate -sink FILE.cpp [-py V,...] [-rows R,...] [-buffering buffered,unbuffered] [-repeat N] [-out DIR]")
		fmt.Fprintln(w, "\nyour own sink (docs/SINK.md, \"Bring your own sink\") compiled into the calibration's extension and played on\nevery real row, on every interpreter found, sys.stderr buffered and unbuffered, each cell judged against a correct\nsink's promise (OK); then its matrix beside the six built-in policies', each cell not OK with its reason, its\nreplay and its rerun, and the reports (matrix.json, junit.xml, matrix.html, matrix.md, evidence/).\nExit status 0 when every cell is OK, 1 when one is not, 2 for bad input, 130 after Ctrl-C.\n\nflags:")
		help := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name != "profiles" {
				help.Var(f.Value, f.Name, f.Usage)
			}
		})
		help.SetOutput(w)
		help.PrintDefaults()
		return 0
	} else if err != nil {
		return bad("%v (usage: logjam calibrate -sink FILE.cpp [-py V,...] [-rows R,...] [-buffering buffered,unbuffered] [-out DIR])", err)
	}
	if *repeat < 1 || *repeat > 100 {
		return bad("-repeat %d (accepted: 1 to 100)", *repeat)
	}
	if *sinkPath == "" || fs.NArg() > 0 {
		return bad("usage: logjam calibrate -sink FILE.cpp [-py V,...] [-rows R,...] [-buffering buffered,unbuffered] [-repeat N] [-out DIR]")
	}
	var bufferings []string
	for _, p := range strings.Split(*bufArg, ",") {
		switch p {
		case "buffered":
			bufferings = append(bufferings, Buffered)
		case "unbuffered":
			bufferings = append(bufferings, Unbuffered)
		default:
			return bad("-buffering: unknown %q (accepted: buffered, unbuffered)", p)
		}
	}
	var rows []Row
	want := splitList(*rowsArg)
	for _, r := range Rows {
		if r.Variants == nil && (want == nil || slices.Contains(want, r.ID)) {
			rows = append(rows, r)
		}
	}
	for _, id := range want {
		if !slices.ContainsFunc(rows, func(r Row) bool { return r.ID == id }) {
			return bad("-rows: no real row %q with a sink (accepted: %s)", id, rowIDs())
		}
	}
	src, err := os.ReadFile(*sinkPath)
	if os.IsNotExist(err) {
		return bad("-sink %s: no such file (a C++ file defining logjam_make_sink(): docs/SINK.md)", *sinkPath)
	} else if err != nil {
		return bad("-sink %v", err)
	}
	if !strings.Contains(string(src), "logjam_make_sink") {
		return bad("%s defines no logjam_make_sink() (docs/SINK.md: the sink's factory)", *sinkPath)
	}
	var ins []Interpreter
	for _, in := range Discover() {
		if v := splitList(*py); v == nil || slices.Contains(v, in.Short()) || slices.Contains(v, in.Version) {
			ins = append(ins, in)
		}
	}
	if len(ins) == 0 {
		var found []string
		for _, in := range Discover() {
			found = append(found, in.Version)
		}
		if *py != "" && len(found) > 0 {
			return bad("-py %s: no such interpreter among those found (%s)", *py, strings.Join(found, ", "))
		}
		return bad("no python3 (3.10-3.13) with its headers found")
	}
	if _, err := Compiler(); err != nil {
		return bad("no C++ compiler (g++ or $CXX)")
	}
	// The run's reports go where a chaos run's do, under reports/ at the
	// module root (the checkout logjam runs from, wherever the sink is):
	// without -out a folder of its own, reports/runs/<time>-sink-<name>,
	// and reports/latest-sink-<name> moves to it when the run ends.
	reports := "reports"
	if root, err := config.Root(); err == nil {
		reports = filepath.Join(root, "reports")
	}
	pointer := ""
	if *outDir == "" {
		slug := "sink-" + runfolder.Slug(sinkName(*sinkPath), 40)
		if *outDir, err = runfolder.New(reports, time.Now(), slug); err != nil {
			fmt.Fprintf(w, "logjam calibrate: %v\n", err)
			return 1
		}
		pointer = "latest-" + slug
	}
	if abs, err := filepath.Abs(*outDir); err == nil {
		*outDir = abs // the printed replay lines work from any folder
	}
	// Ctrl-C (or SIGTERM) stops the run as it stops logjam chaos: the cell
	// playing is killed (INTERRUPTED), those never started are NOTRUN rows,
	// the matrix is printed and written, no pointer moves, exit status 130.
	// A second one ends the process at once.
	sigCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	ctx, cancel := context.WithTimeout(sigCtx, 30*time.Minute)
	defer cancel()
	user := &UserSink{Path: *sinkPath, Source: src}
	if abs, err := filepath.Abs(*sinkPath); err == nil {
		user.Abs = abs
	}
	total := cellCount(ins, rows, bufferings, *repeat)
	fmt.Fprintf(w, "logjam calibrate: sink %s (SHA-256 %.12s): %d cells (%d rows x %s x %s%s), each judged against a correct sink's promise: OK\n",
		*sinkPath, user.Digest(), total, len(rows), schedule.Plural(len(bufferings), "buffering"), schedule.Plural(len(ins), "interpreter"), repeatNote(*repeat))
	start := time.Now()
	played, n := 0, 0
	var cells []report.Cell
	var sinkCells []SinkCell
	_, err = playSink(ctx, user, ins, rows, bufferings, *outDir, *repeat, func(in Interpreter) {
		played++
		fmt.Fprintf(w, "logjam calibrate: python %s (%d of %d): compiling %s into the extension (a minute at most)\n", in.Version, played, len(ins), *sinkPath)
	}, func(c SinkCell) {
		n++
		fmt.Fprintln(w, progressLine(n, total, c))
		cells = append(cells, c.Cell)
		sinkCells = append(sinkCells, c)
	})
	var ce *CompileError
	if errors.As(err, &ce) {
		if pointer != "" {
			os.RemoveAll(*outDir) // nothing half-run: the run's own folder goes with it
		}
		return bad("%s", ce.Error())
	}
	if sigCtx.Err() != nil {
		stopSignals() // a second Ctrl-C ends the process at once
		fmt.Fprintf(errOut, "logjam calibrate: interrupted: the cell playing was killed (INTERRUPTED), the ones never started are NOTRUN\n")
		cells = append(cells, notPlayed(user, ins, rows, bufferings, *repeat, cells)...)
		summarize(w, *outDir, sinkName(*sinkPath), cells, time.Since(start))
		fmt.Fprintf(w, "logjam calibrate: interrupted; the run's folder is %s (no pointer moved)\n", *outDir)
		return 130
	}
	if err != nil {
		fmt.Fprintf(w, "logjam calibrate: %v\n", err)
		return 1
	}
	besideNote := besideBuiltIns(ctx, cells, sinkCells)
	if sigCtx.Err() != nil {
		stopSignals()
		fmt.Fprintf(errOut, "logjam calibrate: interrupted while the built-in policies' columns were played: every cell of your sink ran; the columns are left out\n")
		summarize(w, *outDir, sinkName(*sinkPath), cells, time.Since(start))
		fmt.Fprintf(w, "logjam calibrate: interrupted; the run's folder is %s (no pointer moved)\n", *outDir)
		return 130
	}
	code := summarize(w, *outDir, sinkName(*sinkPath), cells, time.Since(start))
	if besideNote != "" {
		fmt.Fprintln(w, besideNote)
	}
	if pointer != "" {
		runfolder.Publish(reports, *outDir, pointer, code, w)
	}
	return code
}

// pythonFatal is what CPython said as it ended the process, when it did
// (its first "Fatal Python error: ..." line on fd 2, which is how the
// debug allocator names a sink that allocates without the GIL), for a
// CRASH's reason: "; CPython: Fatal Python error: ..."; "" when fd 2 holds
// none. The child's bytes are shown neutralised and cut.
func pythonFatal(fd2 []byte) string {
	i := bytes.Index(fd2, []byte("Fatal Python error: "))
	if i < 0 {
		return ""
	}
	line, _, _ := bytes.Cut(fd2[i:], []byte("\n"))
	if len(line) > 160 {
		line = append(line[:160:160], "..."...)
	}
	if len(bytes.TrimSpace(line)) <= len("Fatal Python error:") {
		return "" // the message was cut off by the crash itself
	}
	return "; CPython: " + textout.Terminal(string(line))
}

// sinkCellName is the name of a sink's cell: its row, the sink's file,
// the buffering and the Python, as the matrix and --focus spell cells.
func sinkCellName(row string, user *UserSink, buf, python string) string {
	return fmt.Sprintf("%s sink=%s [stderr=%s py=%s]", row, filepath.Base(user.Path), BufferingName(buf), python)
}

// notPlayed is a NOTRUN row for each cell of the run (as playSink plays
// them) that played has none of: an interrupted run's cells never started.
func notPlayed(user *UserSink, ins []Interpreter, rows []Row, bufferings []string, repeat int, played []report.Cell) []report.Cell {
	seen := map[string]int{}
	for _, c := range played {
		seen[c.Name]++
	}
	var out []report.Cell
	for _, at := range sinkPlan(ins, rows, bufferings) {
		c := at.cell(user)
		if seen[c.Name] > 0 {
			continue // played (every repeat of a cell begun is in the matrix)
		}
		c.Observed = verdict.NotRun
		c.Evidence = report.Evidence{Reason: "not run: the run was interrupted before this cell started"}
		out = append(out, c)
	}
	return out
}

// playsSinkUnder says whether a sink run plays the row with sys.stderr
// opened so: T1 under one buffering only (exit-time only: the buffering
// plays no part).
func (r Row) playsSinkUnder(buf string) bool { return r.ID != "T1" || buf == Buffered }

// cellCount is how many cells playSink plays: sinkPlan's, repeat times.
func cellCount(ins []Interpreter, rows []Row, bufferings []string, repeat int) int {
	return len(sinkPlan(ins, rows, bufferings)) * max(1, repeat)
}

func repeatNote(repeat int) string {
	if repeat > 1 {
		return fmt.Sprintf(", each played %d times", repeat)
	}
	return ""
}

// progressLine is a cell as it ends: its count, row, Python, buffering and
// verdict, and for a verdict other than OK its reason cut to one short
// line (the whole reason, the bundle and the commands are in the summary
// at the end).
func progressLine(n, total int, c SinkCell) string {
	reason := ""
	if c.Verdict != verdict.OK {
		reason = strings.Join(strings.Fields(c.Reason), " ")
		if len(reason) > 100 {
			reason = reason[:100] + "..."
		}
	}
	width := len(fmt.Sprint(total))
	return strings.TrimRight(fmt.Sprintf("[%*d/%d] %-4s %-8s %-10s %-9s %s", width, n, total, c.Row, c.Python, c.Buffering, c.Verdict, reason), " ")
}

// besideBuiltIns sets each cell's built-in columns (Cell.Beside: the
// model's cells, PlayBeside). It never changes the run's exit status: a
// child that does not build or a cell that does not run leaves the columns
// out, and the line it returns says why ("" when they are in).
func besideBuiltIns(ctx context.Context, cells []report.Cell, played []SinkCell) string {
	if len(played) == 0 {
		return ""
	}
	bs, err := playBuiltIns(ctx, played)
	if err != nil {
		return fmt.Sprintf("logjam calibrate: the built-in policies' columns are left out: %v", err)
	}
	for i := range cells {
		for _, b := range bs {
			if b.Row == cells[i].ID && b.Python == cells[i].Python && b.Buffering == BufferingName(cells[i].Buffering) {
				cells[i].Beside = b.BuiltIn
			}
		}
	}
	return ""
}

// playBuiltIns builds the simulated child from this checkout and plays
// the built-in policies' cells beside cells (PlayBeside).
func playBuiltIns(ctx context.Context, cells []SinkCell) ([]Beside, error) {
	root, err := config.Root()
	if err != nil {
		return nil, err
	}
	prof, err := config.FromEnv()
	if err != nil {
		return nil, err
	}
	bin, _, err := childbin.Build(root)
	if err != nil {
		return nil, err
	}
	return PlayBeside(ctx, bin, prof, cells, 0)
}

// summarize writes the sink's matrix (matrix.json, junit.xml, matrix.html,
// matrix.md, as a chaos run's) and prints it as a chaos run does: the grid
// (the sink's column, then the built-in policies' beside it), the counts,
// the legend and each cell not OK summed up once (report.RenderStyledText);
// then the rows whose verdict differs by interpreter or buffering, the
// cells whose plays differ (FLAKY), the built-in policy the sink behaves
// most like, and where the reports are.
func summarize(w io.Writer, out, name string, cells []report.Cell, took time.Duration) int {
	run := report.Run{ID: "sink-" + name, Profile: "real", Mode: "real", Shards: []string{"all"}, Go: runtime.Version(), Started: time.Now().Add(-took), Seconds: took.Seconds()}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintf(w, "logjam calibrate: %v\n", err)
		return 1
	}
	if err := report.WriteAll(out, run, cells); err != nil {
		fmt.Fprintf(w, "logjam calibrate: %v\n", err)
		return 1
	}
	fmt.Fprintf(w, "\nyour sink's cells (real CPython) beside the built-in policies' (the model's cells, played now):")
	notOK := report.RenderStyledText(w, report.Collapse(report.Group(cells)), report.Styled(w))
	byRow := map[string]map[verdict.Verdict][]string{}
	var order []string
	var played []report.Cell // an interrupted run's INTERRUPTED and NOTRUN cells tell nothing of the sink
	for _, c := range cells {
		if c.Observed != verdict.Interrupted && c.Observed != verdict.NotRun {
			played = append(played, c)
		}
	}
	for _, c := range played {
		if byRow[c.ID] == nil {
			byRow[c.ID] = map[verdict.Verdict][]string{}
			order = append(order, c.ID)
		}
		at := c.Python + " " + BufferingName(c.Buffering)
		if !slices.Contains(byRow[c.ID][c.Observed], at) {
			byRow[c.ID][c.Observed] = append(byRow[c.ID][c.Observed], at)
		}
	}
	fmt.Fprintln(w)
	for _, id := range order {
		if len(byRow[id]) < 2 {
			continue
		}
		var parts []string
		for _, v := range slices.Sorted(maps.Keys(byRow[id])) {
			parts = append(parts, fmt.Sprintf("%s on %s", v, strings.Join(byRow[id][v], ", ")))
		}
		fmt.Fprintf(w, "%s differs by interpreter or buffering: %s (-repeat N, or logjam replay -n N of a bundle, tells a real difference from a flaky one)\n", id, strings.Join(parts, "; "))
	}
	plays := map[string]map[verdict.Verdict]int{}
	var names []string
	for _, c := range played {
		if plays[c.Name] == nil {
			plays[c.Name] = map[verdict.Verdict]int{}
			names = append(names, c.Name)
		}
		plays[c.Name][c.Observed]++
	}
	for _, n := range names {
		if len(plays[n]) < 2 {
			continue
		}
		var parts []string
		for _, v := range slices.Sorted(maps.Keys(plays[n])) {
			parts = append(parts, fmt.Sprintf("%s %d", v, plays[n][v]))
		}
		fmt.Fprintf(w, "FLAKY %s: %s of its plays\n", n, strings.Join(parts, ", "))
	}
	if l := closestLine(name, cells); l != "" {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "logjam calibrate: %.0f s; reports in %s (%s, %s, %s, %s; evidence bundles under %s)\n", took.Seconds(), out,
		report.MatrixFile, report.JUnitFile, report.HTMLFile, report.MarkdownFile, report.EvidenceDir)
	if notOK > 0 {
		return 1
	}
	return 0
}

// errOut is where bad input is said (one line, exit status 2), as every
// logjam command says it: stderr. Tests read it.
var errOut io.Writer = os.Stderr

// sinkName is the sink file's name without its extension: its column in
// the matrix and the name of its run folder.
func sinkName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func rowIDs() string {
	var ids []string
	for _, r := range Rows {
		if r.Variants == nil {
			ids = append(ids, r.ID)
		}
	}
	return strings.Join(ids, " ")
}

// sinkArg is how a cell's recorded rerun names the sink: its absolute
// path when known, else its base name.
func sinkArg(u *UserSink) string {
	if u.Abs != "" {
		return u.Abs
	}
	return filepath.Base(u.Path)
}
