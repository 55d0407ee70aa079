package calibrate

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The extension is one translation unit: logjamext.cpp includes every part
// in ext/, and every file there is embedded, so the build has it and its
// cache key hashes it. A part nobody includes would be dead code; a file
// left out of the key would let a stale extension be reused.
func TestEveryPartOfTheExtensionIsBuiltAndKeyed(t *testing.T) {
	ents, err := os.ReadDir("ext")
	if err != nil {
		t.Fatal(err)
	}
	files, err := extFiles()
	if err != nil {
		t.Fatal(err)
	}
	embedded := map[string]bool{}
	for _, f := range files {
		embedded[f.name] = true
	}
	var root string
	for _, f := range files {
		if f.name == "logjamext.cpp" {
			root = string(f.b)
		}
	}
	if root == "" {
		t.Fatal("ext/logjamext.cpp is not embedded")
	}
	included := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#include "([^"/]+)"`).FindAllStringSubmatch(root, -1) {
		included[m[1]] = true
	}
	for _, e := range ents {
		n := e.Name()
		if !embedded[n] {
			t.Errorf("ext/%s is not embedded: the build does not have it and the cache key misses it", n)
		}
		if strings.HasSuffix(n, ".hpp") && !included[n] {
			t.Errorf("ext/%s: logjamext.cpp does not include it", n)
		}
	}
}
