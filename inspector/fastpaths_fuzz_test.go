package inspector

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
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

// FuzzInitializeParams: initialize's params are the bytes json.Marshal
// writes for the map of the three, and its error for capabilities that
// are not JSON.
func FuzzInitializeParams(f *testing.F) {
	f.Add("2025-11-25", []byte(`{}`), "mcpx", "", "0.1.0+4731e6c0a1b2")
	f.Add("2025-06-18", []byte(` { "roots" : {"listChanged":true}, "x":"<\u2028>&" } `), "a<b>&\"c\"", "Title", "é\x00\xff")
	f.Add("x\u2028", []byte(`{"a":`), "n", "t", "v")
	f.Add("", []byte(`[]`), "", "", "")
	f.Fuzz(func(t *testing.T, offered string, caps []byte, name, title, version string) {
		info := Implementation{Name: name, Title: title, Version: version}
		got, err := initializeParams(offered, caps, info)
		want, werr := json.Marshal(map[string]any{"protocolVersion": offered, "capabilities": json.RawMessage(caps), "clientInfo": info})
		if (err != nil) != (werr != nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("initializeParams(%q, %q, %+v): error %v, json.Marshal's %v", offered, caps, info, err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("initializeParams(%q, %q, %+v) = %s, json.Marshal writes %s", offered, caps, info, got, want)
		}
	})
}

// initializeParams writes every field of Implementation.
func TestInitializeParamsKnowsImplementation(t *testing.T) {
	if n := reflect.TypeFor[Implementation]().NumField(); n != 3 {
		t.Fatalf("Implementation has %d fields; initializeParams writes name, title and version", n)
	}
}

// FuzzObjectMarshal: an object's members are written with their names as
// json.Marshal writes them.
func FuzzObjectMarshal(f *testing.F) {
	f.Add("a", "b<>&\u2028", "\xff\x01")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		o := &Object{vals: map[string]json.RawMessage{}}
		for i, k := range []string{a, b, c} {
			o.Set(k, json.RawMessage(strconv.Itoa(i)))
		}
		var want bytes.Buffer
		want.WriteByte('{')
		for i, k := range o.keys {
			if i > 0 {
				want.WriteByte(',')
			}
			q, _ := json.Marshal(k)
			want.Write(q)
			want.WriteByte(':')
			want.Write(o.vals[k])
		}
		want.WriteByte('}')
		if got := o.Marshal(); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("Marshal() = %s, want %s", got, want.Bytes())
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
		got, _, err := buildArguments(nil, base, nil, nil, false, false)
		want, _, werr := buildObject(nil, base, nil, nil, false, false)
		if (err != nil) != (werr != nil) {
			t.Fatalf("buildArguments(%q): error %v, the general way's %v", base, err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("buildArguments(%q) = %s, the general way writes %s", base, got, want)
		}
	})
}

// FuzzTopLevelPairs: key=value pairs of top-level names are written as
// the general way writes them, with its warnings and errors.
func FuzzTopLevelPairs(f *testing.F) {
	f.Add("message=hi", "count=3", "", true)
	f.Add("a.b=1", "c=x", "", false)
	f.Add("n=x", "n=y", "", true)
	f.Add("<k>=1", "e=", "{}", true)
	f.Add("flag=maybe", "list=[1, 2]", "", true)
	f.Add("u=1", "", " ", false)
	props := map[string]json.RawMessage{
		"message": json.RawMessage(`{"type":"string"}`),
		"count":   json.RawMessage(`{"type":"integer"}`),
		"flag":    json.RawMessage(`{"type":"boolean"}`),
		"list":    json.RawMessage(`{"type":"array","items":{"type":"number"}}`),
		"a.b":     json.RawMessage(`{"type":["number","null"]}`),
		"e":       json.RawMessage(`{"enum":["x","y"]}`),
	}
	if _, _, _, ok := buildTopLevel([]string{"message=hi", "count=3"}, nil, nil, props, true, false); !ok {
		f.Fatal("message=hi count=3 does not take the shortcut")
	}
	f.Fuzz(func(t *testing.T, p1, p2, base string, known bool) {
		pairs := []string{p1}
		if p2 != "" {
			pairs = append(pairs, p2)
		}
		got, gw, err, ok := buildTopLevel(pairs, []byte(base), nil, props, known, false)
		if !ok {
			return
		}
		want, ww, werr := buildObject(pairs, []byte(base), nil, props, known, false)
		if (err != nil) != (werr != nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("pairs %q: error %v, the general way's %v", pairs, err, werr)
		}
		if !bytes.Equal(got, want) || strings.Join(gw, "|") != strings.Join(ww, "|") {
			t.Fatalf("pairs %q = %s %q, the general way writes %s %q", pairs, got, gw, want, ww)
		}
	})
}
