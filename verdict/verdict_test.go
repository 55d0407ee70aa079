package verdict

import "testing"

func TestPrecedenceHasEachVerdictOnce(t *testing.T) {
	seen := map[Verdict]bool{}
	for i, v := range Precedence {
		if seen[v] || Rank(v) != i {
			t.Errorf("%s twice in Precedence", v)
		}
		seen[v] = true
	}
	if Rank("NOSUCH") != len(Precedence) || Rank(Hang) != 0 {
		t.Error("Rank")
	}
}

// A cell's expected verdict travels as its label and is read back; a label
// that carries no word of the vocabulary is none.
func TestAnExpectedVerdictIsReadBackFromItsLabel(t *testing.T) {
	for _, v := range Precedence {
		if got, ok := FromLabel(Label(v)); !ok || got != v {
			t.Errorf("FromLabel(%q) = %q, %v", Label(v), got, ok)
		}
	}
	for _, l := range []string{"expect:WEDGED", "expect:", "HANG", "negative-control", "logjam"} {
		if v, ok := FromLabel(l); ok {
			t.Errorf("FromLabel(%q) = %q", l, v)
		}
	}
}
