// Package keep is the keep buffer: the log lines a thread keeps during a
// binding call, to be written when the call returns, with the cap of the
// merged ExecuTorch fix (keep_line in extension/pybindings/pybindings.cpp, as
// the review of PR #24393 describes it; docs/SCENARIOS.md "keep"): once the kept
// lines pass 64 KiB, the oldest are dropped until at most 32 KiB remain, and a
// flush writes a note with the exact number of lines and bytes left out before
// the kept lines.
package keep

import (
	"bytes"
	"strconv"
)

const (
	// MaxBytes is the most kept bytes that never trigger a cut.
	MaxBytes = 64 * 1024
	// CutBytes is what a cut brings the kept bytes down to (or below).
	CutBytes = 32 * 1024
)

// minArena is the smallest arena allocated, so a few short lines need one allocation.
const minArena = 512

// The note reads "executorch: <N> lines (<M> bytes) left out\n".
const (
	notePrefix = "executorch: "
	noteLines  = " lines ("
	noteSuffix = " bytes) left out"
)

// Buffer holds one call's kept lines, oldest first. The zero value is empty and
// ready to use. A Buffer is not safe for concurrent use: it belongs to a thread.
//
// Each line's bytes are copied once, into one arena; dropping the oldest lines
// only moves a start offset. When the arena is full, the kept bytes move to its
// front if the dropped bytes there are at least as many, else to an arena twice
// the size; either way the bytes moved are paid for by bytes added or dropped
// before, so Add is amortised O(1), and memory stays within a small multiple of
// the cap however many bytes pass through.
type Buffer struct {
	arena     []byte // arena[start:] holds the kept lines, back to back
	start     int
	lens      []int // lens[first:] are the kept lines' lengths, oldest first
	first     int
	leftLines int
	leftBytes int
}

// Add keeps a copy of line as the newest line and applies the cap: when the
// kept bytes, line included, pass MaxBytes, the oldest lines are dropped until
// at most CutBytes remain; the newest line is always kept, however long.
func (b *Buffer) Add(line []byte) {
	n := len(line)
	// Drop before copying, so the arena need not hold the lines about to go.
	if b.Len()+n > MaxBytes {
		for b.first < len(b.lens) && b.Len()+n > CutBytes {
			dropped := b.lens[b.first]
			b.first++
			b.start += dropped
			b.leftLines++
			b.leftBytes += dropped
		}
	}
	if b.first == len(b.lens) { // nothing kept: reuse the space from the front
		b.arena, b.start = b.arena[:0], 0
		b.lens, b.first = b.lens[:0], 0
	}
	if len(b.arena)+n > cap(b.arena) {
		live := b.arena[b.start:]
		if b.start >= len(live) {
			// As many dropped bytes in front as kept ones: reuse the space.
			b.arena = b.arena[:copy(b.arena, live)]
		} else {
			// Grow by doubling, carrying only the kept bytes.
			grown := make([]byte, len(live), max(2*cap(b.arena), len(live)+n, minArena))
			copy(grown, live)
			b.arena = grown
		}
		b.start = 0
	}
	if len(b.lens) == cap(b.lens) && b.first >= len(b.lens)-b.first {
		b.lens = b.lens[:copy(b.lens, b.lens[b.first:])]
		b.first = 0
	}
	b.arena = append(b.arena, line...)
	b.lens = append(b.lens, n)
}

// Len returns the kept bytes.
func (b *Buffer) Len() int { return len(b.arena) - b.start }

// Count returns the kept lines.
func (b *Buffer) Count() int { return len(b.lens) - b.first }

// LeftOut returns how many lines, and how many bytes (each line whole, newline
// included), the cap has dropped since the last Take or Reset.
func (b *Buffer) LeftOut() (lines, bytes int) { return b.leftLines, b.leftBytes }

// Lines returns the kept lines, oldest first. They share the Buffer's storage:
// read them before the next Add, Take or Reset.
func (b *Buffer) Lines() [][]byte {
	lines := make([][]byte, 0, b.Count())
	at := b.start
	for _, n := range b.lens[b.first:] {
		lines = append(lines, b.arena[at:at+n:at+n])
		at += n
	}
	return lines
}

// Note returns the line a flush writes before the kept lines,
// "executorch: <N> lines (<M> bytes) left out\n", or nil when nothing was left out.
func (b *Buffer) Note() []byte {
	if b.leftLines == 0 {
		return nil
	}
	return FormatNote(b.leftLines, b.leftBytes)
}

// FormatNote is the note for lines lines of bytes bytes left out, for any
// writer that must account for lines it could not write.
func FormatNote(lines, bytes int) []byte {
	note := make([]byte, 0, len(notePrefix)+len(noteLines)+len(noteSuffix)+2*20+1)
	note = append(note, notePrefix...)
	note = strconv.AppendInt(note, int64(lines), 10)
	note = append(note, noteLines...)
	note = strconv.AppendInt(note, int64(bytes), 10)
	note = append(note, noteSuffix...)
	return append(note, '\n')
}

// Take returns the note (nil when nothing was left out) and the kept lines, and
// leaves the Buffer empty. The lines are the caller's: the Buffer lets go of
// their storage.
func (b *Buffer) Take() (note []byte, lines [][]byte) {
	note, lines = b.Note(), b.Lines()
	*b = Buffer{}
	return note, lines
}

// Clone is a copy of the Buffer that shares no storage with it (what a
// fork copies into the child).
func (b *Buffer) Clone() Buffer {
	c := *b
	c.arena = append([]byte(nil), b.arena...)
	c.lens = append([]int(nil), b.lens...)
	return c
}

// Reset empties the Buffer and its left-out count, keeping its storage for reuse.
func (b *Buffer) Reset() {
	*b = Buffer{arena: b.arena[:0], lens: b.lens[:0]}
}

// ParseNote reads a note as Note writes it, with or without its final newline,
// and returns its numbers. Anything else, extra text or malformed numbers
// included, gives ok == false.
func ParseNote(line []byte) (lines, bytesLeft int, ok bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	rest, found := bytes.CutPrefix(line, []byte(notePrefix))
	if !found {
		return 0, 0, false
	}
	linesText, rest, found := bytes.Cut(rest, []byte(noteLines))
	if !found {
		return 0, 0, false
	}
	bytesText, found := bytes.CutSuffix(rest, []byte(noteSuffix))
	if !found {
		return 0, 0, false
	}
	lines, ok = parseCount(linesText)
	if !ok {
		return 0, 0, false
	}
	bytesLeft, ok = parseCount(bytesText)
	if !ok {
		return 0, 0, false
	}
	return lines, bytesLeft, true
}

// parseCount accepts the decimal digits strconv.AppendInt writes for a
// non-negative int: no sign, no leading zeros, no overflow.
func parseCount(text []byte) (int, bool) {
	if len(text) == 0 || (text[0] == '0' && len(text) > 1) {
		return 0, false
	}
	for _, c := range text {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(string(text))
	return n, err == nil
}
