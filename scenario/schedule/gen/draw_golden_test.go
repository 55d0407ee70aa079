package gen

import (
	"bufio"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	. "logjam/scenario/schedule"
)

var update = flag.Bool("update", false, "rewrite testdata/draws.golden from the generator as it draws now")

// goldenFilter is one filter the search draws with (-kind, -policy), the
// seeds drawn with it, and whether the golden file keeps each seed's hash
// (else one digest of them all).
type goldenFilter struct {
	name    string
	f       Filter
	seeds   int
	perSeed bool
}

func goldenFilters() []goldenFilter {
	fs := []goldenFilter{
		{"all", Filter{}, 3000, true},
		{"kind=" + KindSink, Filter{Kind: KindSink}, 3000, true},
		{"kind=" + KindLazyInit, Filter{Kind: KindLazyInit}, 2000, false},
		{"kind=sink,policy=logjam", Filter{Kind: KindSink, Policies: []string{"logjam"}}, 2000, false}, // random/zoo's
		{"policy=logjam,fixed", Filter{Policies: []string{"logjam", "fixed"}}, 2000, false},
	}
	for _, p := range append(append([]string{}, SinkPolicies...), LazyVariants...) {
		fs = append(fs, goldenFilter{"policy=" + p, Filter{Policies: []string{p}}, 2000, false})
	}
	return fs
}

// goldenDraws is the golden file's text: for each filter, the sha256 of
// every seed's schedule (its JSON) in seed order and, for some, each
// seed's own (the first 12 hex digits), so that a change names its seed.
func goldenDraws() string {
	var b strings.Builder
	for _, g := range goldenFilters() {
		all := sha256.New()
		var seeds strings.Builder
		for seed := 1; seed <= g.seeds; seed++ {
			// As search.Draw draws run seed `seed`.
			js := Schedules(g.f).Example(seed).JSON()
			sum := sha256.Sum256(js)
			all.Write(sum[:])
			if g.perSeed {
				fmt.Fprintf(&seeds, "%s %d %x\n", g.name, seed, sum[:6])
			}
		}
		fmt.Fprintf(&b, "%s seeds 1-%d %x\n", g.name, g.seeds, all.Sum(nil))
		b.WriteString(seeds.String())
	}
	return b.String()
}

// Every seed draws the schedule it drew when testdata/draws.golden was
// written: a seed in a report, a journal or a replay line keeps meaning
// the same run. A change to the generator that moves any seed's schedule
// (a choice added, removed or reordered: rapid's stream is positional)
// fails here; when that is meant, `go test ./scenario/schedule/gen -run
// TestEverySeedDrawsItsGoldenSchedule -update` rewrites the file.
func TestEverySeedDrawsItsGoldenSchedule(t *testing.T) {
	const path = "testdata/draws.golden"
	got := goldenDraws()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	want := string(raw)
	if got == want {
		return
	}
	wl, gl := lines(want), lines(got)
	n := 0
	for i := 0; i < max(len(wl), len(gl)) && n < 10; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("golden %q, drawn %q", w, g)
			n++
		}
	}
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
