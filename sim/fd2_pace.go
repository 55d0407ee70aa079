package sim

import "logjam/pipes"

// unheldRoom is how much a write(2) or a non-blocking try on a pipe the
// parent drains, its reader not held, may put into it at once: the reader
// first reads what the pipe holds (AskReader, when it holds anything), and
// the write then takes at most the pipe's capacity; what is left of it
// meets a full pipe, and holds the reader, whatever the reader's pace. -1:
// no bound (another fd 2, a held reader, or a stalled one with bytes left:
// the kernel's answer is then the model's already). Otherwise whether the
// parent read during a write bigger than the pipe, or had read the last
// one's bytes, would decide whether it blocked and held the reader, and
// whether a room check beside it found room (docs/TRUST.md, "A write the
// reader kept up with"; pinned by
// TestAWriteFindsWhatTheReaderLeftReadWhateverItsPace).
func (f *FD2) unheldRoom() int {
	if f.pipeCap <= 0 || !f.holdable() || f.Held() {
		return -1
	}
	n, err := pipes.Queued(2)
	if err == nil && n > 0 && f.AskReader() {
		n, err = pipes.Queued(2)
	}
	if err != nil || n > 0 {
		return -1
	}
	return f.pipeCap
}
