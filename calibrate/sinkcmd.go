package calibrate

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"logjam/harness/report"
	"logjam/scenario"
	"logjam/verdict"
)

// SinkCell is one real row played with a user's sink.
type SinkCell struct {
	Row     string
	Python  string
	Profile string
	Verdict verdict.Verdict
	Reason  string
	Bundle  string // the evidence bundle's directory ("" when not written)
}

// PlaySink builds the extension with the user's sink for every interpreter
// in ins and plays every real row (the lazy-init rows excepted: no sink
// plays a part in them) with it under both stderr profiles, writing an
// evidence bundle per cell under reports/evidence. progress, when set, is
// called after each cell.
func PlaySink(ctx context.Context, user *UserSink, ins []Interpreter, rows []Row, profiles []string, reports string, progress func(SinkCell)) ([]SinkCell, error) {
	var out []SinkCell
	for _, in := range ins {
		if in.Missing != "" {
			continue
		}
		dir, err := BuildSink(in, user)
		if err != nil {
			return out, err
		}
		for _, row := range rows {
			if row.Variants != nil {
				continue
			}
			for _, prof := range profiles {
				if row.ID == "T1" && prof != Buffered {
					continue // exit-time only: the profile plays no part
				}
				o, err := Run(ctx, in, dir, row, "user", "", prof, Options{CheckGIL: true})
				if err != nil {
					return out, fmt.Errorf("%s on python %s: %w", row.ID, in.Version, err)
				}
				name := fmt.Sprintf("%s sink=%s [stderr=%s py=%s]", row.ID, filepath.Base(user.Path), ProfileName(prof), in.Version)
				c := report.Cell{ID: row.ID, Name: name, Family: "sink",
					Cell:     scenario.Cell{Scenario: row.ID, Policy: "user", Platform: scenario.DefaultPlatform, Python: in.Version, Stderr: prof},
					Observed: o.Observed,
					Real:     map[string]verdict.Verdict{in.Version: o.Observed},
					Evidence: report.Evidence{Reason: o.Reason, Ledger: o.Ledger, Command: o.Command}}
				sc := SinkCell{Row: row.ID, Python: in.Version, Profile: ProfileName(prof), Verdict: o.Observed, Reason: o.Reason}
				if reports != "" {
					sc.Bundle = report.BundleDir(reports, name)
					c.Bundle = sc.Bundle
					if err := report.WriteBundle(sc.Bundle, Bundle(o, c)); err != nil {
						sc.Bundle = ""
					}
				}
				out = append(out, sc)
				if progress != nil {
					progress(sc)
				}
			}
		}
	}
	return out, nil
}

// Command is `logjam calibrate -sink FILE.cpp [-py 3.12,3.13] [-rows D1,I2]
// [-profiles buffered,unbuffered] [-out DIR]`: the user's sink compiled into
// the extension and played on every real row, on every interpreter found;
// one matrix row per (row, python, profile) with the real verdict, and an
// evidence bundle per cell under DIR/evidence. Exit status 0 when every
// cell is OK, 1 when one is not, 2 on bad input.
func Command(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("logjam calibrate", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // one line on bad input, below
	sinkPath := fs.String("sink", "", "a C++ file defining logjam::Sink *logjam_make_sink() (docs/SINK.md)")
	py := fs.String("py", "", "keep these versions (3.12 or 3.12.1, comma-separated); default: every interpreter found")
	rowsArg := fs.String("rows", "", "keep these rows (comma-separated); default: every real row")
	profArg := fs.String("profiles", "buffered,unbuffered", "stderr profiles")
	outDir := fs.String("out", "reports/sink", "where the evidence bundles go")
	bad := func(format string, a ...any) int {
		fmt.Fprintf(w, "logjam calibrate: "+format+"\n", a...)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		return bad("%v (usage: logjam calibrate -sink FILE.cpp [-py V,...] [-rows R,...] [-profiles buffered,unbuffered] [-out DIR])", err)
	}
	if *sinkPath == "" || fs.NArg() > 0 {
		return bad("usage: logjam calibrate -sink FILE.cpp [-py V,...] [-rows R,...] [-profiles buffered,unbuffered] [-out DIR]")
	}
	src, err := os.ReadFile(*sinkPath)
	if err != nil {
		return bad("%v", err)
	}
	if !strings.Contains(string(src), "logjam_make_sink") {
		return bad("%s defines no logjam_make_sink() (docs/SINK.md: the sink's factory)", *sinkPath)
	}
	var profiles []string
	for _, p := range strings.Split(*profArg, ",") {
		switch p {
		case "buffered":
			profiles = append(profiles, Buffered)
		case "unbuffered":
			profiles = append(profiles, Unbuffered)
		default:
			return bad("unknown profile %q (buffered, unbuffered)", p)
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
			return bad("no real row %q with a sink (rows: %s)", id, rowIDs())
		}
	}
	var ins []Interpreter
	for _, in := range Discover() {
		if v := splitList(*py); v == nil || slices.Contains(v, in.Short()) || slices.Contains(v, in.Version) {
			ins = append(ins, in)
		}
	}
	if len(ins) == 0 {
		return bad("no python3 (3.10-3.13) with its headers found")
	}
	if _, err := Compiler(); err != nil {
		return bad("no C++ compiler (g++ or $CXX)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	user := &UserSink{Path: *sinkPath, Source: src}
	fmt.Fprintf(w, "%-4s %-8s %-10s %-9s %s\n", "row", "python", "stderr", "verdict", "evidence")
	notOK := 0
	_, err = PlaySink(ctx, user, ins, rows, profiles, *outDir, func(c SinkCell) {
		ev := ""
		if c.Verdict != verdict.OK {
			notOK++
			ev = c.Reason
			if c.Bundle != "" {
				ev += " [bundle " + c.Bundle + "]"
			}
		}
		fmt.Fprintf(w, "%-4s %-8s %-10s %-9s %s\n", c.Row, c.Python, c.Profile, c.Verdict, ev)
	})
	if err != nil {
		fmt.Fprintf(w, "logjam calibrate: %v\n", err)
		return 1
	}
	fmt.Fprintf(w, "%d cells not OK; evidence bundles under %s\n", notOK, filepath.Join(*outDir, "evidence"))
	if notOK > 0 {
		return 1
	}
	return 0
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
