package artifact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

type inner struct {
	Name string `json:"name"`
}

type record struct {
	ID      string            `json:"id"`
	Count   int               `json:"count,omitempty"`
	Inner   inner             `json:"inner"`
	List    []inner           `json:"list"`
	Tags    map[string]string `json:"tags"`
	At      time.Time         `json:"at"`
	NoTag   string
	Skipped string `json:"-"`
	inner
}

const good = `{"id":"a","count":2,"inner":{"name":"x"},"list":[{"name":"y"}],"tags":{"k":"v"},"at":"2026-12-03T00:00:00Z","NoTag":"z","name":"e"}`

func TestDecodeAcceptsWhatEncodingJSONWrites(t *testing.T) {
	var r record
	if err := Decode([]byte(good), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != "a" || r.List[0].Name != "y" || r.Tags["k"] != "v" || r.NoTag != "z" || r.inner.Name != "e" {
		t.Fatalf("decoded %+v", r)
	}
	var m []record
	if err := Decode([]byte("[\n"+good+","+good+"]\n"), &m); err != nil || len(m) != 2 {
		t.Fatalf("a list: %v", err)
	}
}

// TestDecodeRefusesWhatIsNotStrictJSON: each crafted input is refused with
// one line naming the problem.
func TestDecodeRefusesWhatIsNotStrictJSON(t *testing.T) {
	deep := strings.Repeat(`{"tags":`, 1) + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "}"
	for _, c := range []struct{ name, in, want string }{
		{"a key twice", `{"id":"a","id":"b"}`, `key "id" appears twice`},
		{"a key twice, nested", `{"inner":{"name":"a","name":"b"}}`, `key "name" appears twice`},
		{"a map key twice", `{"tags":{"k":"a","k":"b"}}`, `key "k" appears twice`},
		{"an upper-case key", `{"ID":"a"}`, `key "ID" is not spelled as its field "id"`},
		{"a lower-case Go name", `{"notag":"a"}`, `not spelled as its field "NoTag"`},
		{"a key in another case, nested", `{"list":[{"Name":"a"}]}`, `not spelled as its field "name"`},
		{"an unknown field", `{"exec":"sh"}`, `unknown field "exec"`},
		{"a field json ignores", `{"Skipped":"x"}`, `unknown field "Skipped"`},
		{"data after the value", `{"id":"a"} {"id":"b"}`, "more after the JSON value"},
		{"garbage after the value", `{"id":"a"}]`, "more after the JSON value"},
		{"nested too deep", deep, "nested more than"},
		{"not JSON", `{"id":`, "EOF"},
		{"an escape in a key", `{"\u001b[2Jid":1}`, `unknown field "\x1b[2Jid"`},
		{"a raw escape in a string", "{\"id\":\"\x1b[2J\"}", "invalid character"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r record
			err := Decode([]byte(c.in), &r)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %q", err, c.want)
			}
			if strings.ContainsAny(err.Error(), "\n\x1b") {
				t.Fatalf("the error is not one plain line: %q", err)
			}
		})
	}
}

// TestReadRefusesAnythingButASmallRegularFile: a symlink (to a file
// outside the input, whose bytes must not come back), a FIFO (must not
// block), a device, a directory, a file over the cap.
func TestReadRefusesAnythingButASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "private")
	if err := os.WriteFile(secret, []byte(`{"id":"SECRET"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 64<<20); err != nil { // sparse: 64 MiB on no disk
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(ok, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, want string }{
		{"a symlink to a file outside", link, "symlink"},
		{"a FIFO", fifo, "FIFO"},
		{"a device that never ends", "/dev/zero", "device"},
		{"a directory", dir, "directory"},
		{"a file over the cap", big, "more than it may hold"},
		{"a file just over the cap", ok, "more than it may hold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			limit := int64(1 << 20)
			if c.path == ok {
				limit = int64(len(good)) - 1
			}
			done := make(chan error, 1)
			go func() {
				var r record
				done <- ReadJSON(c.path, limit, &r)
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the reader blocked")
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %q", err, c.want)
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("the error is not one line, or holds what the link points at: %q", err)
			}
		})
	}
	var r record
	if err := ReadJSON(ok, int64(len(good)), &r); err != nil || r.ID != "a" {
		t.Fatalf("a file of exactly the cap: %v", err)
	}
}

// Whatever Decode accepts, encoding/json reads the same way: the strict
// reader only refuses, it never reads a value differently.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"id":"a","id":"b"}`))
	f.Add([]byte(`{"tags":{"K":"v","k":"w"},"list":[{"name":"x"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var strict record
		if err := Decode(raw, &strict); err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a refusal of two lines: %q", err)
			}
			return
		}
		var loose record
		if err := json.Unmarshal(raw, &loose); err != nil {
			t.Fatalf("Decode accepted what encoding/json refuses (%v): %q", err, raw)
		}
		if !reflect.DeepEqual(strict, loose) {
			t.Fatalf("Decode read %+v, encoding/json %+v from %q", strict, loose, raw)
		}
	})
}
