package report

// Legend is what a newcomer needs to read the matrix, one line each: the
// columns, what an expected failure is, the row labels, the harness rows
// and the marks of a cell not as expected. The text matrix, matrix.md and
// matrix.html all print these lines (TestEveryReportCarriesTheLegend), so
// the three never explain the matrix differently.
var Legend = []string{
	"pystderr: the original sink (pybind11's pythonbuf): every line a strict Python write to sys.stderr",
	"fd2: review round 1: every line a direct write(2) to fd 2, no room check",
	"buffered: review round 2: a call's lines kept, flushed to sys.stderr as the outermost call returns",
	"adaptive: review round 3: direct while fd 2 has room (sys.stderr the original), else kept until the call's exit",
	"merged: the PR as merged: adaptive with four fixes (daemons, fatal lines, escaping, macOS pipes)",
	"logjam: ours; every logjam cell must be OK",
	"old, initfast, norace, fixed (lazyinit): torch's lazy device init, oldest first; fixed must be OK",
	"an expected HANG, LOST, CRASH, ... under an older column is the ground truth: a documented failure the suite proves it detects",
	"a row's label: its scenario and what differs from linux, Python 3.12: @macos, py3.10, unbuffered (python -u), /cuda (a backend), +python-write-gil-dropped (a failpoint)",
	"harness rows H1-H6: the watchdog's negative controls; their HANG, NOMARKER, FAILED, CRASH and ERROR are expected",
	"not as expected: !OBSERVED/EXPECTED; !VERDICT+check (another check of the spec failed); !FAIL (a spec outside any cell); each summed up at the end",
}
