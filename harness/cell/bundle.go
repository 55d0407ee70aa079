package cell

import (
	"strings"

	"logjam/failpoints"
	"logjam/harness/report"
	"logjam/internal/childbin"
	"logjam/internal/config"
)

// Bundle is the evidence bundle of this outcome as the matrix row c, with
// what replays it: the child binary bin is kept by digest (childbin), so a
// replay runs the very binary this cell ran (or, when the cache lost it,
// one rebuilt from the replaying module's source). The rerun-the-child
// command then names the kept binary. When no child ran, or the binary cannot be kept, the bundle has no Replay; why is the
// error.
func (o *Outcome) Bundle(c report.Cell, spec Spec, prof config.Profile, bin string) (report.Bundle, error) {
	b := report.Bundle{Cell: c, FD2: o.FD2}
	if o.Result == nil {
		return b, nil
	}
	b.Stdout, b.Events = o.Result.Stdout, o.Result.Events
	kept, sum, err := childbin.Keep(bin)
	if err != nil {
		return b, err
	}
	b.Cell.Evidence.Command = strings.ReplaceAll(b.Cell.Evidence.Command, bin, kept)
	b.Replay = &report.Replay{
		Cell: spec.Cell, Failpoints: spec.Failpoints.Env(), Schedule: spec.Schedule, Deadline: spec.Deadline,
		Profile: prof, Binary: sum,
	}
	return b, nil
}

// SpecOf is the cell a bundle's Replay names, its failpoints validated.
func SpecOf(r report.Replay) (Spec, error) {
	fps, err := failpoints.Parse(r.Failpoints)
	if err != nil {
		return Spec{}, err
	}
	return Spec{Cell: r.Cell, Failpoints: fps, Schedule: r.Schedule, Deadline: r.Deadline}, nil
}
