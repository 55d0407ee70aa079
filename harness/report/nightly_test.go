package report

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"logjam/harness/ledger"
	"logjam/internal/shard"
	"logjam/scenario"
	"logjam/verdict"
)

// sample is a small matrix run three times: D1/pystderr hangs every time
// (expected), D1/fd2 is FLAKY (OK, HANG, OK), U1/logjam is LOST every time
// where OK was expected, and a harness cell has no policy.
func nightlySample(dir string) (Run, []Cell) {
	run := Run{ID: "nightly-42", Profile: "nightly", Mode: "strict", Deadline: "1m0s", Seed: 42, Repeat: 3, Shards: []string{"all"},
		Go: "go1.26.8", Ginkgo: "v2.34.0", Started: time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC), Seconds: 80}
	mk := func(id, fam, pol string, exp, obs verdict.Verdict, rep int) Cell {
		name := id + " slug [policy=" + pol + " platform=linux py=3.12]"
		if pol == "" {
			name = id + " harness check"
		}
		c := Cell{Cell: scenario.Cell{Scenario: id, Policy: pol}, ID: id, Name: name, Spec: "A suite " + name, Family: fam, Expected: exp, Observed: obs, Ms: 12, Repeat: rep, Rerun: Rerun(fam, name, "nightly", 42, ""), Evidence: Evidence{Reason: "exited with status 0 <after> \"done\"", Ledger: ledger.Evidence{Lines: 5}}}
		if obs == verdict.Hang {
			c.Evidence.Cycle = "thread A holds L and waits for the GIL (held by B) & more"
		}
		if obs != exp {
			c.Bundle = filepath.Join(dir, EvidenceDir, id+"-"+pol+"-r"+string(rune('0'+rep)))
		}
		return c
	}
	var cells []Cell
	for rep := 1; rep <= 3; rep++ {
		fd2 := verdict.OK
		if rep == 2 {
			fd2 = verdict.Hang
		}
		cells = append(cells,
			mk("D1", "deadlock", "pystderr", "HANG", "HANG", rep),
			mk("D1", "deadlock", "fd2", "OK", fd2, rep),
			mk("U1", "utf8", "logjam", "OK", "LOST", rep),
			mk("U1", "utf8", "pystderr", "BADESC", "BADESC", rep),
			mk("H2", "harness", "", "NOMARKER", "NOMARKER", rep))
	}
	for _, c := range cells {
		run.Plan = append(run.Plan, PlannedSpec{Family: c.Family, Spec: c.Spec})
	}
	run.Plan = Unique(run.Plan)
	return run, cells
}

func TestGroupKeepsEveryRepeatAndCallsDisagreementFlaky(t *testing.T) {
	_, cells := nightlySample(t.TempDir())
	fams := Group(cells)
	if got := []string{fams[0].Name, fams[1].Name, fams[2].Name}; !reflect.DeepEqual(got, []string{"deadlock", "harness", "utf8"}) {
		t.Fatalf("families %v", got)
	}
	verdicts := map[string]verdict.Verdict{}
	for _, f := range fams {
		for _, r := range f.Rows {
			if len(r.Runs) != 3 {
				t.Errorf("%s: %d runs, want 3", r.Name, len(r.Runs))
			}
			verdicts[r.ID+"/"+r.Policy] = r.Verdict()
		}
	}
	want := map[string]verdict.Verdict{"D1/pystderr": "HANG", "D1/fd2": Flaky, "U1/logjam": "LOST", "U1/pystderr": "BADESC", "H2/": "NOMARKER"}
	if !reflect.DeepEqual(verdicts, want) {
		t.Fatalf("verdicts %v, want %v", verdicts, want)
	}
	if tl := Count(fams); tl != (Tally{Cells: 5, AsExpected: 3, Not: 2, Flaky: 1, Runs: 15}) {
		t.Fatalf("tally %+v", tl)
	}
	if got := fams[0].Rows[0].Observations(); got != "r1 OK, r2 HANG, r3 OK" {
		t.Fatalf("observations %q", got)
	}
}

// The attributes the common JUnit schema (Ant's, as Jenkins, GitLab and
// GitHub's test reporters read it) requires.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    *int     `xml:"tests,attr"`
	Failures *int     `xml:"failures,attr"`
	Suites   []struct {
		Name      *string `xml:"name,attr"`
		Tests     *int    `xml:"tests,attr"`
		Failures  *int    `xml:"failures,attr"`
		Errors    *int    `xml:"errors,attr"`
		Time      *string `xml:"time,attr"`
		Timestamp *string `xml:"timestamp,attr"`
		Cases     []struct {
			Name      *string `xml:"name,attr"`
			Classname *string `xml:"classname,attr"`
			Time      *string `xml:"time,attr"`
			Failure   *struct {
				Message *string `xml:"message,attr"`
				Type    *string `xml:"type,attr"`
				Text    string  `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitIsValidWithATestcasePerCellAndRepeat(t *testing.T) {
	run, cells := nightlySample(t.TempDir())
	b, err := JUnit(run, Group(cells))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("<?xml")) {
		t.Fatal("no XML declaration")
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	if doc.Tests == nil || *doc.Tests != 15 || doc.Failures == nil || *doc.Failures != 4 {
		t.Fatalf("testsuites tests/failures wrong: %s", b)
	}
	cases, failures := 0, 0
	for _, s := range doc.Suites {
		if s.Name == nil || s.Tests == nil || s.Failures == nil || s.Errors == nil || s.Time == nil || s.Timestamp == nil {
			t.Fatalf("a testsuite lacks a required attribute: %s", b)
		}
		if *s.Tests != len(s.Cases) {
			t.Errorf("%s: tests=%d but %d testcases", *s.Name, *s.Tests, len(s.Cases))
		}
		nf := 0
		for _, c := range s.Cases {
			if c.Name == nil || c.Classname == nil || c.Time == nil {
				t.Fatalf("a testcase lacks name, classname or time: %s", b)
			}
			if f := c.Failure; f != nil {
				nf++
				if f.Message == nil || f.Type == nil || !strings.Contains(f.Text, "rerun this cell: cd \"$(go list -m -f '{{.Dir}}')\" && LOGJAM_PROFILE=nightly LOGJAM_SEED=42 ./logjam ginkgo --focus '") ||
					!strings.Contains(f.Text, "reason: ") || !strings.Contains(f.Text, "evidence bundle: ") {
					t.Errorf("failure without its evidence: %+v", f)
				}
			}
		}
		if nf != *s.Failures {
			t.Errorf("%s: failures=%d but %d failing testcases", *s.Name, *s.Failures, nf)
		}
		cases += len(s.Cases)
		failures += nf
	}
	if cases != 15 || failures != 4 {
		t.Fatalf("%d testcases, %d failures; want 15 (5 cells x 3 repeats), 4 (U1/logjam x3, D1/fd2 once)", cases, failures)
	}
}

func TestMarkdownNamesEveryUnexpectedCellWithItsRerun(t *testing.T) {
	run, cells := nightlySample(t.TempDir())
	md := string(Markdown(run, Group(cells)))
	for _, want := range []string{
		"5 cells, 3 as expected, 2 not, 1 flaky",
		"| utf8 | 2 | 1 | 1 | 0 |",
		"r1 OK, r2 HANG, r3 OK",
		"` " + Rerun("utf8", "U1 slug [policy=logjam platform=linux py=3.12]", "nightly", 42, "") + " `",
		"**FLAKY** (expected OK)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestMergeJoinsShardsAndRefusesOverlap(t *testing.T) {
	base := t.TempDir()
	run, cells := nightlySample(filepath.Join(base, "a"))
	var a, b []Cell
	for _, c := range cells {
		if (shard.Shard{K: 2, N: 2}).Has(c.Spec) {
			b = append(b, c)
		} else {
			a = append(a, c)
		}
	}
	if len(a) == 0 || len(b) == 0 {
		t.Fatalf("the sample's split leaves a shard empty: %d and %d cells", len(a), len(b))
	}
	write := func(name, shard string, cs []Cell) string {
		dir := filepath.Join(base, name)
		for _, c := range cs {
			if c.Bundle != "" {
				if err := WriteBundle(filepath.Join(dir, EvidenceDir, filepath.Base(c.Bundle)), Bundle{Cell: c, Stdout: []byte("done\n")}); err != nil {
					t.Fatal(err)
				}
			}
		}
		r := run
		r.Shards = []string{shard}
		os.MkdirAll(dir, 0o755)
		if err := WriteAll(dir, r, cs); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	da, db := write("a", "1/2", a), write("b", "2/2", b)
	out := filepath.Join(base, "merged")
	m, got, err := Merge(out, []string{da, db}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Shards, []string{"1/2", "2/2"}) || len(got) != len(cells) {
		t.Fatalf("merged shards %v, %d cells", m.Shards, len(got))
	}
	if d := Diff(got, cells); d != nil {
		t.Fatalf("merged matrix differs from the whole: %v", d)
	}
	rowsOfB := 0
	for _, f := range Group(b) {
		rowsOfB += len(f.Rows)
	}
	if d := Diff(got, a); len(d) != rowsOfB || !strings.HasPrefix(d[0], "only in the first: ") {
		t.Fatalf("Diff misses shard 2/2's %d cells: %v", rowsOfB, d)
	}
	for _, c := range got {
		if c.Bundle != "" {
			if _, err := os.Stat(filepath.Join(c.Bundle, CellFile)); err != nil || !strings.HasPrefix(c.Bundle, out) {
				t.Errorf("bundle %s not copied into the merge: %v", c.Bundle, err)
			}
		}
	}
	for _, f := range []string{MatrixFile, RunFile, JUnitFile, HTMLFile, MarkdownFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("merge wrote no %s", f)
		}
	}
	if _, _, err := Merge(filepath.Join(base, "m2"), []string{da, write("c", "1/2", b[:1])}, nil); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("a shard given twice was merged: %v", err)
	}
	dup := append(append([]Cell{}, b...), a[0])
	for _, c := range []struct {
		why, want string
		dirs      []string
	}{
		{"overlapping shards", "in both", []string{da, write("d", "2/2", dup)}},
		{"a directory without a run", "not a logjam reports directory", []string{da, base}},
		{"a shard missing", "shard(s) 2/2 missing", []string{da}},
		{"the same folder twice", "given twice", []string{da, db, da}},
		{"a shard of another split", "not shards of one split", []string{da, write("e", "2/3", b)}},
		{"a cell twice in one shard", "twice", []string{da, write("f", "2/2", append(append([]Cell{}, b...), b[0]))}},
	} {
		if _, _, err := Merge(filepath.Join(base, "refused"), c.dirs, nil); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: merge said %v, want one line with %q", c.why, err, c.want)
		}
	}
	other := run
	other.ID = "nightly-43"
	de := filepath.Join(base, "other")
	os.MkdirAll(de, 0o755)
	other.Shards = []string{"2/2"}
	if err := WriteAll(de, other, b); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Merge(filepath.Join(base, "refused"), []string{da, de}, nil); err == nil || !strings.Contains(err.Error(), "not shards of one run") {
		t.Errorf("shards of two runs were merged: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "refused")); err == nil {
		t.Errorf("a refused merge wrote its output folder")
	}
}

func TestRerunCarriesProfileSeedAndScale(t *testing.T) {
	got := Rerun("deadlock", "D1 x [policy=pystderr py=3.12]", "nightly", 42, "3")
	want := `cd "$(go list -m -f '{{.Dir}}')" && LOGJAM_PROFILE=nightly LOGJAM_SEED=42 LOGJAM_TIMEOUT_SCALE=3 ./logjam ginkgo --focus 'D1 x \[policy=pystderr py=3\.12\]' ./suites/deadlock`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := Rerun("utf8", "U1", "local", 0, ""); strings.Contains(got, "SEED") || strings.Contains(got, "SCALE") {
		t.Fatalf("unset seed or scale in %s", got)
	}
}

func TestJUnitCallsACellThatCouldNotJudgeAnError(t *testing.T) {
	run, _ := nightlySample(t.TempDir())
	cells := []Cell{
		{ID: "T1", Name: "T1 x", Family: "daemon", Expected: verdict.OK, Observed: verdict.Error, Rerun: "r"},
		{ID: "T2", Name: "T2 x", Family: "daemon", Expected: verdict.OK, Observed: verdict.Lost, Rerun: "r"},
	}
	b, err := JUnit(run, Group(cells))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Errors   int `xml:"errors,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Errors int `xml:"errors,attr"`
			Cases  []struct {
				Name  string    `xml:"name,attr"`
				Error *struct{} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Errors != 1 || doc.Failures != 1 || doc.Suites[0].Errors != 1 || doc.Suites[0].Cases[0].Error == nil {
		t.Fatalf("ERROR is not a JUnit error:\n%s", b)
	}
}
