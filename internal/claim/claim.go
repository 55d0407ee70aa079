// Package claim shares one family's specs among the spec processes logjam
// chaos starts for it, without Ginkgo's parallel server: every process
// walks the same specs in the same order (one seed, one focus), and a spec
// runs in the first process that claims it, an O_EXCL file in the folder
// the runner made for the family's repeat; the others skip it at once.
// A process that is free claims the next spec no one has taken, so the
// specs that wait longest, which Ginkgo orders first, never end a family.
package claim

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Env names the folder of claims (one per family and repeat). Unset (go
// test, go tool ginkgo, one process a family), every spec runs.
const Env = "LOGJAM_CLAIMS"

// SkipMessage is the whole message of a spec skipped because another
// process of its family claimed it first: suitekit leaves such a spec out
// of that process's report and of the run's progress.
const SkipMessage = "claimed by another spec process of its family"

// Claimer claims a process's specs in the order it reaches them.
type Claimer struct {
	dir string
	n   int // specs claimed or seen so far: the next one's ordinal
}

// FromEnv is the Claimer of the folder Env names; nil when it is unset.
// A folder that is not there is an error: a process that could not claim
// would run every spec, twice over its family.
func FromEnv() (*Claimer, error) {
	dir := os.Getenv(Env)
	if dir == "" {
		return nil, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: %q is not a folder", Env, dir)
	}
	return &Claimer{dir: dir}, nil
}

// Take claims the next spec this process reaches, named by its full text:
// true when it is this process's to run. The claim's name is the spec's
// ordinal and a hash of its text, so two processes that disagreed on the
// order would both run a spec (seen twice in the report), never both skip
// it. A claim this process wins holds what() (the spec as the runner would
// report it, were the process to die before it reports it: Claims), made
// only then: every process reaches every spec, and wins few.
func (c *Claimer) Take(fullText string, what func() []byte) (bool, error) {
	h := fnv.New64a()
	h.Write([]byte(fullText))
	name := fmt.Sprintf("%d-%016x", c.n, h.Sum64())
	c.n++
	f, err := os.OpenFile(filepath.Join(c.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claiming a spec: %v", err)
	}
	_, err = f.Write(what())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return true, fmt.Errorf("claiming a spec: %v", err)
	}
	return true, nil
}

// maxClaimBytes bounds what Claims reads of one claim.
const maxClaimBytes = 64 << 10

// Claims is what each claim in dir holds (Take's what()), in no order. A
// claim of a process that died while it wrote is there, maybe cut short.
func Claims(dir string) ([][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(io.LimitReader(f, maxClaimBytes))
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
