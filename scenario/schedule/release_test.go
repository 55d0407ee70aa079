package schedule

import (
	"strings"
	"testing"
)

// A schedule names an exact release the real calibration has (3.11.7), but
// nothing outside 3.10-3.15 and nothing that is not a version.
func TestValidateTakesExactReleases(t *testing.T) {
	base := `{"kind":"sink","policy":"logjam","platform":"linux","python":"PY","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":1,"size":80,"level":"I"}]}]}}`
	for py, ok := range map[string]bool{"3.12": true, "3.11.7": true, "3.10.13": true, "3.13.0": true, "3.15.2": true,
		"3.11": false, "3.9.18": false, "3.16.0": false, "3.12.x": false, "3.12.1.1": false, "": false} {
		_, err := Decode(strings.Replace(base, "PY", py, 1))
		if (err == nil) != ok {
			t.Errorf("python %q: err %v, want accepted %v", py, err, ok)
		}
	}
}
