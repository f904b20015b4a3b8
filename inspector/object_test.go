package inspector

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseObject(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantKeys []string
		wantOut  string
		wantErr  bool
	}{
		{"order kept", `{"z":1,"a":2,"m":3}`, []string{"z", "a", "m"}, `{"z":1,"a":2,"m":3}`, false},
		{"values kept raw", `{"n":1.50,"s":"\u00e9","o":{"b":1,"a":2}}`, []string{"n", "s", "o"}, `{"n":1.50,"s":"\u00e9","o":{"b":1,"a":2}}`, false},
		{"whitespace", " {\n \"a\" : [ 1 ] \n} ", []string{"a"}, `{"a":[ 1 ]}`, false},
		{"duplicate key keeps first position, last value", `{"a":1,"b":2,"a":3}`, []string{"a", "b"}, `{"a":3,"b":2}`, false},
		{"empty input", ``, nil, `{}`, false},
		{"empty object", `{}`, nil, `{}`, false},
		{"escaped key", `{"a\"b":1}`, []string{`a"b`}, `{"a\"b":1}`, false},
		{"array", `[1]`, nil, "", true},
		{"null", `null`, nil, "", true},
		{"string", `"x"`, nil, "", true},
		{"truncated", `{"a":1`, nil, "", true},
		{"trailing data", `{"a":1} {"b":2}`, nil, "", true},
		{"trailing garbage", `{"a":1}x`, nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ParseObject([]byte(tt.in))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseObject(%q) = %s, want an error", tt.in, o.Marshal())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantKeys, o.Keys()); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if got := string(o.Marshal()); got != tt.wantOut {
				t.Errorf("Marshal = %s, want %s", got, tt.wantOut)
			}
		})
	}
}

func TestObjectEdits(t *testing.T) {
	o, err := ParseObject([]byte(`{"a":1,"b":2,"c":3}`))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"set existing keeps position", func() { o.Set("b", json.RawMessage(`"two"`)) }, `{"a":1,"b":"two","c":3}`},
		{"set new appends", func() { o.Set("d", json.RawMessage(`[4]`)) }, `{"a":1,"b":"two","c":3,"d":[4]}`},
		{"delete middle", func() { o.Delete("b") }, `{"a":1,"c":3,"d":[4]}`},
		{"delete missing is a no-op", func() { o.Delete("nope") }, `{"a":1,"c":3,"d":[4]}`},
		{"delete first", func() { o.Delete("a") }, `{"c":3,"d":[4]}`},
		{"deleted key can come back, at the end", func() { o.Set("a", json.RawMessage(`0`)) }, `{"c":3,"d":[4],"a":0}`},
		{"empty value marshals as null", func() { o.Set("e", nil) }, `{"c":3,"d":[4],"a":0,"e":null}`},
		{"delete last", func() { o.Delete("e") }, `{"c":3,"d":[4],"a":0}`},
	}
	for _, st := range steps {
		st.do()
		if got := string(o.Marshal()); got != st.want {
			t.Fatalf("%s: %s, want %s", st.name, got, st.want)
		}
		if !json.Valid(o.Marshal()) {
			t.Fatalf("%s: invalid JSON", st.name)
		}
	}
	if !o.Has("c") || o.Has("b") || string(o.Get("d")) != "[4]" || o.Get("b") != nil {
		t.Errorf("Has/Get disagree with the edits: %s", o.Marshal())
	}
	// Keys must not alias internal state in a way Delete corrupts.
	keys := o.Keys()
	snapshot := append([]string(nil), keys...)
	o.Delete("c")
	if diff := cmp.Diff([]string{"d", "a"}, o.Keys()); diff != "" {
		t.Errorf("keys after delete (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(snapshot, keys); diff != "" {
		t.Errorf("a Keys() result taken earlier changed (-before +after):\n%s", diff)
	}
}

func TestSetMeta(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{``, `{"_meta":{"progressToken":1}}`, false},
		{`{}`, `{"_meta":{"progressToken":1}}`, false},
		{`{"a":1}`, `{"a":1,"_meta":{"progressToken":1}}`, false},
		{`{"_meta":{"x":"y"},"a":1}`, `{"_meta":{"x":"y","progressToken":1},"a":1}`, false},
		{`{"_meta":{"progressToken":"old"}}`, `{"_meta":{"progressToken":1}}`, false},
		{`[1]`, ``, true},
		{`{"_meta":5}`, ``, true},
	}
	for _, tt := range tests {
		got, err := setMeta(json.RawMessage(tt.in), "progressToken", json.RawMessage(`1`))
		if tt.wantErr != (err != nil) {
			t.Errorf("setMeta(%s) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("setMeta(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
