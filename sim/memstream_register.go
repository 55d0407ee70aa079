package sim

// RegisterMemStream adds an in-memory stream that is not sys.stderr (a
// wurlitzer sink) to the streams dumped to telemetry at exit, so the
// ledger sees what reached it.
func (in *Interp) RegisterMemStream(m *MemStream) {
	in.mu.Lock()
	in.memories = append(in.memories, m)
	in.mu.Unlock()
}
