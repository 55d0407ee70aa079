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
