package keep

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
)

// lineOf returns a line of exactly size bytes that names its sequence number,
// ends with a newline, and is otherwise filled with a byte derived from seq, so
// a test can tell any two lines apart.
func lineOf(seq, size int) []byte {
	line := bytes.Repeat([]byte{byte('a' + seq%26)}, size)
	copy(line, strconv.Itoa(seq)+" ")
	if size > 0 {
		line[size-1] = '\n'
	}
	return line
}

func TestCapBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sizes      []int
		wantLen    int
		wantCount  int
		wantLeft   [2]int // lines, bytes
		wantNewest int    // size of the newest kept line
	}{
		{"empty", nil, 0, 0, [2]int{}, -1},
		{"exactly 65536 does not cut", repeat(4096, 16), 65536, 16, [2]int{}, 4096},
		{"65537 cuts to at most 32768", append(repeat(4096, 16), 1), 28673, 8, [2]int{9, 9 * 4096}, 1},
		{"the cut stops at exactly 32768", []int{32769, 32767, 1}, 32768, 2, [2]int{1, 32769}, 1},
		{"the cut drops no more than needed", []int{20000, 20000, 20000, 6000}, 26000, 2, [2]int{2, 40000}, 6000},
		{"the cut goes on until at most 32768", []int{30000, 30000, 6000}, 6000, 1, [2]int{2, 60000}, 6000},
		{"a newest line over 32 KiB is kept alone", append(repeat(1000, 10), 60000), 60000, 1, [2]int{10, 10000}, 60000},
		{"a newest line over 64 KiB is kept", []int{100_000}, 100_000, 1, [2]int{}, 100_000},
		{"a big newest line is dropped by the next", []int{100_000, 10}, 10, 1, [2]int{1, 100_000}, 10},
		{"empty lines count as lines", []int{0, 0, 65536, 1}, 1, 1, [2]int{3, 65536}, 1},
		{"left out adds up over cuts", repeat(40000, 4), 40000, 1, [2]int{3, 120000}, 40000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Buffer
			for i, size := range tc.sizes {
				b.Add(lineOf(i, size))
			}
			if b.Len() != tc.wantLen || b.Count() != tc.wantCount {
				t.Errorf("kept %d bytes in %d lines, want %d in %d", b.Len(), b.Count(), tc.wantLen, tc.wantCount)
			}
			if lines, bytesLeft := b.LeftOut(); lines != tc.wantLeft[0] || bytesLeft != tc.wantLeft[1] {
				t.Errorf("left out %d lines (%d bytes), want %d (%d)", lines, bytesLeft, tc.wantLeft[0], tc.wantLeft[1])
			}
			// The kept lines are the newest ones, whole and in order.
			kept := b.Lines()
			for i, line := range kept {
				seq := len(tc.sizes) - len(kept) + i
				if !bytes.Equal(line, lineOf(seq, tc.sizes[seq])) {
					t.Fatalf("kept line %d is not line %d", i, seq)
				}
			}
			if tc.wantNewest >= 0 && (len(kept) == 0 || len(kept[len(kept)-1]) != tc.wantNewest) {
				t.Errorf("newest kept line missing or wrong size")
			}
			wantNote := ""
			if tc.wantLeft[0] > 0 {
				wantNote = fmt.Sprintf("executorch: %d lines (%d bytes) left out\n", tc.wantLeft[0], tc.wantLeft[1])
			}
			if note := b.Note(); string(note) != wantNote || (wantNote == "" && note != nil) {
				t.Errorf("Note() = %q, want %q", note, wantNote)
			}
		})
	}
}

func repeat(size, n int) []int {
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = size
	}
	return sizes
}

func TestAddCopiesTheLine(t *testing.T) {
	var b Buffer
	line := []byte("first\n")
	b.Add(line)
	copy(line, "XXXXX")
	if got := string(b.Lines()[0]); got != "first\n" {
		t.Errorf("kept line changed with the caller's slice: %q", got)
	}
	// A caller appending to a returned line must not overwrite the next one.
	b.Add([]byte("second\n"))
	lines := b.Lines()
	_ = append(lines[0], "!!!"...)
	if got := string(b.Lines()[1]); got != "second\n" {
		t.Errorf("appending to a returned line clobbered the next: %q", got)
	}
}

func TestTakeAndReset(t *testing.T) {
	var b Buffer
	for i := range 20 {
		b.Add(lineOf(i, 5000))
	}
	wantLines, wantBytes := b.LeftOut()
	if wantLines == 0 {
		t.Fatal("setup: expected a cut")
	}
	keptCount := b.Count()
	note, lines := b.Take()
	if n, m, ok := ParseNote(note); !ok || n != wantLines || m != wantBytes {
		t.Errorf("Take note %q parses to %d, %d, %v; want %d, %d", note, n, m, ok, wantLines, wantBytes)
	}
	if len(lines) != keptCount {
		t.Errorf("Take returned %d lines, %d were kept", len(lines), keptCount)
	}
	if b.Len() != 0 || b.Count() != 0 || b.Note() != nil {
		t.Errorf("after Take: %d bytes, %d lines, note %q", b.Len(), b.Count(), b.Note())
	}
	if l, m := b.LeftOut(); l != 0 || m != 0 {
		t.Errorf("after Take: left out %d, %d", l, m)
	}
	// The taken lines are the caller's: later use of the Buffer leaves them alone.
	first := append([]byte(nil), lines[0]...)
	for i := range 30 {
		b.Add(lineOf(100+i, 5000))
	}
	if !bytes.Equal(lines[0], first) {
		t.Errorf("a taken line changed after more Adds")
	}
	if note, lines := (&Buffer{}).Take(); note != nil || len(lines) != 0 {
		t.Errorf("Take of an empty Buffer: %q, %d lines", note, len(lines))
	}

	b.Reset()
	if b.Len() != 0 || b.Count() != 0 || b.Note() != nil || len(b.Lines()) != 0 {
		t.Errorf("after Reset: %d bytes, %d lines, note %q", b.Len(), b.Count(), b.Note())
	}
	b.Add([]byte("again\n"))
	if b.Count() != 1 || string(b.Lines()[0]) != "again\n" {
		t.Errorf("Buffer unusable after Reset")
	}
}

func TestParseNote(t *testing.T) {
	for _, tc := range []struct {
		in           string
		lines, bytes int
		ok           bool
	}{
		{"executorch: 9 lines (36864 bytes) left out\n", 9, 36864, true},
		{"executorch: 1 lines (120 bytes) left out", 1, 120, true},
		{"executorch: 0 lines (0 bytes) left out\n", 0, 0, true},
		{"", 0, 0, false},
		{"executorch: 9 lines (36864 bytes) left out\n\n", 0, 0, false},
		{"executorch: 9 lines (36864 bytes) left out\r\n", 0, 0, false},
		{"executorch: 9 lines (36864 bytes) left out, more", 0, 0, false},
		{" executorch: 9 lines (36864 bytes) left out", 0, 0, false},
		{"9 lines (36864 bytes) left out", 0, 0, false},
		{"executorch: -9 lines (36864 bytes) left out", 0, 0, false},
		{"executorch: +9 lines (36864 bytes) left out", 0, 0, false},
		{"executorch: 09 lines (36864 bytes) left out", 0, 0, false},
		{"executorch:  lines (36864 bytes) left out", 0, 0, false},
		{"executorch: 9 lines ( bytes) left out", 0, 0, false},
		{"executorch: 9 lines (3e4 bytes) left out", 0, 0, false},
		{"executorch: 99999999999999999999 lines (1 bytes) left out", 0, 0, false},
		{"E 00:00:01.000000 executorch:a.cpp:1] 9 lines (36864 bytes) left out", 0, 0, false},
	} {
		lines, bytesLeft, ok := ParseNote([]byte(tc.in))
		if lines != tc.lines || bytesLeft != tc.bytes || ok != tc.ok {
			t.Errorf("ParseNote(%q) = %d, %d, %v; want %d, %d, %v", tc.in, lines, bytesLeft, ok, tc.lines, tc.bytes, tc.ok)
		}
	}
	// Whatever Note writes, ParseNote reads back.
	var b Buffer
	for i := range 1000 {
		b.Add(lineOf(i, 1+i*37%900))
		if note := b.Note(); note != nil {
			wantLines, wantBytes := b.LeftOut()
			if n, m, ok := ParseNote(note); !ok || n != wantLines || m != wantBytes {
				t.Fatalf("ParseNote(%q) = %d, %d, %v", note, n, m, ok)
			}
		}
	}
}
