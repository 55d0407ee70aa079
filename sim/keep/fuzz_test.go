package keep

import (
	"bytes"
	"testing"
)

// lineSizes turns fuzz input into line sizes, three bytes a line: small lines,
// any size up to 64 KiB, and sizes around 32 KiB, around 64 KiB and 120 bytes,
// so the cap's edges are reached with short inputs.
func lineSizes(data []byte) []int {
	var sizes []int
	for ; len(data) >= 3; data = data[3:] {
		mode, x, y := data[0], data[1], data[2]
		var size int
		switch mode % 8 {
		case 0, 1, 2, 3:
			size = int(x)
		case 4:
			size = int(x)<<8 | int(y)
		case 5:
			size = CutBytes + int(int8(x))
		case 6:
			size = MaxBytes + int(int8(x))
		default:
			size = 120 + int(int8(x))%8
		}
		sizes = append(sizes, size)
	}
	return sizes
}

// FuzzKeepCap adds the lines the input describes, and after every Add checks
// the cap's promises and compares the Buffer with a plain model of the rule.
func FuzzKeepCap(f *testing.F) {
	f.Add([]byte{4, 0x10, 0, 4, 0x10, 0, 4, 0x10, 0, 4, 0x10, 0, 4, 0x80, 0, 0, 1, 0})
	f.Add([]byte{5, 1, 0, 5, 0xff, 0, 0, 0, 0, 6, 0x7f, 0, 0, 10, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var b Buffer
		var (
			model                  []int // sizes of the lines the rule keeps, oldest first
			modelKept              int
			modelLeft, modelBytes  int
			addedLines, addedBytes int
		)
		for seq, n := range lineSizes(data) {
			leftBefore, _ := b.LeftOut()
			line := lineOf(seq, n)
			b.Add(line)
			addedLines++
			addedBytes += n

			// The rule, written as plainly as possible.
			model = append(model, n)
			modelKept += n
			if modelKept > MaxBytes {
				for len(model) > 1 && modelKept > CutBytes {
					modelKept -= model[0]
					modelLeft++
					modelBytes += model[0]
					model = model[1:]
				}
			}

			kept, count := b.Len(), b.Count()
			leftLines, leftBytes := b.LeftOut()
			if kept > max(MaxBytes, n) {
				t.Fatalf("line %d (%d bytes): kept %d bytes, over max(%d, newest)", seq, n, kept, MaxBytes)
			}
			if leftLines > leftBefore && kept > CutBytes && count != 1 {
				t.Fatalf("line %d: after a cut %d bytes in %d lines are kept", seq, kept, count)
			}
			if count == 0 || !bytes.Equal(b.arena[len(b.arena)-n:], line) || b.lens[len(b.lens)-1] != n {
				t.Fatalf("line %d: the newest line is not kept whole", seq)
			}
			if count+leftLines != addedLines || kept+leftBytes != addedBytes {
				t.Fatalf("line %d: kept %d lines (%d bytes) + left out %d (%d) != added %d (%d)",
					seq, count, kept, leftLines, leftBytes, addedLines, addedBytes)
			}
			if count != len(model) || kept != modelKept || leftLines != modelLeft || leftBytes != modelBytes {
				t.Fatalf("line %d: kept %d lines (%d bytes), left out %d (%d); the rule gives %d (%d), %d (%d)",
					seq, count, kept, leftLines, leftBytes, len(model), modelKept, modelLeft, modelBytes)
			}
		}
		// The kept lines are the newest ones, whole and in order.
		kept := b.Lines()
		for i, line := range kept {
			seq := addedLines - len(kept) + i
			if !bytes.Equal(line, lineOf(seq, model[i])) {
				t.Fatalf("kept line %d is not line %d", i, seq)
			}
		}
		if note := b.Note(); modelLeft == 0 && note != nil {
			t.Fatalf("note %q with nothing left out", note)
		} else if n, m, ok := ParseNote(note); modelLeft > 0 && (!ok || n != modelLeft || m != modelBytes) {
			t.Fatalf("note %q parses to %d, %d, %v; want %d, %d", note, n, m, ok, modelLeft, modelBytes)
		}
	})
}
