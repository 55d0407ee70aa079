package calibrate

import (
	"os"
	"testing"

	"logjam/harness/ledger"
	"logjam/scenario"
	"logjam/telemetry"
	"logjam/verdict"
)

// A real run's telemetry (run_row.py and the extension, recorded from I2
// under logjam with python -u on 3.11.7, before the extension's logjam
// wrote kept lines itself: 32 of 48 lines lost) decodes with the typed
// telemetry package, and the ledger judges it as it judged it then.
func TestARealRunsTelemetryDecodes(t *testing.T) {
	f, err := os.Open("testdata/real-I2-logjam-unbuffered.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []telemetry.Event
	telemetry.Read(f, func(ev telemetry.Event) { events = append(events, ev) })
	tr := telemetry.Decode(events)
	if tr.Start.Pid <= 0 || tr.Start.Policy != "logjam" || tr.Start.Python != "3.11.7" {
		t.Fatalf("start: %+v", tr.Start)
	}
	if len(tr.Lines) != 48 || len(tr.Exceptions) != 1 || tr.Exceptions[0].Type != "KeyboardInterrupt" || len(tr.Marks) != 2 {
		t.Fatalf("decoded %d lines, %d exceptions, %d marks; want 48, 1 KeyboardInterrupt, 2", len(tr.Lines), len(tr.Exceptions), len(tr.Marks))
	}
	if tr.Marks[0].Name != telemetry.MarkSIGINT || tr.Marks[1].Name != telemetry.MarkFD2Pause || tr.Marks[1].Ms != 200 {
		t.Errorf("marks: %+v", tr.Marks)
	}
	info, err := scenario.Lookup("I2")
	if err != nil {
		t.Fatal(err)
	}
	fd2, err := os.ReadFile("testdata/real-I2-logjam-unbuffered.fd2")
	if err != nil {
		t.Fatal(err)
	}
	j := ledger.Judge(info.Contract, tr, fd2)
	if j.Verdict != verdict.Lost || j.Evidence.Delivered != 16 {
		t.Errorf("ledger: %s, %d delivered; want LOST, 16 (%s)", j.Verdict, j.Evidence.Delivered, j.Evidence.Detail)
	}
}
