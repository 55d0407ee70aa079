package telemetry

import "testing"

// An exception text with raw invalid bytes crosses the wire unchanged
// (JSON alone would turn them into U+FFFD and hide a BADESC); a valid text
// travels as plain JSON.
func TestExceptionTextKeepsRawBytes(t *testing.T) {
	for _, text := range []string{"bad \xff byte", "cut \xe4\xb8", "valid: é \\xff"} {
		b, err := Encode(Exception{Thread: "MainThread", Type: "RuntimeError", Text: text}, 1)
		if err != nil {
			t.Fatal(err)
		}
		ev, ok := Parse(b)
		if !ok {
			t.Fatalf("%s does not parse", b)
		}
		tr := Decode([]Event{ev})
		if len(tr.Exceptions) != 1 || tr.Exceptions[0].Text != text || tr.Exceptions[0].Type != "RuntimeError" {
			t.Errorf("%q came back as %+v (wire %s)", text, tr.Exceptions, b)
		}
	}
}
