package programs

import (
	"strings"

	"logjam/sim"
)

func init() {
	play(&Program{ID: "U1", Run: func(e *Env) *sim.PyErr {
		e.RT.In.SetStderr(sim.NewMemStream("StringIO"))
		data := []byte(strings.Repeat("\xff", 128))
		e.call(e.Main, "_load_program_from_buffer", func() *sim.NativeError { return e.RT.LoadProgram(e.Main, data) })
		return nil
	}})
	play(&Program{ID: "U2", Run: func(e *Env) *sim.PyErr {
		e.call(e.Main, "loader_from_file", func() *sim.NativeError { return e.RT.LoaderFromFile(e.Main, U2Path) })
		return nil
	}})
	play(&Program{ID: "U3", Run: func(e *Env) *sim.PyErr {
		be := e.RT.NewBackend("xnnpack")
		e.call(e.Main, "execute", func() *sim.NativeError {
			for _, m := range U3Messages() {
				e.RT.Log(e.Main, sim.Error, "xnnpack_backend.cpp", 300, "%s", m)
			}
			_ = be
			return &sim.NativeError{Type: "RuntimeError", Msg: []byte("Execution failed: 0x1")}
		})
		return nil
	}})
}

// U2Path is a path of 3-byte characters long enough that the 127-byte
// exception message ends inside one.
var U2Path = "/tmp/" + strings.Repeat("模型文件", 20) + ".pte"

// U3Messages are five Error messages of 3-byte characters; with the first
// one byte longer, the 1024-byte cut of the appended lines falls inside a
// character.
func U3Messages() []string {
	cjk := strings.Repeat("错", 84) // 252 bytes: under the logger's 255
	return []string{"x" + cjk, cjk, cjk, cjk, cjk}
}
