package rawjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Mistyped is a JSON value encoding/json could not decode because the Go
// value it was decoded into takes another type, said in JSON's terms
// rather than Go's (a message about a server's result or a trace line is
// read by people who know the JSON, not mcpx's types).
type Mistyped struct {
	// Path is the member below the value decoded, its names joined with
	// dots ("taskId", "meta.httpStatus"); empty for the value itself.
	Path string
	// Got is what the JSON holds ("a number"), Want what the Go value
	// takes ("a string", "an integer", "an object").
	Got, Want string
}

// MistypedOf returns the mistyped value err reports, when its chain holds
// a *json.UnmarshalTypeError.
func MistypedOf(err error) (Mistyped, bool) {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return Mistyped{}, false
	}
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
	// Value is "string", "bool", "array", "object" or "number", the last
	// sometimes with the number after it.
	word, _, _ := strings.Cut(te.Value, " ")
	got, known := map[string]string{"number": "a number", "string": "a string", "array": "an array", "object": "an object", "bool": "a boolean"}[word]
	if !known {
		got = te.Value
	}
	return Mistyped{Path: te.Field, Got: got, Want: want}, true
}

// DecodeProblem says why encoding/json did not decode JSON into a Go
// value, in JSON's terms: the member and the JSON types, not the Go ones
// encoding/json names ("its taskId is a number, not a string"; "it is not
// valid JSON").
func DecodeProblem(err error) string {
	if m, ok := MistypedOf(err); ok {
		if m.Path == "" {
			return fmt.Sprintf("it is %s, not %s", m.Got, m.Want)
		}
		return fmt.Sprintf("its %s is %s, not %s", m.Path, m.Got, m.Want)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "it is not valid JSON"
	}
	return err.Error()
}

// Kind names the JSON type of the value v begins with, with its article
// ("a string", "an object", "null"), for messages.
func Kind(v []byte) string {
	v = Trim(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
