package report

import (
	"bytes"
	"fmt"
	"html/template"
	"path/filepath"
	"strings"
	"sync"

	"logjam/verdict"
)

// HTML renders the matrix as one self-contained page (no external
// resources): a table per family, each cell coloured by its verdict, the
// cycle on hover and on click, each failing cell with its evidence bundle
// (linked relative to dir, where the page is written) and rerun command,
// and the legend (Legend).
func HTML(run Run, fams []Family, dir string) ([]byte, error) {
	type cellView struct {
		Row               Repeated
		Verdict           verdict.Verdict
		Class, Tip        string
		Unexpected, Flaky bool
		Runs              []runView
		Cycle             string
		// Check is the first line of the failed check of a run whose
		// verdict matched (or of a spec outside any cell).
		Check string
		// Beside is a built-in policy's verdict beside a sink's cell (no
		// cell: the rest is empty).
		Beside verdict.Verdict
	}
	type rowView struct {
		Label string
		Cells []*cellView
	}
	type famView struct {
		Family
		Cols []string
		Grid []rowView
	}
	var views []famView
	var failing []*cellView
	for _, f := range fams {
		g := layout(f)
		fv := famView{Family: f, Cols: g.Cols}
		for _, label := range g.Rows {
			rv := rowView{Label: label}
			for _, col := range g.Cols {
				r, ok := g.At[[2]string{label, col}]
				if v, beside := g.Beside[[2]string{label, col}]; !ok && beside {
					rv.Cells = append(rv.Cells, &cellView{Beside: v, Class: "v-" + strings.ToLower(string(v))})
					continue
				}
				if !ok {
					rv.Cells = append(rv.Cells, nil)
					continue
				}
				cv := &cellView{Row: r, Verdict: r.Verdict(), Unexpected: !r.AsExpected(), Flaky: r.Verdict() == Flaky}
				cv.Class = "v-" + strings.ToLower(string(cv.Verdict))
				for i, c := range r.Runs {
					cv.Runs = append(cv.Runs, runView{Repeat: repeatOf(c, i), Cell: c, Link: bundleLink(dir, c.Bundle), Reason: c.Evidence.Reason})
					if cv.Cycle == "" {
						cv.Cycle = c.Evidence.Cycle
					}
					if cv.Check == "" && c.Failure != "" {
						cv.Check = c.FailureLine()
					}
				}
				cv.Tip = fmt.Sprintf("%s\nexpected %s, observed %s", r.Name, r.Expected, r.Observations())
				if rt := r.RealText(); rt != "" && r.Family != "sink" {
					cv.Tip += "\n" + rt
				}
				if cv.Cycle != "" {
					cv.Tip += "\ncycle: " + cv.Cycle
				}
				if cv.Check != "" {
					cv.Tip += "\nfailed check: " + cv.Check
				}
				if cv.Unexpected {
					failing = append(failing, cv)
				}
				rv.Cells = append(rv.Cells, cv)
			}
			fv.Grid = append(fv.Grid, rv)
		}
		views = append(views, fv)
	}
	all := cellsOf(fams)
	title := "logjam chaos matrix"
	if sink := sinkOf(all); sink != nil {
		title = "logjam calibrate -sink " + sink.File + ": your sink on real CPython " + strings.Join(pythonsOf(all), ", ") + ", beside the built-in policies"
	}
	var buf bytes.Buffer
	err := page().Execute(&buf, map[string]any{
		"Run": run, "Families": views, "Tally": Count(fams), "Failing": failing, "Verdicts": verdictColours, "Legend": LegendOf(all),
		"Title": title, "Sink": sinkOf(all) != nil,
	})
	return buf.Bytes(), err
}

type runView struct {
	Repeat       int
	Cell         Cell
	Link, Reason string
}

// bundleLink is the bundle's path relative to the page, when it lies
// beneath it (reports/evidence/...); otherwise a file:// link to its
// absolute path, or "" (a recorded bundle is someone else's text: it never
// becomes a link to another host).
func bundleLink(dir, bundle string) string {
	if bundle == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil && filepath.IsAbs(bundle) {
		if rel, err := filepath.Rel(abs, bundle); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.ToSlash(rel) + "/"
		}
	}
	// Outside the reports folder: a local path, cleaned ("//host/x", a
	// protocol-relative URL to another host, becomes "/host/x"), or none
	// ("https://host/", "evil.example/x": a matrix names folders, not URLs).
	if filepath.IsAbs(bundle) {
		return "file://" + filepath.ToSlash(filepath.Clean(bundle)) + "/"
	}
	return ""
}

// verdictColours is the legend: each verdict's background.
var verdictColours = []struct{ Name, Colour string }{
	{"OK", "#d7f0d4"}, {"HANG", "#f4c7c3"}, {"CRASH", "#e3c8f0"}, {"BADESC", "#fbe3b5"}, {"LOST", "#ffd9a8"},
	{"LOSTINT", "#fff0a8"}, {"DOUBLEINT", "#f0e6a0"}, {"LOSTCALLBACK", "#c8e0f0"}, {"MISROUTED", "#d0d8f8"}, {"REORDERED", "#f8d0e8"},
	{"FAILED", "#d9d9d9"}, {"NOMARKER", "#e6e6e6"}, {"INTERRUPTED", "#cccccc"}, {"ERROR", "#b0b0b0"}, {"FLAKY", "#ffb347"},
	{string(SpecPass), "#d7f0d4"}, {string(SpecFail), "#ff8080"},
}

// page is parsed on first use: parsing it was most of this package's
// initialisation, which every suite process paid and few render a page.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("matrix").Funcs(template.FuncMap{
		"lower":  strings.ToLower,
		"anchor": func(s string) string { return "cell-" + unsafeName().ReplaceAllString(s, "_") },
		"css":    func(s string) template.CSS { return template.CSS(s) },
		"replay": SinkReplay,
		"rerun": func(c Cell) string {
			if cmd := RerunOf(c); cmd != "" || c.Rerun == "" {
				return cmd
			}
			return "(the recorded command is not one logjam writes; not shown)"
		},
	}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}: {{.Tally.Cells}} cells, {{.Tally.Not}} not as expected</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 3px 6px; vertical-align: top; text-align: left; }
thead th { background: #eee; }
td.cell { min-width: 7em; }
td.unexpected { outline: 3px solid #c00; outline-offset: -3px; font-weight: bold; }
td.none { background: #fafafa; color: #aaa; }
td.beside { color: #444; font-style: italic; }
.exp { color: #555; font-weight: normal; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: 0 1em; }
dl.meta dt { font-weight: bold; }
dl.meta dd { margin: 0; }
details pre, pre.cmd { white-space: pre-wrap; max-width: 60em; font-size: 12px; background: #f6f6f6; padding: 4px; }
.legend span { display: inline-block; padding: 1px 6px; margin: 2px; border: 1px solid #bbb; }
{{range .Verdicts}}.v-{{lower .Name}} { background: {{css .Colour}}; }
{{end}}</style>
</head>
<body data-cells="{{.Tally.Cells}}">
<h1>{{.Title}}</h1>
<dl class="meta">
{{if .Sink}}<dt>interpreters</dt><dd>real CPython; each cell's row names its Python</dd>
{{else}}<dt>profile</dt><dd>{{.Run.Profile}} ({{.Run.Mode}} mode, deadline {{.Run.Deadline}}, {{.Run.Repeat}} repeat(s))</dd>
<dt>seed</dt><dd>{{.Run.Seed}}</dd>
{{if .Run.Focus}}<dt>focus</dt><dd>{{.Run.Focus}}</dd>{{end}}
<dt>shards</dt><dd>{{range $i, $s := .Run.Shards}}{{if $i}}, {{end}}{{$s}}{{end}}</dd>{{end}}
<dt>versions</dt><dd>{{.Run.Go}}, ginkgo {{.Run.Ginkgo}}{{if .Run.Commit}}, logjam {{.Run.Commit}}{{end}}</dd>
<dt>started</dt><dd>{{.Run.Started.UTC.Format "2006-01-02 15:04:05 MST"}}, {{printf "%.1f" .Run.Seconds}} s wall</dd>
<dt>cells</dt><dd id="tally">{{.Tally.Cells}} cells ({{.Tally.Runs}} runs): {{.Tally.AsExpected}} as expected, {{.Tally.Not}} not, {{.Tally.Flaky}} flaky</dd>
<dt>shown</dt><dd id="shown">(needs JavaScript)</dd>
</dl>
<p class="legend">{{range .Verdicts}}<span class="v-{{lower .Name}}">{{.Name}}</span>{{end}}
<span class="unexpected" style="outline:3px solid #c00">not as expected</span></p>
<section id="legend"><h2>Reading the matrix</h2>
<ul>{{range .Legend}}<li>{{.}}</li>
{{end}}</ul></section>
{{if .Failing}}<h2>Not as expected ({{len .Failing}})</h2>
<ul>{{range .Failing}}<li><a href="#{{anchor .Row.Name}}">{{.Row.Name}}</a>: expected {{.Row.Expected}}, observed {{.Row.Observations}}{{with .Check}}; failed check: {{.}}{{end}}</li>
{{end}}</ul>{{end}}
{{range .Families}}
<section id="family-{{.Name}}">
<h2>{{.Name}}: {{len .Family.Rows}} cells, {{.AsExpected}} as expected, {{.Not}} not{{if .Flaky}}, {{.Flaky}} flaky{{end}}, {{printf "%.1f" .Seconds}} s</h2>
<table>
<thead><tr><th>id</th>{{range .Cols}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Grid}}<tr><th>{{.Label}}</th>{{range .Cells}}{{if and . .Beside}}<td class="beside {{.Class}}" title="the model's cell of this policy, for comparison">{{.Beside}}</td>{{else if .}}<td id="{{anchor .Row.Name}}" class="cell {{.Class}}{{if .Unexpected}} unexpected{{end}}" data-cell="{{.Row.Name}}" data-verdict="{{.Verdict}}" data-expected="{{.Row.Expected}}" title="{{.Tip}}">
{{.Verdict}}{{if .Unexpected}} <span class="exp">{{if .Check}}(check failed){{else}}(expected {{.Row.Expected}}){{end}}</span>{{end}}
{{with .Row.RealText}}<div class="exp">{{.}}</div>{{end}}
{{if .Flaky}}<div class="exp">{{.Row.Observations}}</div>{{end}}
{{if .Cycle}}<details><summary>cycle</summary><pre>{{.Cycle}}</pre></details>{{end}}
{{if .Unexpected}}<details><summary>evidence</summary>{{range .Runs}}{{if not .Cell.AsExpected}}
<p>repeat {{.Repeat}}: {{.Cell.Outcome}}, {{.Cell.Ms}} ms{{if .Link}}; <a href="{{.Link}}">evidence bundle</a>{{end}}</p>
{{with .Cell.Failure}}<p>failed check:</p><pre class="failure">{{.}}</pre>{{end}}<pre>{{.Reason}}</pre>{{with replay .Cell}}<p>replay:</p><pre class="cmd">{{.}}</pre>{{end}}{{end}}{{end}}
<p>rerun:</p><pre class="cmd">{{rerun .Row.Cell}}</pre></details>{{end}}
</td>{{else}}<td class="none">-</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
</section>
{{end}}
<script>
window.addEventListener("error", function (e) {
  document.body.setAttribute("data-errors", (document.body.getAttribute("data-errors") || "") + e.message + ";");
});
document.addEventListener("DOMContentLoaded", function () {
  var n = document.querySelectorAll("td[data-cell]").length;
  document.body.setAttribute("data-shown", String(n));
  document.getElementById("shown").textContent = n + " of " + document.body.getAttribute("data-cells") + " cells shown";
});
</script>
</body>
</html>
`))
})
