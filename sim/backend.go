package sim

import (
	"fmt"
	"time"

	"logjam/failpoints"
)

// Backend is a native delegate with its own lock (XNNPACK's workspace and
// weights-cache lock): it logs while holding it, and execute takes it too.
type Backend struct {
	rt   *Runtime
	Name string
	L    *Lock
}

// NewBackend registers a backend and its lock.
func (rt *Runtime) NewBackend(name string) *Backend {
	return &Backend{rt: rt, Name: name, L: rt.G.NewLock(name + " workspace lock")}
}

// LoadMethod is load_method: under the backend lock, compile; a failure
// (failpoint backend-load-fails) logs at Error level while the lock is held.
func (b *Backend) LoadMethod(t *Thread, method string) *NativeError {
	b.L.Acquire(t)
	defer b.L.Release(t)
	failpoints.Hit(failpoints.BackendLoadLocked, t)
	if code, ok := failpoints.Int(failpoints.BackendLoadFails); ok && code != 0 {
		b.rt.Log(t, Error, b.Name+"_backend.cpp", 97, "compileModel failed: 0x%x", code)
		return &NativeError{Type: "RuntimeError", Msg: []byte(fmt.Sprintf("Failed to load method %s, error: 0x%x", method, code))}
	}
	return nil
}

// Execute is execute(): it takes the same backend lock.
func (b *Backend) Execute(t *Thread) *NativeError {
	b.L.Acquire(t)
	defer b.L.Release(t)
	if ms, ok := failpoints.Int(failpoints.BackendExecuteDelay); ok && ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	return nil
}

// ExecuteLogging is an execute whose delegate logs n lines of about size
// bytes at level while it holds the backend lock.
func (b *Backend) ExecuteLogging(t *Thread, lvl Level, n, size int) *NativeError {
	b.L.Acquire(t)
	defer b.L.Release(t)
	for i := 0; i < n; i++ {
		b.rt.Log(t, lvl, b.Name+"_backend.cpp", 211, "%s", Filler(i, size))
	}
	return nil
}

// Filler is a log message of about size bytes that names its index.
func Filler(i, size int) string {
	head := fmt.Sprintf("delegate trace %d ", i)
	if size <= len(head) {
		return head
	}
	b := make([]byte, size-len(head))
	for j := range b {
		b[j] = 'a' + byte((i+j)%26)
	}
	return head + string(b)
}
