package testkit

import (
	"bytes"
	"os"
	"testing"
)

// CaptureStderr runs f with os.Stderr a pipe and returns what f wrote
// there. A goroutine drains the pipe while f runs, so a write larger than
// the pipe holds does not block f. os.Stderr is restored however f ends
// (a panic, t.Fatal); what other goroutines write to os.Stderr meanwhile
// is captured too.
func CaptureStderr(t testing.TB, f func()) (stderr string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = b.ReadFrom(r)
		r.Close()
	}()
	old := os.Stderr
	os.Stderr = w
	defer func() {
		os.Stderr = old
		w.Close()
		<-read
		stderr = b.String()
	}()
	f()
	return
}
