package childbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// BenchmarkChildStart alternates the child built as BuildEnv builds it
// (static) with one built with the go command's defaults (cgo on:
// dynamically linked), each running H0 (a program that prints done), and
// reports the median CPU time (user+sys) of each and their ratio: one run
// of the benchmark sees the same load for both. A figure for the notes;
// no test asserts a time.
//
//	go test -run '^$' -bench ChildStart -benchtime 40x ./internal/childbin/
func BenchmarkChildStart(b *testing.B) {
	build := func(name string, env []string) string {
		bin := filepath.Join(b.TempDir(), name)
		cmd := exec.Command("go", "build", "-o", bin, Package)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
		return bin
	}
	bins := []string{build("simrt-static", BuildEnv()), build("simrt-default", os.Environ())}
	cpu := make([][]float64, len(bins))
	for b.Loop() {
		for i, bin := range bins {
			cmd := exec.Command(bin, "-scenario", "H0")
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s: %v", bin, err)
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpu[i] = append(cpu[i], float64(ru.Utime.Nano()+ru.Stime.Nano())/1e6)
		}
	}
	median := func(xs []float64) float64 {
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	static, dynamic := median(cpu[0]), median(cpu[1])
	b.ReportMetric(static, "static-cpu-ms")
	b.ReportMetric(dynamic, "default-cpu-ms")
	b.ReportMetric(static/dynamic, "static/default")
}
