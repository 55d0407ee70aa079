package calibrate_test

import (
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"logjam/calibrate"
	"logjam/suites/suitekit"
	"logjam/verdict"
)

// A user's sink, built from docs/SINK.md alone and played on the real rows
// (logjam calibrate -sink): a sink that writes through sys.stderr while the
// backend lock is held hangs where the matrix says pystderr hangs (D1); the
// header's own sink, brought the same way, is the control that passes.
var _ = ginkgo.Describe("a user's sink", ginkgo.Label("calibrate"), func() {
	ginkgo.DescribeTable("played on the real rows",
		func(ctx ginkgo.SpecContext, file, row string, want verdict.Verdict) {
			var in calibrate.Interpreter
			for _, i := range interps {
				if i.Missing == "" {
					in = i
					break
				}
			}
			if in.Path == "" {
				ginkgo.Skip("no interpreter with its headers")
			}
			path := filepath.Join("testdata", "sinks", file)
			src, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			r, _ := calibrate.RowNamed(row)
			cells, err := calibrate.PlaySink(ctx, &calibrate.UserSink{Path: path, Source: src},
				[]calibrate.Interpreter{in}, []calibrate.Row{r}, []string{calibrate.Buffered}, filepath.Join(reportsDir(), "sink"), nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(cells).To(HaveLen(1))
			Expect(cells[0].Verdict).To(Equal(want), "%s on %s: %s (evidence: %s)", file, row, cells[0].Reason, cells[0].Bundle)
			if file == "stderr_under_lock.cpp" && row == "D1" {
				// Beside the built-in policies: the model's cells of the same
				// row, interpreter and profile; this sink is pystderr's shape.
				bs, err := calibrate.PlayBeside(ctx, suitekit.Bin, suitekit.Profile, cells, 2)
				Expect(err).NotTo(HaveOccurred())
				Expect(bs).To(HaveLen(1))
				Expect(bs[0].BuiltIn).To(HaveKeyWithValue("pystderr", verdict.Hang))
				Expect(bs[0].BuiltIn).To(HaveKeyWithValue("logjam", verdict.OK))
				closest, differ := calibrate.Closest(bs)
				Expect(closest).To(Equal("pystderr"))
				Expect(differ).To(BeEmpty())
			}
		},
		ginkgo.Entry("sys.stderr under the backend lock: D1 hangs, as pystderr", "stderr_under_lock.cpp", "D1", verdict.Hang),
		ginkgo.Entry("the header's own sink as a user's: D1 passes", "header_logjam.cpp", "D1", verdict.OK),
		ginkgo.Entry("sys.stderr under the backend lock: C1 (no lock) passes", "stderr_under_lock.cpp", "C1", verdict.OK),
		ginkgo.Entry("Python touched without the GIL from a pool thread: D3 crashes, never a hang or a pass", "python_without_gil.cpp", "D3", verdict.Crash),
		ginkgo.Entry("Python touched without the GIL, on the calling thread only: C1 passes", "python_without_gil.cpp", "C1", verdict.OK),
	)
})
