// Package programs holds the scenario programs: small Go functions that play
// a scenario's Python script against the simulated runtime. Their contracts
// are in package scenario; only the child binary links this package. A
// program never knows the verdict a matrix expects of it.
package programs

import (
	"fmt"

	"logjam/failpoints"
	"logjam/scenario"
	"logjam/sim"
)

// Program is one scenario's play, with its catalogue entry.
type Program struct {
	ID string
	*scenario.Info
	// Run plays the script. It returns the exception that escapes to the top.
	Run func(e *Env) *sim.PyErr
	// Raw, for the watchdog's purpose-built children, replaces the runtime.
	Raw func() int
	// Check validates the -variant and -backend flags of programs that
	// take them (nil: the program takes neither).
	Check func(variant, backend string) error
}

// Env is what a program runs against.
type Env struct {
	RT   *sim.Runtime
	Main *sim.Thread
	FP   *failpoints.Scope
	// Variant and Backend are the lazy-init flags (L scenarios).
	Variant, Backend string
	// Schedule is the -schedule flag (R).
	Schedule string
}

var registry = map[string]*Program{}

func play(p *Program) {
	info, err := scenario.Lookup(p.ID)
	if err != nil {
		panic("programs: " + err.Error())
	}
	if _, dup := registry[p.ID]; dup {
		panic("programs: duplicate id " + p.ID)
	}
	p.Info = info
	registry[p.ID] = p
}

// Lookup finds a program by id.
func Lookup(id string) (*Program, error) {
	if p, ok := registry[id]; ok {
		return p, nil
	}
	if _, err := scenario.Lookup(id); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("scenario %q has no program", id)
}

// call runs a binding call and prints the exception the script catches, as
// `except Exception as e: print(type(e).__name__, e)` would.
func (e *Env) call(t *sim.Thread, name string, body func() *sim.NativeError) *sim.PyErr {
	err := e.RT.Call(t, name, body)
	if err != nil {
		e.RT.In.Print(fmt.Sprintf("%s: caught %s: %s", t.Name, err.Type, err.Msg))
	}
	return err
}
