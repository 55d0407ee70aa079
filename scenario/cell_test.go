package scenario

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"logjam/failpoints"
)

// Parse is Name's inverse for every catalogued scenario and any axes.
func TestParseIsNamesInverse(t *testing.T) {
	word := rapid.StringMatching(`(|[a-z0-9][a-z0-9.]{0,7})`)
	rapid.Check(t, func(t *rapid.T) {
		c := Cell{
			Scenario: rapid.SampledFrom(IDs()).Draw(t, "scenario"),
			Policy:   word.Draw(t, "policy"), Variant: word.Draw(t, "variant"), Backend: word.Draw(t, "backend"),
			Platform: word.Draw(t, "platform"), Python: word.Draw(t, "python"), Buffering: word.Draw(t, "stderr"),
		}
		var fps failpoints.Set
		for _, p := range rapid.SliceOfN(rapid.SampledFrom(failpoints.Catalogue), 0, 3).Draw(t, "failpoints") {
			fps = append(fps, failpoints.Term{Name: p.Name, Terms: rapid.SampledFrom([]string{"return(1)", `return("sideways")`, "sleep(10)"}).Draw(t, "terms")})
		}
		name := c.Name(fps)
		got, gotFps, err := Parse(name)
		if err != nil {
			t.Fatalf("Parse(%q): %v", name, err)
		}
		if got != c || !reflect.DeepEqual(gotFps, fps) {
			t.Fatalf("Parse(%q) = %+v %v, want %+v %v", name, got, gotFps, c, fps)
		}
	})
}

func TestName(t *testing.T) {
	c := Cell{Scenario: "D1", Policy: "pystderr"}.WithDefaults()
	if got, want := c.Name(nil), "D1 load-failure-logs-under-backend-lock [policy=pystderr platform=linux py=3.12]"; got != want {
		t.Errorf("Name = %q, want %q", got, want)
	}
	if got := (Cell{Scenario: "H1"}).WithDefaults(); got.Platform != "" || got.Python != "" {
		t.Errorf("a cell without a log path got a runtime: %+v", got)
	}
}

// A spec that names no cell is refused; a harness spec is its ID alone.
func TestParseRefuses(t *testing.T) {
	for _, name := range []string{
		"RF1 destructor-logs-outside-call-stderr-captured [policy=fd2]", // not catalogued
		"R seed=5 [sink policy=fd2]",                                    // a word that is no key=value
		"D1 slug [colour=red]",                                          // an unknown key
		"D1 slug [policy=]",                                             // an empty value
		"D1 slug [fp=probe]",                                            // a failpoint without terms
		"",
	} {
		if c, _, err := Parse(name); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", name, c)
		}
	}
	c, fps, err := Parse("H1 calls a deadlock a HANG [as soon as]")
	if err == nil {
		t.Errorf("Parse of a description ending in brackets = %+v, want an error", c)
	}
	c, fps, err = Parse("H3 reports an exit 3 as FAILED")
	if err != nil || c != (Cell{Scenario: "H3"}) || fps != nil {
		t.Errorf("Parse of a harness spec = %+v %v %v", c, fps, err)
	}
	if !strings.HasPrefix(Cell{Scenario: "H3"}.Name(nil), "H3 ") {
		t.Error("a name must start with its ID (--focus selects by it)")
	}
}
