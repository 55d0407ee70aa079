package sim

import "fmt"

// LoadProgram is _load_program_from_buffer: the loader logs the program's
// identifier with its raw header bytes (`Program identifier '%.4s'`), so a
// corrupt program puts invalid UTF-8 into a log line and, at Error level,
// into the exception's appended lines.
func (rt *Runtime) LoadProgram(t *Thread, data []byte) *NativeError {
	id := data
	if len(id) > 8 {
		id = id[4:8] // the identifier follows the 4-byte header offset
	}
	if len(data) < 8 || string(id) != "ET12" {
		msg := append([]byte("Program identifier '"), id...)
		msg = append(msg, "' != expected 'ET12'"...)
		rt.LogBytes(t, Error, "program.cpp", 170, msg)
		return &NativeError{Type: "RuntimeError", Msg: []byte("Failed to load program from buffer, error: 0x23")}
	}
	return nil
}

// LoaderFromFile is a FileDataLoader for path: a path that does not exist
// logs an Error line and raises with THROW_IF_ERROR's message, which names
// the path and is cut at 127 bytes, wherever that falls.
func (rt *Runtime) LoaderFromFile(t *Thread, path string) *NativeError {
	rt.Log(t, Error, "file_data_loader.cpp", 93, "Failed to open %s: No such file or directory", path)
	return &NativeError{Type: "RuntimeError", Msg: []byte(fmt.Sprintf("Failed to create loader from file %s, error: 0x22", path))}
}
