package failpoints

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// upstream is the pingcap/failpoint version third_party/failpoint copies,
// and the module hash go.sum held for it before the copy replaced it.
const (
	upstreamPath    = "github.com/pingcap/failpoint"
	upstreamVersion = "v0.0.0-20240528011301-b51a646c7c86"
	upstreamSum     = "h1:tdMsjOqUR7YXHoBitzdebTvOjs/swniBTOLy5XiMtuE="
)

// ours are the files of the copy that are not upstream's
// (third_party/failpoint/README.md says why).
var ours = map[string]bool{"http.go": true, "README.md": true}

// TestTheFailpointCopyIsUpstreams downloads the upstream version through
// the module proxy (checked against its recorded hash) and holds every file
// of third_party/failpoint but ours to upstream's bytes.
func TestTheFailpointCopyIsUpstreams(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads the upstream module")
	}
	cmd := exec.Command("go", "mod", "download", "-json", upstreamPath+"@"+upstreamVersion)
	cmd.Dir = t.TempDir() // outside this module: its replace does not apply
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download: %v\n%s", err, out)
	}
	var mod struct{ Dir, Sum, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Error != "" {
		t.Fatalf("go mod download: %v %s\n%s", err, mod.Error, out)
	}
	if mod.Sum != upstreamSum {
		t.Fatalf("upstream %s@%s hashes to %s, want %s", upstreamPath, upstreamVersion, mod.Sum, upstreamSum)
	}
	copyDir := filepath.Join("..", "third_party", "failpoint")
	n := 0
	err = filepath.WalkDir(copyDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(copyDir, path)
		if ours[rel] {
			return nil
		}
		got, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		want, err := os.ReadFile(filepath.Join(mod.Dir, rel))
		if err != nil {
			t.Errorf("%s: not in upstream: %v", rel, err)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from upstream's", rel)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Errorf("compared %d files with upstream's; the copy has failpoint.go, failpoints.go, marker.go, terms.go, go.mod and the licences", n)
	}
}
