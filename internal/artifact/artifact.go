// Package artifact reads files someone else wrote (a shard's reports, an
// evidence bundle, a reports folder from another runner) with one set of
// rules, so that every reader of such input refuses the same things:
//
//   - the file is opened without following a symlink (O_NOFOLLOW) and
//     without blocking on a FIFO (O_NONBLOCK), and the opened descriptor
//     must be a regular file (fstat): no symlink, FIFO, socket or device;
//   - it holds at most the caller's cap, counted while reading (a file that
//     grows past its stat size is refused too);
//   - JSON is strict: exactly one value, nothing after it, no field the
//     target type does not have, no key spelled in another case than its
//     field (encoding/json would match "ID" to "id"), no key twice in one
//     object, at most MaxDepth objects and arrays deep.
//
// Every refusal is one line.
package artifact

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxDepth is how deeply objects and arrays may nest in an artifact's
// JSON (logjam's own files nest six deep at most).
const MaxDepth = 32

// Read reads the regular file at path, at most limit bytes of it, without
// following a symlink or blocking on a FIFO.
func Read(path string, limit int64) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, errors.New("not a regular file (a symlink)")
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", kind(st.Mode()))
	}
	// The cap is counted while reading, not taken from the stat: a file
	// may grow, and a size says nothing of what a read returns.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("more than it may hold (%d bytes)", limit)
	}
	return b, nil
}

func kind(m os.FileMode) string {
	switch t := m.Type(); {
	case t&os.ModeSymlink != 0:
		return "a symlink"
	case t&os.ModeNamedPipe != 0:
		return "a FIFO"
	case t&os.ModeSocket != 0:
		return "a socket"
	case t&os.ModeDevice != 0:
		return "a device"
	case t&os.ModeDir != 0:
		return "a directory"
	default:
		return t.String()
	}
}

// ReadJSON reads the file at path (Read) and decodes it strictly (Decode).
func ReadJSON(path string, limit int64, v any) error {
	b, err := Read(path, limit)
	if err != nil {
		return err
	}
	return Decode(b, v)
}

// Decode decodes exactly one JSON value into v, strictly: see the package
// comment.
func Decode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := walk(dec, reflect.TypeOf(v), 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more after the JSON value")
	}
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields() // walk refuses them first; this guards what walk does not look into
	return dec.Decode(v)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// walk reads one value's tokens, checking depth and keys; t is the Go
// type it decodes into (nil: not checked for spelling, a value that
// decodes itself or an interface).
func walk(dec *json.Decoder, t reflect.Type, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= MaxDepth {
		return fmt.Errorf("nested more than %d deep", MaxDepth)
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)) {
		t = nil
	}
	switch d {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walk(dec, elem, depth+1); err != nil {
				return err
			}
		}
	case '{':
		var fields map[string]reflect.Type
		var elem reflect.Type
		if t != nil {
			switch t.Kind() {
			case reflect.Struct:
				fields = fieldsOf(t)
			case reflect.Map:
				elem = t.Elem()
			}
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key := tok.(string)
			if seen[key] {
				return fmt.Errorf("key %q appears twice in one object", clip(key))
			}
			seen[key] = true
			child := elem
			if fields != nil {
				ft, ok := fields[key]
				if !ok {
					for name := range fields {
						if strings.EqualFold(name, key) {
							return fmt.Errorf("key %q is not spelled as its field %q", clip(key), name)
						}
					}
					return fmt.Errorf("unknown field %q", clip(key))
				}
				child = ft
			}
			if err := walk(dec, child, depth+1); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// fieldsOf is the JSON names of a struct's fields, as encoding/json sees
// them (embedded structs without a name flattened; an outer field wins).
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	for _, e := range embedded {
		for name, ft := range fieldsOf(e) {
			if _, ok := fields[name]; !ok {
				fields[name] = ft
			}
		}
	}
	return fields
}

// clip keeps a foreign key short enough for one line of an error.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
