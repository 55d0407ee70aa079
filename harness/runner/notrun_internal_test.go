package runner

import (
	"testing"

	"logjam/verdict"
)

// An interrupted run lists a NOTRUN row for every cell it did not run: a
// row of the catalogue and a row random search found (RF*, played by
// scenario R) alike, each in the matrix row its played cells take (a
// failpoint's cell in its "+point" row); a name that is neither gets none.
func TestNotRunRowsNameTheFoundRowsToo(t *testing.T) {
	for _, c := range []struct{ name, row, policy, label string }{
		{"D1 load-failure-logs-under-backend-lock [policy=fd2 platform=linux py=3.12]", "D1", "fd2", "D1"},
		{"RF1 destructor-logs-outside-call-stderr-captured [policy=buffered]", "RF1", "buffered", "RF1"},
		{"T1 daemon-threads-log-at-exit [policy=fd2 platform=linux py=3.13.7 fp=python-write-gil-dropped=return(10)]", "T1", "fd2", "T1 py3.13.7 +python-write-gil-dropped"},
	} {
		got, ok := notRunCell(chaosOptions{}, "random", c.name)
		if !ok || got.ID != c.row || got.Policy != c.policy || got.Row() != c.label || got.Observed != verdict.NotRun || got.Rerun == "" {
			t.Errorf("%s: NOTRUN row %+v (ok %v, matrix row %q), want row %s under %s in matrix row %q with its rerun", c.name, got, ok, got.Row(), c.row, c.policy, c.label)
		}
	}
	for _, name := range []string{
		"RF99 no-such-finding [policy=logjam]",
		"RF1 destructor-logs-outside-call-stderr-captured [policy=nosuch]",
		"matrix row D1 as a schedule, policy fd2",
	} {
		if got, ok := notRunCell(chaosOptions{}, "random", name); ok {
			t.Errorf("%s: a NOTRUN row %+v for no cell", name, got)
		}
	}
}
