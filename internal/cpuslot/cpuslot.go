// Package cpuslot keeps CPU-bound cells to the cores while cells that only
// wait for a deadline run beside them: the chaos runner serves N slots on a
// unix socket (LOGJAM_CPU_SLOTS), a cell takes one before its child starts
// and gives it back when the child is done or known to be waiting (a
// reported cycle in strict mode). A slot is held by a connection, so a
// process that dies gives its slot back. The socket's folder is a scratch
// folder (internal/scratch): the next Serve removes one a killed run left.
package cpuslot

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"

	"logjam/internal/scratch"
)

// Env names the socket the slots are served on.
const Env = "LOGJAM_CPU_SLOTS"

// Server hands out n slots.
type Server struct {
	Addr string
	ln   net.Listener
	dir  *scratch.Dir
	wg   sync.WaitGroup
}

// ScratchPrefix names the socket's folder under the temporary directory:
// logjam-slots-<pid>-<random>.
const ScratchPrefix = "logjam-slots"

// Serve starts serving n slots on a socket in a fresh scratch folder under
// the temporary directory, after removing those of runs that are gone.
func Serve(n int) (*Server, error) {
	if n < 1 {
		return nil, errors.New("cpuslot: need at least one slot")
	}
	scratch.Sweep(os.TempDir(), ScratchPrefix)
	dir, err := scratch.New(os.TempDir(), ScratchPrefix)
	if err != nil {
		return nil, err
	}
	addr := filepath.Join(dir.Dir, "slots.sock")
	ln, err := net.Listen("unix", addr)
	if err != nil {
		dir.Remove()
		return nil, err
	}
	s := &Server{Addr: addr, ln: ln, dir: dir}
	sem := make(chan struct{}, n)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				// Wait for a slot, or for the client to go away first.
				gone := make(chan struct{})
				go func() { c.Read(make([]byte, 1)); close(gone) }()
				select {
				case sem <- struct{}{}:
				case <-gone:
					return
				}
				defer func() { <-sem }()
				if _, err := c.Write([]byte{'g'}); err != nil {
					return
				}
				<-gone
			}()
		}
	}()
	return s, nil
}

// Close stops serving; held slots are dropped with their connections.
func (s *Server) Close() {
	s.ln.Close()
	s.wg.Wait()
	s.dir.Remove()
}

// Acquire takes a slot from the server LOGJAM_CPU_SLOTS names, waiting as
// long as ctx allows; without the variable it takes nothing. The returned
// release is idempotent and safe to call from any goroutine.
func Acquire(ctx context.Context) (release func(), err error) {
	addr := os.Getenv(Env)
	if addr == "" {
		return func() {}, nil
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	_, err = c.Read(make([]byte, 1))
	stop()
	if err != nil {
		c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { c.Close() }) }, nil
}
