package runner

import (
	"flag"
	"fmt"
	"io"

	"logjam/harness/report"
	"logjam/internal/textout"
)

const mergeUsage = "usage: logjam report [DIR] | logjam report merge [-out DIR] [-real DIR]... SHARD_DIR... | logjam report diff DIR_A DIR_B"

// reportHelp is what logjam report -h says after its usage line.
const reportHelp = `

  logjam report [DIR]         print the matrix of a reports directory (default: reports/latest,
                              the last whole matrix) and write its matrix.json, junit.xml,
                              matrix.html and matrix.md again; exit 1 when a cell was not as expected
  logjam report merge         join the shards of one run (logjam chaos -shard K/N) into one
      -out DIR                where the merged reports go (default: reports)
      -real DIR               a real column's reports folder (its calibration.json), joined to the
                              merged matrix as the calibrate family; once per folder
  logjam report diff A B      the cells whose expected verdict or outcome differ between two runs`

// reportCmd is logjam report: merge, diff, or re-render a reports
// directory (reports/latest by default: the last whole matrix) from its
// matrix.json and run.json.
func reportCmd(args []string, w io.Writer) int {
	if wantsHelp(args) {
		return subUsage(w, mergeUsage+reportHelp, nil)
	}
	if len(args) > 0 && (args[0] == "merge" || args[0] == "diff") {
		return reportMerge(args, w)
	}
	if len(args) > 1 {
		return fail("%s", mergeUsage)
	}
	dir := defaultReports()
	if len(args) == 1 {
		dir = args[0]
	}
	run, cells, err := report.ReadDir(dir)
	if err != nil {
		return fail("%v", err)
	}
	if err := report.WriteAll(dir, run, cells); err != nil {
		return fail("%v", err)
	}
	if printRows(report.Group(cells), w) > 0 {
		return 1
	}
	return 0
}

// reportMerge (args[0] is merge or diff) joins shards' reports directories into one (logjam report
// merge), or compares two runs' cells and verdicts (logjam report diff).
func reportMerge(args []string, w io.Writer) int {
	if len(args) > 0 && args[0] == "diff" {
		if len(args) != 3 {
			return fail("%s", mergeUsage)
		}
		_, a, err := report.ReadDir(args[1])
		if err != nil {
			return fail("%v", err)
		}
		_, b, err := report.ReadDir(args[2])
		if err != nil {
			return fail("%v", err)
		}
		d := report.Diff(a, b)
		for _, l := range d {
			fmt.Fprintln(w, textout.CILine(l)) // a line of cell names from two folders someone else may have written
		}
		if len(d) > 0 {
			fmt.Fprintf(w, "logjam: %s and %s differ in %d cell(s)\n", args[1], args[2], len(d))
			return 1
		}
		fmt.Fprintf(w, "logjam: %s and %s hold the same %d cells with the same verdicts\n", args[1], args[2], report.Count(report.Group(a)).Cells)
		return 0
	}
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "reports", "where the merged reports go")
	var realDirs []string
	fs.Func("real", "a real column's reports folder (its "+report.CalibrationFile+"), joined to the merged matrix; once per folder", func(d string) error {
		realDirs = append(realDirs, d)
		return nil
	})
	if err := fs.Parse(args[1:]); err != nil {
		return fail("report merge: %v (%s)", err, mergeUsage)
	}
	if fs.NArg() == 0 {
		return fail("report merge: no shard directories (%s)", mergeUsage)
	}
	real, err := report.ReadRealColumns(realDirs)
	if err != nil {
		return fail("report merge: %v", err)
	}
	run, cells, err := report.Merge(*out, fs.Args(), real)
	if err != nil {
		return fail("report merge: %v", err)
	}
	fmt.Fprintf(w, "logjam: merged %d shard(s) (%v) into %s\n", fs.NArg(), run.Shards, *out)
	if len(realDirs) > 0 {
		fmt.Fprintf(w, "logjam: with %d real cell(s) from %d real column(s)\n", len(real), len(realDirs))
	}
	for _, c := range cells {
		if c.Family == report.MergeFamily && c.ID == report.MissingID {
			fmt.Fprintf(w, "logjam: report merge: %s\n", textout.Terminal(c.Failure))
		}
	}
	if printRows(report.Group(cells), w) > 0 || !run.Green {
		return 1
	}
	return 0
}
