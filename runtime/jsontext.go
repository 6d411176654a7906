package runtime

import (
	"bytes"
	"encoding/json"
)

// MarshalJSON encodes v as compact JSON without HTML escaping. Use it for
// JSON that agents and people read as text (tool result text, API bodies,
// CLI output): encoding/json's default writes ">" as "\u003e" and "&" as
// "\u0026", which a reader of the text sees literally.
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
