package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// compactJSON returns v as compact JSON bytes. RawMessage values are
// compacted (stdio frames must not contain newlines) but otherwise kept.
func compactJSON(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case compacted:
		return json.RawMessage(x), nil
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

// compacted is params already written as json.Marshal writes them, which
// compactJSON passes on as they are.
type compacted json.RawMessage

// namedParams returns the params of tools/call and prompts/get,
// {"arguments":args,"name":name} (without arguments when args is empty),
// byte for byte as json.Marshal writes a map of the two: every tool call
// makes them, and the map and its reflection were a twentieth of a REPL
// call's CPU.
func namedParams(name string, args json.RawMessage) (compacted, error) {
	b := make([]byte, 0, len(args)+len(name)+24)
	b = append(b, '{')
	if len(args) > 0 {
		if !json.Valid(args) {
			_, err := json.Marshal(args) // the error json.Marshal gives
			return nil, err
		}
		b = append(b, `"arguments":`...)
		b = rawjson.AppendCompactPrefix(b, args, math.MaxInt, true)
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	b = appendJSONString(b, name)
	return append(b, '}'), nil
}

// appendJSONString appends s as json.Marshal writes a string.
func appendJSONString(b []byte, s string) []byte {
	if !plainName(s) {
		q, _ := json.Marshal(s)
		return append(b, q...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// decodeProblem says why a server's JSON did not decode into one of the
// spec's types, in the spec's terms: the member and the JSON types, not
// the Go ones encoding/json names ("taskId is a number, not a string").
func decodeProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "another type"
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "a boolean"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			want = "an integer"
		case reflect.Float32, reflect.Float64:
			want = "a number"
		case reflect.Slice, reflect.Array:
			want = "an array"
		case reflect.Struct, reflect.Map:
			want = "an object"
		}
		// Value is "string", "bool", "array", "object" or "number",
		// the last sometimes with the number after it.
		word, _, _ := strings.Cut(te.Value, " ")
		got, known := map[string]string{"number": "a number", "string": "a string", "array": "an array", "object": "an object", "bool": "a boolean"}[word]
		if !known {
			got = te.Value
		}
		if te.Field == "" {
			return fmt.Sprintf("it is %s, not %s", got, want)
		}
		return fmt.Sprintf("its %s is %s, not %s", te.Field, got, want)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "it is not valid JSON"
	}
	return err.Error()
}
