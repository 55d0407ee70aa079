package zoo

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// Every bug of the zoo says what it is and still applies to the module as
// it is (a patch that no longer applies plants nothing).
func TestEveryBugAppliesToTheModule(t *testing.T) {
	bugs, err := Load(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(bugs) < 12 {
		t.Errorf("%d bugs in the zoo, want at least 12", len(bugs))
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bugs {
		patch, _ := filepath.Abs(b.Patch)
		cmd := exec.Command("git", "apply", "--check", "-p1", patch)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not apply: %v\n%s", b.ID, err, out)
		}
	}
}

func TestMedianAndMaxCountOnlyTheStreamsThatFound(t *testing.T) {
	r := Result{First: []int{0, 7, 3, 0, 10}}
	if r.Found() != 3 || r.Median() != 7 || r.Max() != 10 {
		t.Errorf("found %d, median %g, max %d", r.Found(), r.Median(), r.Max())
	}
	r.First = []int{4, 2}
	if r.Median() != 3 {
		t.Errorf("median %g", r.Median())
	}
}
