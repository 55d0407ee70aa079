package telemetry

import (
	"encoding/json"
	"unicode/utf8"
)

// rawException is Exception on the wire: a text that is not valid UTF-8
// (raw bytes that reached Python text, which the ledger calls BADESC) also
// travels as its bytes, since JSON would replace them with U+FFFD.
type rawException struct {
	exceptionFields
	TextRaw []byte `json:"text_raw,omitempty"`
}

type exceptionFields Exception

// MarshalJSON keeps the bytes of an invalid text (text_raw).
func (e Exception) MarshalJSON() ([]byte, error) {
	w := rawException{exceptionFields: exceptionFields(e)}
	if !utf8.ValidString(e.Text) {
		w.TextRaw = []byte(e.Text)
	}
	return json.Marshal(w)
}

// UnmarshalJSON restores an invalid text from its bytes.
func (e *Exception) UnmarshalJSON(b []byte) error {
	var w rawException
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Exception(w.exceptionFields)
	if w.TextRaw != nil {
		e.Text = string(w.TextRaw)
	}
	return nil
}
