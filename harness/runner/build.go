package runner

import (
	"context"
	"maps"
	"sync"
)

// suiteBuild is buildSuites run beside the families: each binary is handed
// out as soon as it can run, so that in a fresh clone a family starts while
// the others still link.
type suiteBuild struct {
	done chan struct{} // closed once buildSuites returned and every binary was announced

	mu       sync.Mutex
	finished bool // buildSuites returned
	early    map[string]bool
	paths    map[string]string
	ready    map[string]chan struct{} // closed when paths[name] is set
	cached   bool
	err      error
	cleanup  func()
}

// startBuild starts buildSuites for the child ("simrt") and the families.
func startBuild(ctx context.Context, root string, fams []string) *suiteBuild {
	b := &suiteBuild{done: make(chan struct{}), early: map[string]bool{}, paths: map[string]string{},
		ready: map[string]chan struct{}{}, cleanup: func() {}}
	for _, name := range entryNames(fams) {
		b.ready[name] = make(chan struct{})
	}
	go func() {
		defer close(b.done)
		bins, cleanup, cached, err := buildSuites(ctx, root, fams, b.announce)
		b.mu.Lock()
		b.finished, b.cleanup, b.cached, b.err = true, cleanup, cached, err
		b.mu.Unlock()
		for name, path := range bins { // a cached entry's, all at once
			b.announce(name, path)
		}
	}()
	return b
}

func (b *suiteBuild) announce(name, path string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.paths[name]; ok || b.ready[name] == nil {
		return
	}
	b.paths[name] = path
	b.early[name] = !b.finished
	close(b.ready[name])
}

// wait is name's binary once it is ready; "" when the build ended without
// it, or stop was closed first.
func (b *suiteBuild) wait(name string, stop <-chan struct{}) string {
	select {
	case <-b.ready[name]:
	case <-b.done:
	case <-stop:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.paths[name]
}

// announcedEarly: name's binary was ready while the build went on.
func (b *suiteBuild) announcedEarly(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.early[name]
}

// result waits for the build's end: whether the entry was found built, and
// the build's error.
func (b *suiteBuild) result() (cached bool, err error) {
	<-b.done
	return b.cached, b.err
}

// bins are the binaries announced so far, by name.
func (b *suiteBuild) bins() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.paths)
}

// close waits for the build's end and lets go of its entry and links.
func (b *suiteBuild) close() {
	<-b.done
	b.cleanup()
}
