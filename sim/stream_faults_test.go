package sim

import (
	"testing"

	"logjam/failpoints"
)

// The stream failpoints fault sys.stderr's write, never wurlitzer's sink,
// which is not sys.stderr: with the sink faulted too, a slow sys.stderr made
// a forwarder reading one byte at a time sleep for every byte (docs/RANDOM.md,
// "A slow sys.stderr is not wurlitzer's sink").
func TestTheStreamFailpointsLeaveWurlitzersSinkAlone(t *testing.T) {
	for _, tc := range []struct{ point, terms string }{
		{failpoints.StreamWriteOSError, "return(true)"},
		{failpoints.StreamWriteInterrupt, `return("before")`},
	} {
		t.Run(tc.point, func(t *testing.T) {
			fp := failpoints.NewScope()
			defer fp.Close()
			if err := fp.Enable(tc.point, tc.terms); err != nil {
				t.Fatal(err)
			}
			in := newInterp(nil, Linux, Version{3, 12, 0})
			main := in.newThread("MainThread", false, true)
			main.AcquireGIL()
			if err := NewMemStream("StringIO").Write(main, "a line\n"); err == nil {
				t.Errorf("sys.stderr's write raised nothing with %s on", tc.point)
			}
			sink := NewPlainMemStream("wurlitzer sink")
			if err := sink.Write(main, "a line\n"); err != nil {
				t.Errorf("wurlitzer's sink raised %v with %s on", err, tc.point)
			}
			if got := sink.Text(); got != "a line\n" {
				t.Errorf("wurlitzer's sink holds %q, want the line", got)
			}
		})
	}
}
