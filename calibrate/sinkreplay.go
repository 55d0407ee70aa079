package calibrate

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"time"

	"logjam/harness/report"
	"logjam/internal/textout"
	"logjam/verdict"
)

// maxSinkSource bounds the sink file a replay reads.
const maxSinkSource = 1 << 20

// ReplaySink plays a cell of logjam calibrate -sink again, n times, from
// the user's own sink file: the bundle names the row, the interpreter and
// the buffering, and the SHA-256 of the source it was played with;
// the file must hash to it (a bundle is never trusted to carry the code
// itself). It prints each play's verdict beside the recorded one, as
// logjam replay does for a cell of the matrix; the exit status is 0 when
// every play observed the recorded verdict, 1 when one did not, 2 on bad
// input (a file that does not match, a row or interpreter not here).
func ReplaySink(w io.Writer, c report.Cell, sinkPath string, n int) int {
	name := textout.Terminal(c.Name)
	bad := func(format string, a ...any) int {
		fmt.Fprintf(w, "logjam: replay: "+format+"\n", a...)
		return 2
	}
	if c.Sink == nil {
		return bad("%s records no sink source: it was not made by logjam calibrate -sink", name)
	}
	st, err := os.Stat(sinkPath)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxSinkSource {
		return bad("-sink %s: not a regular file of at most %d bytes", textout.Terminal(sinkPath), maxSinkSource)
	}
	src, err := os.ReadFile(sinkPath)
	if err != nil {
		return bad("-sink: %v", err)
	}
	user := &UserSink{Path: sinkPath, Source: src}
	if got := user.Digest(); got != c.Sink.SHA256 {
		return bad("-sink %s has SHA-256 %.12s, the cell was played with a source of SHA-256 %.12s (%s): not the same sink",
			textout.Terminal(sinkPath), got, textout.Terminal(c.Sink.SHA256), textout.Terminal(c.Sink.File))
	}
	i := slices.IndexFunc(Rows, func(r Row) bool { return r.ID == c.Cell.Scenario && r.Variants == nil })
	if i < 0 {
		return bad("%s: no real row %s here", name, textout.Terminal(c.Cell.Scenario))
	}
	row := Rows[i]
	var in *Interpreter
	for _, x := range Discover() {
		if x.Version == c.Cell.Python && x.Missing == "" {
			in = &x
			break
		}
	}
	if in == nil {
		return bad("%s: no python %s with its headers here", name, textout.Terminal(c.Cell.Python))
	}
	if c.Cell.Buffering != Buffered && c.Cell.Buffering != Unbuffered {
		return bad("%s: buffering %q (accepted: buffered, unbuffered)", name, textout.Terminal(c.Cell.Buffering))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	fmt.Fprintf(w, "logjam replay: compiling %s (SHA-256 %.12s, as recorded) for python %s, then %d play(s) of %s\n", textout.Terminal(sinkPath), c.Sink.SHA256, in.Version, n, row.ID)
	dir, err := BuildSink(*in, user)
	if err != nil {
		return bad("%v", err)
	}
	differed := 0
	for k := 1; k <= n; k++ {
		o, err := Run(ctx, *in, dir, row, "user", "", c.Cell.Buffering, Options{CheckGIL: true})
		if err != nil {
			return bad("%v", err)
		}
		if o.Observed == verdict.Interrupted || ctx.Err() != nil {
			fmt.Fprintf(w, "replay %d/%d of %s: interrupted\n", k, n, name)
			return 130
		}
		same := "the same"
		if o.Observed != c.Observed {
			same, differed = "DIFFERENT", differed+1
		}
		fmt.Fprintf(w, "replay %d/%d of %s: observed %s, recorded %s: %s\n  reason: %s\n", k, n, name, o.Observed, textout.Terminal(string(c.Observed)), same, o.Reason)
	}
	fmt.Fprintf(w, "%d replays, %d observed the recorded verdict, %d did not\n", n, n-differed, differed)
	if differed > 0 {
		return 1
	}
	return 0
}
