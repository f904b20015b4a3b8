package inspector

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// The request path writes and reads some JSON in place instead of through
// a map or a parsed Object (issue 13). These targets hold each shortcut to
// the bytes and answers of the general way it replaces.

// FuzzNamedParams: tools/call and prompts/get params are the bytes
// json.Marshal writes for the map of name and arguments.
func FuzzNamedParams(f *testing.F) {
	f.Add("echo", []byte(`{"message":"hi"}`))
	f.Add("a<b>&\"c\"", []byte(` { "x" : "<\u2028>" , "y":[1, 2] } `))
	f.Add("é\x00\xff", []byte(``))
	f.Add("t", []byte(`{"a":`))
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		got, err := namedParams(name, args)
		m := map[string]any{"name": name}
		if len(args) > 0 {
			m["arguments"] = json.RawMessage(args)
		}
		want, werr := json.Marshal(m)
		if (err != nil) != (werr != nil) {
			t.Fatalf("namedParams(%q, %q): error %v, json.Marshal's %v", name, args, err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("namedParams(%q, %q) = %s, json.Marshal writes %s", name, args, got, want)
		}
	})
}

// FuzzSetMeta: setMeta's append for compact params writes what parsing
// and marshalling the params writes.
func FuzzSetMeta(f *testing.F) {
	f.Add([]byte(`{"arguments":{"message":"hi"},"name":"echo"}`), []byte(`5`))
	f.Add([]byte(`{}`), []byte(`"tok"`))
	f.Add([]byte(`{"a":1,"a":2}`), []byte(`1`))
	f.Add([]byte(`{"_meta":{"x":1},"b":2}`), []byte(`1`))
	f.Add([]byte(`{"a": 1}`), []byte(`1`))
	f.Add([]byte(`{"a\u0062":1,"<":2}`), []byte(`1`))
	for _, fr := range fuzzing.Frames() {
		f.Add(fr, []byte(`7`))
	}
	// The params of a tool call take the shortcut (or it saves nothing).
	for _, p := range []string{`{"arguments":{"message":"hi"},"name":"echo"}`, `{}`, `{"cursor":"x"}`} {
		if _, ok := appendMeta([]byte(p), "progressToken", []byte(`5`)); !ok {
			f.Fatalf("appendMeta(%s) does not append", p)
		}
	}
	f.Fuzz(func(t *testing.T, params, value []byte) {
		if !json.Valid(value) {
			return // setMeta is given an id's JSON
		}
		value = bytes.TrimSpace(value)
		got, ok := appendMeta(params, "progressToken", value)
		if !ok {
			return
		}
		obj, err := ParseObject(params)
		if err != nil {
			t.Fatalf("appendMeta(%q) took params ParseObject refuses: %v", params, err)
		}
		meta, err := ParseObject(obj.Get("_meta"))
		if err != nil {
			t.Fatal(err)
		}
		meta.Set("progressToken", value)
		obj.Set("_meta", meta.Marshal())
		if want := obj.Marshal(); !bytes.Equal(got, want) {
			t.Fatalf("appendMeta(%q, %q) = %s, parse and marshal write %s", params, value, got, want)
		}
	})
}

// FuzzDeclares: reading capabilities in place answers what parsing each
// level into an Object answers.
func FuzzDeclares(f *testing.F) {
	f.Add([]byte(`{"tools":{"listChanged":true},"resources":{"subscribe":false}}`), "tools", "listChanged")
	f.Add([]byte(`{"tools":{},"tools":null}`), "tools", "")
	f.Add([]byte(`{"t\u006fols":{"x":1}}`), "tools", "x")
	f.Add([]byte(`{"a":{"b":true},"a":{"c":true}}`), "a", "b")
	f.Add([]byte(` {"a" : [1]} `), "a", "")
	f.Add([]byte(`true`), "a", "")
	f.Fuzz(func(t *testing.T, caps []byte, first, second string) {
		path := []string{first}
		if second != "" {
			path = append(path, second)
		}
		info := &ServerInfo{Capabilities: caps}
		want := func() bool {
			raw := json.RawMessage(caps)
			for _, name := range path {
				obj, err := ParseObject(raw)
				if err != nil || !obj.Has(name) {
					return false
				}
				raw = obj.Get(name)
			}
			return string(raw) != "null" && string(raw) != "false"
		}()
		if got := info.Declares(path...); got != want {
			t.Fatalf("Declares(%q) of %s = %v, parsing each level says %v", path, caps, got, want)
		}
	})
}

// FuzzPlainArguments: --args alone is sent as parsing and marshalling it
// writes it.
func FuzzPlainArguments(f *testing.F) {
	f.Add([]byte(`{"message":"hi"}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`{"a": [1, 2],"b":{ }}`))
	f.Add([]byte(` {"a":1}`))
	f.Add([]byte(`{"<":1}`))
	f.Fuzz(func(t *testing.T, base []byte) {
		got, _, err := buildArguments(nil, base, nil, false)
		obj, perr := ParseObject(base)
		if (err != nil) != (perr != nil) {
			t.Fatalf("buildArguments(%q): error %v, ParseObject's %v", base, err, perr)
		}
		if err == nil && !bytes.Equal(got, obj.Marshal()) {
			t.Fatalf("buildArguments(%q) = %s, parse and marshal write %s", base, got, obj.Marshal())
		}
	})
}
