package fdscan

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestPipeReaderFindsTheReadEndInThisProcess(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := PipeReader(int(w.Fd())); got != int(r.Fd()) {
		t.Fatalf("PipeReader(write end %d) = %d, want the read end %d", w.Fd(), got, r.Fd())
	}
	// The read end itself writes nowhere: it has no other reader here.
	if got := PipeReader(int(r.Fd())); got != -1 {
		t.Fatalf("PipeReader(read end) = %d, want -1", got)
	}
}

func TestPipeReaderIsNoneWhenTheReaderLivesElsewhere(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r.Close() // as if only another process held it
	if got := PipeReader(int(w.Fd())); got != -1 {
		t.Fatalf("PipeReader = %d with no read end open here, want -1", got)
	}
	f, err := os.CreateTemp(t.TempDir(), "file")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := PipeReader(int(f.Fd())); got != -1 {
		t.Fatalf("PipeReader(a file) = %d, want -1", got)
	}
}

func TestCopyFindsADupByIdentityAndNotTheOriginal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "file")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, ok := Of(int(f.Fd()))
	if !ok {
		t.Fatal("no identity for an open file")
	}
	if got := Copy(id, int(f.Fd())); got != -1 {
		t.Fatalf("Copy found %d before any dup", got)
	}
	d, err := unix.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(d)
	if got := Copy(id, int(f.Fd())); got != d {
		t.Fatalf("Copy = %d, want the dup %d", got, d)
	}
	if _, ok := Of(-1); ok {
		t.Fatal("Of(-1) gave an identity")
	}
}
