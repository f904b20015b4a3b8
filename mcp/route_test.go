package mcp

import (
	"encoding/json"
	"testing"
)

func TestStandardRoute(t *testing.T) {
	v := `"` + MetaProtocolVersion + `"`
	tests := []struct {
		method, params string
		want           Route
	}{
		{"tools/call", `{"name":"echo","_meta":{` + v + `:"2026-07-28"}}`, Route{ProtocolVersion: "2026-07-28", Method: "tools/call", Name: "echo"}},
		{"resources/read", `{"uri":"file:///a","_meta":{}}`, Route{Method: "resources/read", Name: "file:///a"}},
		{"tasks/get", `{"taskId":"t1"}`, Route{Method: "tasks/get", Name: "t1"}},
		{"tools/list", `{"name":"not mirrored"}`, Route{Method: "tools/list"}},
		// The last of repeated members counts; names match exactly.
		{"tools/call", `{"name":"a","name":"b","NAME":"c"}`, Route{Method: "tools/call", Name: "b"}},
		{"prompts/get", `{"name":"caf\u00e9"}`, Route{Method: "prompts/get", Name: "café"}},
		// Anything of another shape is no value.
		{"tools/call", `{"name":5,"_meta":{` + v + `:7}}`, Route{Method: "tools/call"}},
		{"tools/call", `{"name":null,"_meta":"x"}`, Route{Method: "tools/call"}},
		{"tools/call", `[1,2]`, Route{Method: "tools/call"}},
		{"tools/call", `{"name":"x"`, Route{Method: "tools/call"}},
		{"ping", ``, Route{Method: "ping"}},
	}
	for _, tt := range tests {
		if got := StandardRoute(tt.method, json.RawMessage(tt.params)); got.ProtocolVersion != tt.want.ProtocolVersion ||
			got.Method != tt.want.Method || got.Name != tt.want.Name || got.Params != nil {
			t.Errorf("StandardRoute(%s, %s) = %+v, want %+v", tt.method, tt.params, got, tt.want)
		}
	}
}
