package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDecodeProblem: a decoding failure is said with JSON's types and the
// member's name, never Go's.
func TestDecodeProblem(t *testing.T) {
	type task struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
		Meta   struct {
			Status int `json:"httpStatus"`
		} `json:"meta"`
	}
	var tk task
	var list []string
	var n int64
	for _, tt := range []struct {
		raw  string
		into any
		want string
		path string
	}{
		{`{"taskId":5}`, &tk, "its taskId is a number, not a string", "taskId"},
		{`{"taskId":"t","status":["working"]}`, &tk, "its status is an array, not a string", "status"},
		{`{"meta":{"httpStatus":"200"}}`, &tk, "its meta.httpStatus is a string, not an integer", "meta.httpStatus"},
		{`"x"`, &tk, "it is a string, not an object", ""},
		{`{"a":1}`, &list, "it is an object, not an array", ""},
		{`[1.5]`, &list, "is a number, not a string", ""},
		{`1.5`, &n, "it is a number, not an integer", ""},
		{`{`, &tk, "it is not valid JSON", ""},
	} {
		err := json.Unmarshal([]byte(tt.raw), tt.into)
		if err == nil {
			t.Fatalf("%s decoded", tt.raw)
		}
		if got := DecodeProblem(err); !strings.Contains(got, tt.want) || strings.Contains(got, "Go") || strings.Contains(got, "json:") {
			t.Errorf("%s: %q, want %q", tt.raw, got, tt.want)
		}
		if m, ok := MistypedOf(err); ok && m.Path != tt.path {
			t.Errorf("%s: path %q, want %q", tt.raw, m.Path, tt.path)
		}
	}
}

func TestKind(t *testing.T) {
	for v, want := range map[string]string{`"x"`: "a string", `-1`: "a number", `{}`: "an object", ` [1]`: "an array",
		`true`: "a boolean", `false`: "a boolean", `null`: "null", ``: "nothing"} {
		if got := Kind([]byte(v)); got != want {
			t.Errorf("Kind(%s) = %q, want %q", v, got, want)
		}
	}
}
