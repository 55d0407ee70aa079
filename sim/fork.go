package sim

import "fmt"

// ForkAware is a sink with state of its own that a fork() copies into the
// child: its own locks and what it keeps process-wide. Its methods are its
// pthread_atfork handlers (docs/SCENARIOS.md, "fork() with a log-path lock
// held"). A sink that is not ForkAware owns no lock a fork could leave held
// and keeps nothing but each thread's own lines (the forking thread,
// outside any call, has none): the child uses it as it is.
type ForkAware interface {
	// OwnLocks are the locks the sink owns (a thread keeping a line holds
	// them).
	OwnLocks() []*Lock
	// BeforeFork is the prepare handler, on the forking thread (GIL held).
	BeforeFork(t *Thread)
	// AfterForkParent is the parent's handler, on the forking thread.
	AfterForkParent(t *Thread)
	// ForkChild is the child's copy of the sink, its locks copied with
	// f.Copy, and its child handler, run first on the child's thread.
	ForkChild(f *ForkView) (Policy, func(c *Thread))
}

// ForkView is what a fork copies into the child: whose lock is whose there.
type ForkView struct {
	g      *Graph
	forker *Thread // the parent's thread that forked
	child  *Thread // the same thread, in the child
	ghosts map[*Thread]*Thread
}

// Copy is the child's copy of l, as the fork left it: free if l was free,
// the child's if the forking thread held it, and otherwise held by the
// holder's ghost, a thread that is not in the child: it never releases it,
// so a wait for it is one no thread can end (the graph reports it at once,
// as a lock whose owner has ended).
func (f *ForkView) Copy(l *Lock) *Lock {
	c := f.g.NewLock(l.name + " (the child's copy)")
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	switch o := l.owner; {
	case o == nil:
	case o == f.forker:
		c.owner = f.child
		f.child.held = append(f.child.held, c)
	default:
		gh := f.ghosts[o]
		if gh == nil {
			gh = &Thread{Name: o.Name + " (the parent's, not in the child)", in: o.in, ended: true, done: make(chan struct{})}
			close(gh.done)
			f.ghosts[o] = gh
		}
		c.owner = gh
		gh.held = append(gh.held, c)
	}
	return c
}

// ForkedLocked reports, for a barrier's condition (graph mutex held),
// whether the process has forked.
func (g *Graph) ForkedLocked() bool { return g.forks > 0 }

// SinkOf is the sink t's lines go through: the child's copy on a forked
// child's thread, the process's sink otherwise.
func (rt *Runtime) SinkOf(t *Thread) Policy {
	if t.sink != nil {
		return t.sink
	}
	return rt.Policy
}

// OwnLocks are the locks the process's sink owns (none for a sink that is
// not ForkAware).
func (rt *Runtime) OwnLocks() []*Lock {
	if fa, ok := unwrap(rt.Policy).(ForkAware); ok {
		return fa.OwnLocks()
	}
	return nil
}

func unwrap(p Policy) Policy {
	if u, ok := p.(interface{ Unwrap() Policy }); ok {
		return u.Unwrap()
	}
	return p
}

// Fork is os.fork() on t (GIL held, outside any call), then os.waitpid()
// for the child: the sink's prepare handler, the copy, the parent's
// handler; the child's program runs on a thread of its own, MainThread
// (child), which takes the GIL once t's wait lets it go (the child's GIL is
// its own; nothing else of the parent wants it meanwhile) and whose lines go
// through the sink's child copy. It returns the child's exit status; a
// child that never ends leaves t waiting for ever, as waitpid would.
//
// Limits, refused rather than modelled wrong: the locks CPython and glibc
// remake in the child (the GIL, sys.stderr's lock, the stdio lock) are
// shared with the parent here, so no other thread may hold one at the fork;
// and the forking thread may not be inside a call (its kept lines would be
// the child's too).
func (rt *Runtime) Fork(t *Thread, child func(c *Thread) int) int {
	in := rt.In
	if !t.HoldsGIL() || t.InCall() {
		panic("sim: os.fork() needs the GIL and no binding call on " + t.Name)
	}
	fa, _ := unwrap(rt.Policy).(ForkAware)
	if fa != nil {
		fa.BeforeFork(t)
	}
	remade := []*Lock{rt.Stdio}
	if l := in.StderrLock(); l != nil {
		remade = append(remade, l)
	}
	in.G.mu.Lock()
	for _, l := range remade {
		if l.owner != nil && l.owner != t {
			in.G.mu.Unlock()
			panic(fmt.Sprintf("sim: os.fork() while %s holds %s is not modelled", l.owner.Name, l.name))
		}
	}
	in.G.mu.Unlock()
	c := in.newThread("MainThread (child)", false, false)
	c.sink = rt.Policy
	var after func(*Thread)
	if fa != nil {
		p, a := fa.ForkChild(&ForkView{g: in.G, forker: t, child: c, ghosts: map[*Thread]*Thread{}})
		c.sink, after = WithUnwindFrames(p), a
	}
	in.G.mu.Lock()
	in.G.forks++
	in.G.changedLocked()
	in.G.mu.Unlock()
	if fa != nil {
		fa.AfterForkParent(t)
	}
	status := 0
	go func() {
		defer in.endThread(c)
		c.AcquireGIL()
		if after != nil {
			after(c)
		}
		status = child(c)
		c.ReleaseGIL()
	}()
	t.Join(c)
	return status
}
