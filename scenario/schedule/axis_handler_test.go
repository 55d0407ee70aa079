package schedule

import (
	"strings"
	"testing"
)

// TestHandlerAxis: a logging handler is one of two values, not beside a
// stream that installs its own handler or a SIGINT ignored at start; with
// a SIGINT it delivers no KeyboardInterrupt, so the contract counts none;
// its one step puts default_int_handler back.
func TestHandlerAxis(t *testing.T) {
	call := Call{Lines: 4, Size: 80, Level: "I"}
	s := Schedule{Kind: KindSink, Policy: "logjam", Platform: "linux", Python: "3.12",
		Sink: &Sink{FD2: FD2{Kind: FD2File}, Stderr: Stderr{Kind: StderrOriginal}, Threads: []Thread{{Calls: []Call{call}}},
			Interrupts: Interrupts{Sigint: SigintLine, SigintAt: 2}, PythonHandler: PythonHandler{Handler: HandlerLogging}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := s.Contract().Interrupts; got != 0 {
		t.Errorf("a logging handler's SIGINT: %d interrupts expected, want 0", got)
	}
	def := s
	def.Sink = cloneSink(s.Sink)
	def.Sink.Handler = HandlerDefault
	if got := def.Contract().Interrupts; got != 1 {
		t.Errorf("default_int_handler's SIGINT: %d interrupts expected, want 1", got)
	}
	for name, change := range map[string]func(k *Sink){
		"unknown":    func(k *Sink) { k.Handler = "print" },
		"signalwait": func(k *Sink) { k.Stderr = Stderr{Kind: StderrSignalWait}; k.Sigint = "" },
		"ignored":    func(k *Sink) { k.SigintIgnored = true },
	} {
		c := s
		c.Sink = cloneSink(s.Sink)
		change(c.Sink)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "handler") {
			t.Errorf("%s: %v, want the handler's rule", name, err)
		}
	}
	steps := s.Steps()
	found := false
	for _, st := range steps {
		if st.What == "default SIGINT handler" {
			c := s
			c.Sink = cloneSink(s.Sink)
			st.Apply(&c)
			found = c.Sink.Handler == HandlerDefault
		}
	}
	if !found {
		t.Error("no step puts default_int_handler back")
	}
}
