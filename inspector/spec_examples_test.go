package inspector

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// specDir finds the 2026-07-28 spec beside the repository: the first
// ancestor of the working directory that has shared/spec/2026-07-28.
func specDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "spec", "2026-07-28")
		if st, err := os.Stat(filepath.Join(p, "examples")); err == nil && st.IsDir() {
			return p
		}
		if filepath.Dir(d) == d {
			t.Skip("the 2026-07-28 spec (a sibling shared/spec/2026-07-28) is not present")
		}
	}
}

// defRef finds the $defs entries a schema refers to.
var defRef = regexp.MustCompile(`"#/\$defs/([^"]+)"`)

// specSchemas reads the spec's schema.json; def returns the schema of one
// $defs entry (compiled once), nil when there is none.
func specSchemas(t *testing.T, dir string) func(name string) *Schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	compiled := map[string]*Schema{}
	return func(name string) *Schema {
		if _, ok := doc.Defs[name]; !ok {
			return nil
		}
		if s, ok := compiled[name]; ok {
			return s
		}
		// Only the definitions the type reaches through $ref: compiling
		// all of them for each of the ~90 types took seconds.
		reach := map[string]json.RawMessage{}
		for todo := []string{name}; len(todo) > 0; {
			n := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			if _, seen := reach[n]; seen {
				continue
			}
			reach[n] = doc.Defs[n]
			for _, m := range defRef.FindAllSubmatch(doc.Defs[n], -1) {
				todo = append(todo, string(m[1]))
			}
		}
		defs, err := json.Marshal(reach)
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := json.Marshal("#/$defs/" + name)
		s, err := compileSchema(json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":`+string(ref)+`,"$defs":`+string(defs)+`}`), false)
		if err != nil {
			t.Fatalf("compiling $defs/%s: %v", name, err)
		}
		compiled[name] = s
		return s
	}
}

// TestSpecExamples decodes every example message of the 2026-07-28 spec
// with mcpx's own code and encodes it again: JSON-RPC messages through
// jsonrpc.DecodeFrame and the frame encoders the session uses, every other example
// through the ordered Object that params and results pass through. The
// result must be the same JSON value, and valid against the spec's schema
// for its type. Types mcpx interprets also go through their parsers.
func TestSpecExamples(t *testing.T) {
	dir := specDir(t)
	def := specSchemas(t, dir)
	files, err := filepath.Glob(filepath.Join(dir, "examples", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	sort.Strings(files)
	for _, file := range files {
		typ := filepath.Base(filepath.Dir(file))
		t.Run(typ+"/"+strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			orig, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			again := reencode(t, orig)
			if !jsonEqual(t, orig, again) {
				t.Fatalf("re-encoding changed the example:\n%s\nbecame\n%s", orig, again)
			}
			if s := def(typ); s != nil {
				if err := s.Validate(again); err != nil {
					t.Errorf("re-encoded %s is not a valid %s: %v", file, typ, err)
				}
			}
			interpret(t, typ, again)
		})
	}
}

// reencode decodes raw the way mcpx receives or sends it and encodes it
// again.
func reencode(t *testing.T, raw []byte) []byte {
	t.Helper()
	obj, err := ParseObject(raw)
	if err != nil {
		// Schemas for scalar values and the like: JSON in, JSON out.
		c, err := compactJSON(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if !obj.Has("jsonrpc") {
		return obj.Marshal()
	}
	msgs, batch, err := jsonrpc.DecodeFrame(raw)
	if err != nil || batch || len(msgs) != 1 {
		t.Fatalf("jsonrpc.DecodeFrame: %v (batch %v, %d messages)", err, batch, len(msgs))
	}
	m := msgs[0]
	if len(m.Problems) > 0 {
		t.Fatalf("the example departs from JSON-RPC: %v", m.Problems)
	}
	params := reobject(t, m.Params)
	switch {
	case m.IsRequest():
		return jsonrpc.EncodeRequest(m.ID, m.Method, params)
	case m.IsNotification():
		return jsonrpc.EncodeNotification(m.Method, params)
	}
	if m.Error != nil {
		return jsonrpc.EncodeResponse(m.ID, nil, m.Error)
	}
	return jsonrpc.EncodeResponse(m.ID, reobject(t, m.Result), nil)
}

// reobject passes an object through Object, as Decorate and the MRTR
// retries do.
func reobject(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	obj, err := ParseObject(raw)
	if err != nil {
		t.Fatalf("not an object: %s", raw)
	}
	return obj.Marshal()
}

// interpret runs the parsers mcpx has for the example's type.
func interpret(t *testing.T, typ string, raw []byte) {
	t.Helper()
	payload := json.RawMessage(raw)
	// For whole messages, look at their params, result or error.
	var msg struct {
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if strings.HasSuffix(typ, "Response") || strings.HasSuffix(typ, "Request") || strings.HasSuffix(typ, "Notification") || strings.HasSuffix(typ, "Error") {
		if err := json.Unmarshal(raw, &msg); err != nil {
			t.Fatal(err)
		}
	}
	switch typ {
	case "DiscoverResult", "DiscoverResultResponse":
		if msg.Result != nil {
			payload = msg.Result
		}
		d, err := ParseDiscoverResult(payload)
		if err != nil {
			t.Fatal(err)
		}
		m := &Modern{}
		if err := m.adopt(d, payload); err != nil {
			t.Fatal(err)
		}
		if info := m.Server(); info.Implementation.Name == "" || len(info.SupportedVersions) == 0 || d.TTLMs == nil {
			t.Errorf("discover result not understood: %+v", info)
		}
	case "InputRequiredResult":
		ir, err := ParseInputRequired(payload)
		if err != nil {
			t.Fatal(err)
		}
		var want struct {
			RequestState *string `json:"requestState"`
		}
		_ = json.Unmarshal(payload, &want)
		if want.RequestState != nil {
			var got string
			if err := json.Unmarshal(ir.RequestState, &got); err != nil || got != *want.RequestState {
				t.Errorf("requestState %s, want %q", ir.RequestState, *want.RequestState)
			}
		}
		for k, r := range ir.InputRequests {
			if inputMethod(r) == "(no method)" {
				t.Errorf("input request %q has no method", k)
			}
		}
	case "SubscriptionsListenRequest":
		var p struct {
			Notifications ListenFilter `json:"notifications"`
		}
		if err := json.Unmarshal(msg.Params, &p); err != nil || p.Notifications.Empty() {
			t.Fatalf("filter not understood: %s (%v)", msg.Params, err)
		}
		out, _ := json.Marshal(p.Notifications)
		var orig struct {
			Notifications json.RawMessage `json:"notifications"`
		}
		_ = json.Unmarshal(msg.Params, &orig)
		if !jsonEqual(t, out, orig.Notifications) {
			t.Errorf("filter re-encoded as %s, want %s", out, orig.Notifications)
		}
		if ResultType(msg.Params) != mcp.ResultComplete {
			t.Error("params without resultType must read as complete")
		}
	case "SubscriptionsAcknowledgedNotification":
		if subscriptionID(msg.Params) == "" {
			t.Error("no subscription id found")
		}
	case "SubscriptionsListenResult", "SubscriptionsListenResultResponse":
		if msg.Result != nil {
			payload = msg.Result
		}
		if ResultType(payload) != mcp.ResultComplete || subscriptionID(payload) == "" {
			t.Errorf("listen result not understood: %s", payload)
		}
	case "UnsupportedProtocolVersionError":
		uv := unsupportedVersion(msg.Error)
		if len(uv.Supported) == 0 || uv.Requested == "" || !isModernError(msg.Error) {
			t.Errorf("error data not understood: %+v", uv)
		}
		if commonModern(uv.Supported) != mcp.LatestModernVersion {
			t.Errorf("no modern version picked from %v", uv.Supported)
		}
	case "MissingRequiredClientCapabilityError":
		e := missingCapability(msg.Error, msg.Error)
		if !strings.Contains(e.Error(), "needs the client capabilities") {
			t.Errorf("missing capabilities not named: %v", e)
		}
	case "HeaderMismatchError":
		if mcp.CodeName(msg.Error.Code) != "HeaderMismatch" {
			t.Errorf("code %d not named", msg.Error.Code)
		}
	case "Tool":
		var tool struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		_ = json.Unmarshal(payload, &tool)
		if _, err := mcp.ToolHeaderParams(tool.InputSchema); err != nil {
			t.Errorf("x-mcp-header check rejected a valid tool: %v", err)
		}
	case "ReadResourceResult", "ReadResourceResultResponse":
		if msg.Result != nil {
			payload = msg.Result
		}
		if _, err := DecodeContents(payload); err != nil {
			t.Fatal(err)
		}
	case "ElicitRequestFormParams":
		var p struct {
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}
		_ = json.Unmarshal(payload, &p)
		if _, err := ParseForm(p.RequestedSchema); err != nil {
			t.Fatal(err)
		}
	}
}
