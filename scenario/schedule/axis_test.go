package schedule

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEveryAxisIsRegisteredOnce: each axis is in Axes once, under a name
// of its own, and every part of a Sink (each of its fields, and each of
// FD2's, which holds three axes' parts) is owned by exactly one
// registered axis (Axis.Parts; the most specific claim owns a field:
// fd2 claims FD2, stalls its Stalling): a part no axis validates or
// shrinks is the bug this catches, and so is a claim on no part of the
// sink. The owners are derived from the axes, never kept here by hand.
func TestEveryAxisIsRegisteredOnce(t *testing.T) {
	names := map[string]bool{}
	types := map[reflect.Type]bool{}
	for _, a := range Axes {
		if names[a.Name()] || types[reflect.TypeOf(a)] {
			t.Fatalf("axis %q registered twice", a.Name())
		}
		names[a.Name()], types[reflect.TypeOf(a)] = true, true
	}
	k := &Sink{}
	// claims: each part an axis owns, by its address and type (a struct
	// and its first field share an address).
	type part struct {
		addr uintptr
		ty   reflect.Type
	}
	claims := map[part]string{}
	for _, a := range Axes {
		for _, p := range a.Parts(k) {
			v := reflect.ValueOf(p)
			if v.Kind() != reflect.Pointer {
				t.Fatalf("axis %q: Parts gives a %T, not a pointer into the sink", a.Name(), p)
			}
			at := part{v.Pointer(), v.Type().Elem()}
			if o, ok := claims[at]; ok {
				t.Errorf("axes %q and %q both own the sink's part %s", o, a.Name(), at.ty)
			}
			claims[at] = a.Name()
		}
	}
	owned := map[part]bool{}
	var owners []string
	// walk checks every field of the struct at v (of the Sink, or of a
	// struct field of it, not behind a pointer or slice), whose owner
	// (from its container) is owner.
	var walk func(v reflect.Value, path, owner string)
	walk = func(v reflect.Value, path, owner string) {
		for i := range v.NumField() {
			f, fv := v.Type().Field(i), v.Field(i)
			name := path + f.Name
			o := owner
			if a, ok := claims[part{fv.Addr().Pointer(), f.Type}]; ok {
				o = a
				owned[part{fv.Addr().Pointer(), f.Type}] = true
			}
			if o == "" && path == "" {
				t.Errorf("Sink.%s belongs to no axis: register one (docs/ADDING-A-SCENARIO.md, \"Adding an axis\")", name)
				continue
			}
			owners = append(owners, name+": "+o)
			if f.Type.Kind() == reflect.Struct {
				walk(fv, name+".", o)
			}
		}
	}
	walk(reflect.ValueOf(k).Elem(), "", "")
	for at, a := range claims {
		if !owned[at] {
			t.Errorf("axis %q owns a %s that is no part of a Sink (its Parts)", a, at.ty)
		}
	}
	t.Logf("the sink's parts and their axes:\n%s", strings.Join(owners, "\n"))
}

// TestEveryDrawHasAPlaceOfItsOwn: no two draws share a place in the draw
// order (DrawAt), which would leave their order to the order of Axes; a
// draw added later takes the place this names. The order itself, every
// seed's schedule, is TestEverySeedDrawsItsGoldenSchedule's (package gen).
func TestEveryDrawHasAPlaceOfItsOwn(t *testing.T) {
	at := map[int]string{swarmDraw.Place: "the swarm"}
	most := swarmDraw.Place
	for _, a := range Axes {
		for _, d := range a.Draws() {
			if o, ok := at[d.Place]; ok {
				t.Errorf("axis %q draws at place %d, as %s does", a.Name(), d.Place, o)
			}
			at[d.Place] = fmt.Sprintf("axis %q", a.Name())
			most = max(most, d.Place)
			if d.Place < 1 {
				t.Errorf("axis %q draws at place %d (places start at 1)", a.Name(), d.Place)
			}
		}
	}
	places := make([]int, 0, len(at))
	for p := range at {
		places = append(places, p)
	}
	slices.Sort(places)
	var order []string
	for _, p := range places {
		order = append(order, fmt.Sprintf("%d %s", p, at[p]))
	}
	t.Logf("the draw order (a new draw takes place %d):\n%s", most+1, strings.Join(order, "\n"))
	if len(drawOrder) != len(at) {
		t.Errorf("drawOrder has %d draws, the axes %d", len(drawOrder), len(at))
	}
}
