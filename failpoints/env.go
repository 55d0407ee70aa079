package failpoints

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/pingcap/failpoint"
)

// Term is one `name=terms` entry of GO_FAILPOINTS.
type Term struct {
	Name  string
	Terms string
}

// Set is a GO_FAILPOINTS value.
type Set []Term

// Env renders the set as GO_FAILPOINTS's value.
func (s Set) Env() string {
	parts := make([]string, len(s))
	for i, t := range s {
		parts[i] = t.Name + "=" + t.Terms
	}
	return strings.Join(parts, ";")
}

// Validate checks every entry against the catalogue and the term grammar.
func (s Set) Validate() error {
	for _, t := range s {
		if err := ValidateTerm(t.Name, t.Terms); err != nil {
			return err
		}
	}
	return nil
}

// Parse reads a GO_FAILPOINTS value the way pingcap/failpoint's init does
// (`name=terms` separated by `;`) and validates it.
func Parse(env string) (Set, error) {
	var s Set
	if env == "" {
		return s, nil
	}
	for _, fp := range strings.Split(env, ";") {
		kv := strings.Split(fp, "=")
		if len(kv) != 2 {
			return nil, fmt.Errorf("malformed GO_FAILPOINTS entry %q: want name=terms, entries separated by ';'", fp)
		}
		t := Term{Name: kv[0], Terms: kv[1]}
		if err := ValidateTerm(t.Name, t.Terms); err != nil {
			return nil, err
		}
		s = append(s, t)
	}
	return s, nil
}

// <term> :: <mod>* <act> [ "(" <val> ")" ]
var termRE = regexp.MustCompile(`^((?:\d+(?:\.\d*)?%|\d+\*)*)(off|return|sleep|panic|break|print|pause)(?:\((.*)\))?$`)

// ValidateTerm checks that name is in the catalogue and terms both parse
// (by pingcap/failpoint's own parser) and carry what the point expects.
func ValidateTerm(name, terms string) error {
	p, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("unknown failpoint %q (known: %s)", name, Names())
	}
	if err := parseWithFailpoint(name, terms); err != nil {
		return fmt.Errorf("malformed terms %q for failpoint %s: %v (accepted: %s)", terms, name, err, p.Terms)
	}
	for _, term := range strings.Split(terms, "->") {
		m := termRE.FindStringSubmatch(term)
		if m == nil {
			return fmt.Errorf("malformed term %q for failpoint %s (accepted: %s)", term, name, p.Terms)
		}
		if err := p.checkAction(m[2], m[3]); err != nil {
			return fmt.Errorf("failpoint %s: term %q: %v (accepted: %s)", name, term, err, p.Terms)
		}
	}
	return nil
}

func (p Point) checkAction(act, val string) error {
	switch act {
	case "off":
		return nil
	case "sleep":
		if _, err := strconv.Atoi(val); err != nil {
			return fmt.Errorf("sleep takes a whole number of milliseconds")
		}
		if p.Kind != KindHook {
			return fmt.Errorf("sleep does not fit this point")
		}
		return nil
	case "return":
		switch p.Kind {
		case KindFlag:
			if val == "" || val == "true" || val == "false" {
				return nil
			}
			return fmt.Errorf("return takes no value or a bool here")
		case KindInt:
			if _, err := strconv.Atoi(val); err != nil {
				return fmt.Errorf("return takes a whole number here")
			}
			return nil
		case KindChoice:
			s, err := strconv.Unquote(val)
			if err == nil {
				for _, c := range p.Choices {
					if s == c {
						return nil
					}
				}
			}
			return fmt.Errorf("return takes one of %q here", p.Choices)
		}
	}
	return fmt.Errorf("action %q does not fit this point", act)
}

// parseWithFailpoint runs pingcap/failpoint's own parser on a private
// registry. That parser panics on some malformed values (`return(abc)`
// slices past the end of its input), so a panic is a malformed term too:
// the child, whose init parses GO_FAILPOINTS the same way, would crash.
func parseWithFailpoint(name, terms string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pingcap/failpoint's parser panics on it: %v", r)
		}
	}()
	var probe failpoint.Failpoints
	if err := probe.Enable(name, terms); err != nil {
		return err
	}
	return probe.Disable(name)
}
