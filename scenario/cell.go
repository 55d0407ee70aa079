package scenario

import (
	"fmt"
	"strings"

	"logjam/failpoints"
)

// The runtime a cell runs on when its row names none.
const (
	DefaultPlatform = "linux"
	DefaultPython   = "3.12"
)

// Cell is which cell of the matrix a run is: the scenario and the axes it
// runs under. It is declared once; the suites' specs, the observed outcome,
// the report's row and a bundle's replay record all embed it, so as JSON its
// fields sit flat in each of them.
type Cell struct {
	Scenario string `json:"scenario"`
	Policy   string `json:"policy,omitempty"`  // "" for the harness's purpose-built children
	Variant  string `json:"variant,omitempty"` // lazy init
	Backend  string `json:"backend,omitempty"` // lazy init
	Platform string `json:"platform,omitempty"`
	Python   string `json:"python,omitempty"`
	// Buffering is how Python opened sys.stderr: "" (buffered) or "unbuffered".
	Buffering string `json:"buffering,omitempty"`
	// OldBuffering is read, never written: a bundle or matrix written
	// before Buffering was named so says "stderr" (Upgrade moves it).
	OldBuffering string `json:"stderr,omitempty"`
}

// Upgrade moves an old spelling a cell read from a file may carry to its
// name ("stderr" to Buffering); a cell with both is refused.
func (c *Cell) Upgrade() error {
	if c.OldBuffering == "" {
		return nil
	}
	if c.Buffering != "" {
		return fmt.Errorf("both buffering %q and its old spelling stderr %q", c.Buffering, c.OldBuffering)
	}
	c.Buffering, c.OldBuffering = c.OldBuffering, ""
	return nil
}

// WithDefaults fills the platform and the Python of a cell that runs a log
// path (a policy or a lazy-init variant) and names neither.
func (c Cell) WithDefaults() Cell {
	if c.Policy == "" && c.Variant == "" {
		return c
	}
	if c.Platform == "" {
		c.Platform = DefaultPlatform
	}
	if c.Python == "" {
		c.Python = DefaultPython
	}
	return c
}

// nameKeys are the bracket's keys of a cell's name, in order.
var nameKeys = []string{"policy", "variant", "backend", "platform", "py", "stderr"}

func (c *Cell) field(key string) *string {
	switch key {
	case "policy":
		return &c.Policy
	case "variant":
		return &c.Variant
	case "backend":
		return &c.Backend
	case "platform":
		return &c.Platform
	case "py":
		return &c.Python
	case "stderr":
		return &c.Buffering
	}
	return nil
}

// fpKey names a failpoint in a cell's name; the "logjam/" prefix is left out.
const fpKey = "fp"

// Name is the cell's Ginkgo Entry name, `<ID> <slug> [policy=<p> ...
// platform=<os> py=<ver>]`, with the failpoints it runs with as
// `fp=<name>=<terms>`. Parse is its inverse. The name starts with the
// scenario's ID so that --focus 'D1' selects a scenario's cells.
func (c Cell) Name(fps failpoints.Set) string {
	slug := c.Scenario
	if in, err := Lookup(c.Scenario); err == nil {
		slug = in.Slug
	}
	var params []string
	for _, k := range nameKeys {
		if v := *c.field(k); v != "" {
			params = append(params, k+"="+v)
		}
	}
	for _, fp := range fps {
		params = append(params, fpKey+"="+strings.TrimPrefix(fp.Name, "logjam/")+"="+fp.Terms)
	}
	return fmt.Sprintf("%s %s [%s]", c.Scenario, slug, strings.Join(params, " "))
}

// Parse is the cell a spec's name names: Name's inverse, and the ID alone
// for a spec named `<ID> <description>` (the harness's). A name whose first
// word is no catalogued scenario, or whose bracket holds an unknown key,
// names no cell.
func Parse(name string) (Cell, failpoints.Set, error) {
	id, rest, _ := strings.Cut(name, " ")
	if _, err := Lookup(id); err != nil {
		return Cell{}, nil, fmt.Errorf("%q names no cell: %v", name, err)
	}
	c := Cell{Scenario: id}
	open := strings.LastIndex(rest, " [")
	if !strings.HasSuffix(rest, "]") || open < 0 {
		return c, nil, nil
	}
	var fps failpoints.Set
	for _, kv := range strings.Fields(rest[open+2 : len(rest)-1]) {
		k, v, _ := strings.Cut(kv, "=")
		if k == fpKey {
			fp, terms, ok := strings.Cut(v, "=")
			if !ok {
				return Cell{}, nil, fmt.Errorf("%q: failpoint %q has no terms", name, v)
			}
			if !strings.Contains(fp, "/") {
				fp = "logjam/" + fp
			}
			fps = append(fps, failpoints.Term{Name: fp, Terms: terms})
			continue
		}
		f := c.field(k)
		if f == nil || v == "" {
			return Cell{}, nil, fmt.Errorf("%q: %q is not one of %s=<value>", name, kv, strings.Join(append(nameKeys, fpKey), ", "))
		}
		*f = v
	}
	return c, fps, nil
}
