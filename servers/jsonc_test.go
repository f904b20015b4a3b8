package servers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
)

var jsoncSeeds = []string{
	`{"mcpServers": {"a": {"command": "x", "args": ["y", 1, 2.5e3, true, null]}}}`,
	"{\n  // a comment\n  \"mcpServers\": {\"a\": {\"url\": \"https://x//y\",},}, /* and\n another */\n}",
	`{"a": 1, "a": {"b": [{}, [], "\"\\"]}, "": "\u00e9"}`,
	`{"$schema": "s", "mcpServers": {"x": {"command": "old"}, "x": {"command": "older"}}}`,
	`[1, 2,]`, `"s"`, `{"a": }`, `{} /*`, ``,
}

// decodeAny decodes one JSON value as encoding/json does into an any,
// numbers kept as their text (1e1000 is JSON, though no float64).
func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the value (%v)", err)
	}
	return v, nil
}

// Whatever the input, parseJSONC agrees with encoding/json on what std
// holds, and every node it notes is the text of its value.
func FuzzParseJSONC(f *testing.F) {
	for _, s := range jsoncSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		std, root, err := parseJSONC([]byte(content))
		if err != nil {
			return
		}
		if len(std) != len(content) {
			t.Fatalf("std is %d bytes, the input %d", len(std), len(content))
		}
		var check func(n *jsonNode)
		check = func(n *jsonNode) {
			text := std[n.start:n.end]
			v, err := decodeAny(text)
			if err != nil {
				t.Fatalf("node %q: %v", text, err)
			}
			obj, isObj := v.(map[string]any)
			if isObj != n.object {
				t.Fatalf("node %q: object %v", text, n.object)
			}
			if !isObj {
				return
			}
			last := map[string]*jsonNode{}
			for i := range n.members {
				m := &n.members[i]
				var name string
				if err := json.Unmarshal(std[m.nameStart:m.nameEnd], &name); err != nil || name != m.name {
					t.Fatalf("member %q: name %q", std[m.nameStart:m.nameEnd], m.name)
				}
				last[m.name] = &m.value
				check(&m.value)
			}
			if len(last) != len(obj) {
				t.Fatalf("node %q: members %d, want %d", text, len(last), len(obj))
			}
			for name, vn := range last {
				got, _ := decodeAny(std[vn.start:vn.end])
				if !reflect.DeepEqual(got, obj[name]) {
					t.Fatalf("node %q: member %q is %v, want %v", text, name, got, obj[name])
				}
			}
		}
		check(&root)
	})
}

// Whatever mcpx's file holds, Add either leaves it as it was or changes
// only the entry it writes.
func FuzzAdd(f *testing.F) {
	for _, s := range jsoncSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		path := filepath.Join(t.TempDir(), "servers.json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		err := Add(context.Background(), path, "x", &Server{Transport: TransportStdio, Command: "new"}, true)
		out, _ := os.ReadFile(path)
		if err != nil {
			if string(out) != content {
				t.Fatalf("%v, yet the file changed:\n%s", err, out)
			}
			var ce *CommentsError
			std, _, perr := parseJSONC([]byte(content))
			if perr == nil && (errors.As(err, &ce) != (commentLine([]byte(content), std) > 0)) {
				t.Fatalf("comments: %v", err)
			}
			return
		}
		var before, after map[string]any
		std, _, _ := parseJSONC([]byte(content))
		if err := json.Unmarshal(std, &before); err != nil {
			t.Fatalf("added to a file that is not an object: %v", err)
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("wrote invalid JSON: %v\n%s", err, out)
		}
		servers, _ := before["mcpServers"].(map[string]any)
		if servers == nil {
			servers = map[string]any{}
		}
		servers["x"] = map[string]any{"type": "stdio", "command": "new"}
		before["mcpServers"] = servers
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("from\n%s\nwrote\n%s", content, out)
		}
	})
}

// TestLoadBOM: a file saved by Notepad starts with a UTF-8 byte order
// mark, which VS Code and the other applications read past. mcpx said
// "not valid JSON: invalid character 'ï' looking for beginning of value"
// and read no server from it; servers add refused mcpx's own file so.
// Now it is read, and servers add rewrites the file (without the mark).
func TestLoadBOM(t *testing.T) {
	ctx := context.Background()
	env, _ := osEnv(t)
	path, err := OwnFile(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, path, "\xef\xbb\xbf{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}")
	write(t, filepath.Join(env.Workspace, ".mcp.json"), "\xef\xbb\xbf{\n  \"mcpServers\": {\n    \"b\": {\"command\": \"y\"}}}")
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	if len(c.Servers) != 2 || c.Servers[0].Name != "a" || c.Servers[1].Name != "b" || c.Servers[1].Line != 3 {
		t.Fatalf("servers = %+v, want a and b (line 3)", c.Servers)
	}
	if err := Add(ctx, path, "c", &Server{Transport: TransportStdio, Command: "z"}, false); err != nil {
		t.Fatal(err)
	}
	if c := load(t, env); len(c.Servers) != 3 {
		t.Errorf("after add: %d servers, want 3", len(c.Servers))
	}
}

// TestLoadLargeClaudeJSON: ~/.claude.json keeps every project's history,
// tens of megabytes of it. It is two locations (user and local scope),
// and was read and parsed twice, noting every member of every object:
// a 55 MB file took 4 s and 900 MB of allocations to list two servers.
// It is parsed once now, noting only the members a location can reach.
func TestLoadLargeClaudeJSON(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"mcpServers": {"user": {"command": "u"}}, "projects": {`)
	for i := range 3000 {
		fmt.Fprintf(&b, `"/p/%d": {"history": [`, i)
		for j := range 20 {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"display": "a prompt of some length, as people write them", "pastedContents": {}}`)
		}
		b.WriteString(`], "mcpServers": {}},`)
	}
	b.WriteString(`"/home/ada/proj": {"mcpServers": {"local": {"command": "l"}}}}}`)
	env := linuxEnv(mapFS{"/home/ada/.claude.json": b.String()}, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := load(t, env)
	runtime.ReadMemStats(&after)
	checkWarnings(t, c.Warnings)
	var refs []string
	for _, s := range c.Servers {
		refs = append(refs, s.Ref())
	}
	diff(t, []string{"claude-code-local:local", "claude-code:user"}, refs)
	// The text, its standard form, and a little.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(4*b.Len()); got > limit {
		t.Errorf("loading a %d-byte ~/.claude.json allocated %d bytes, want at most %d", b.Len(), got, limit)
	}
}
