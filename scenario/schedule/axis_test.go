package schedule

import (
	"reflect"
	"runtime"
	"testing"
)

// TestEveryAxisIsRegisteredOnce: each axis is in Axes once, under a name
// of its own, and every part of a Sink (a field of its own or one an axis
// embeds) belongs to a registered axis: a part no axis validates or
// shrinks is the bug this catches.
func TestEveryAxisIsRegisteredOnce(t *testing.T) {
	names := map[string]bool{}
	types := map[reflect.Type]bool{}
	for _, a := range Axes {
		if names[a.Name()] || types[reflect.TypeOf(a)] {
			t.Fatalf("axis %q registered twice", a.Name())
		}
		names[a.Name()], types[reflect.TypeOf(a)] = true, true
	}
	// The parts of a Sink and the axis that owns each.
	owner := map[string]string{
		"FD2": "fd2", "Stderr": "stderr", "Interrupts": "sigint", "Threads": "threads",
		"Abort": "abort", "OutsideCalls": "outside", "DaemonThreads": "daemons", "PythonHandler": "handler",
		"ForkPart": "fork", "CrashPart": "crash",
	}
	sink := reflect.TypeOf(Sink{})
	for i := range sink.NumField() {
		f := sink.Field(i)
		a, ok := owner[f.Name]
		if !ok {
			t.Errorf("Sink.%s belongs to no axis: register one (docs/ADDING-A-SCENARIO.md, \"Adding an axis\")", f.Name)
		} else if !names[a] {
			t.Errorf("Sink.%s belongs to axis %q, which is not in Axes", f.Name, a)
		}
	}
	for _, part := range []string{"stalls", "fd2-errors", "runtime", "pool"} {
		if !names[part] {
			t.Errorf("axis %q is not in Axes", part)
		}
	}
}

// TestEveryAxisDrawIsInTheDrawOrder: an axis's Draw runs only from
// sinkDraws, the one order of a sink schedule's draws; a Draw written and
// not listed there is never drawn, which this catches.
func TestEveryAxisDrawIsInTheDrawOrder(t *testing.T) {
	type drawer interface {
		Draw(d Drawer, s *Schedule, st *drawState)
	}
	listed := map[string]bool{} // each step's function, "pkg.axis.Draw-fm"
	for _, step := range sinkDraws {
		listed[runtime.FuncForPC(reflect.ValueOf(step).Pointer()).Name()] = true
	}
	for _, a := range Axes {
		ty := reflect.TypeOf(a)
		if _, ok := a.(drawer); ok && !listed[ty.PkgPath()+"."+ty.Name()+".Draw-fm"] {
			t.Errorf("axis %q has a Draw that sinkDraws does not list (draw.go)", a.Name())
		}
	}
}
