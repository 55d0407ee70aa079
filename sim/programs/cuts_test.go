package programs_test

import (
	"testing"
	"unicode/utf8"

	"logjam/internal/pytext"
	catalogue "logjam/scenario"
	scenario "logjam/sim/programs"
)

// The U2 and U3 inputs must put the C code's byte cut inside a character,
// or those cells would prove nothing.
func TestUTF8ScenariosCutInsideACharacter(t *testing.T) {
	msg := pytext.ExceptionMessage([]byte("Failed to create loader from file " + scenario.U2Path + ", error: 0x22"))
	if utf8.Valid(msg) {
		t.Fatalf("U2: the 127-byte message %q is valid UTF-8: the cut does not fall inside a character", msg)
	}
	var errs []byte
	for _, m := range scenario.U3Messages() {
		errs = pytext.AppendRuntimeErrors(errs, append(pytext.LogMessage([]byte(m)), '\n'))
	}
	if len(errs) != pytext.RuntimeErrorsCapacity || utf8.Valid(errs) {
		t.Fatalf("U3: appended errors are %d bytes, valid=%v: the 1024-byte cut must fall inside a character", len(errs), utf8.Valid(errs))
	}
}

// Every catalogued scenario has a program, and only those.
func TestEveryScenarioHasAProgram(t *testing.T) {
	for _, in := range catalogue.All() {
		if _, err := scenario.Lookup(in.ID); err != nil {
			t.Error(err)
		}
	}
}
