package inspector

import (
	"bytes"
	"encoding/json"
)

// compactJSON returns v as compact JSON bytes. RawMessage values are
// compacted (stdio frames must not contain newlines) but otherwise kept.
func compactJSON(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(x) == 0 {
			return nil, nil
		}
		var b bytes.Buffer
		if err := json.Compact(&b, x); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	return json.Marshal(v)
}
