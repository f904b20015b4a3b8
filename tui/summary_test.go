package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

func TestSummaries(t *testing.T) {
	for _, tc := range []struct{ method, params, want string }{
		{"sampling/createMessage", samplingParams, `1 message, last: "What is the capital of France?", max 100 tokens`},
		{"elicitation/create", `{"message":"Who are you?","requestedSchema":` + sep1034Schema + `,"task":{}}`, `form with 5 fields, "Who are you?" (as a task)`},
		{"elicitation/create", `{"mode":"url","url":"https://x.example/a","elicitationId":"1","message":"Go"}`, `url https://x.example/a, "Go"`},
		{"roots/list", ``, ``},
		// A long URL is cut on the line: the question shows it whole.
		{"elicitation/create", `{"mode":"url","url":"https://x.example/` + strings.Repeat("a", 100000) + `","elicitationId":"1","message":"Go"}`, `url https://x.example/` + strings.Repeat("a", 256-len("https://x.example/")) + `…, "Go"`},
		// A server's control characters are escaped once, as in an
		// elicitation's message, not \\x1b.
		{"sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"hi\u001b[2J \"there\""}}],"maxTokens":10}`, `1 message, last: "hi\x1b[2J \"there\"", max 10 tokens`},
		{"sampling/createMessage", `{"messages":[{"role":"user","content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}],"maxTokens":10}`, `1 message, last: "[image: image/png, 3 B]", max 10 tokens`},
	} {
		if got := SummarizeRequest(tc.method, json.RawMessage(tc.params)); got != tc.want {
			t.Errorf("%s request:\n got %s\nwant %s", tc.method, got, tc.want)
		}
	}
	for _, tc := range []struct {
		method, result string
		err            *jsonrpc.Error
		want           string
	}{
		{"roots/list", `{"roots":[{"uri":"file:///tmp"}]}`, nil, "1 root: file:///tmp"},
		{"sampling/createMessage", `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m","stopReason":"endTurn"}`, nil, `assistant "Paris" (model m, endTurn)`},
		{"sampling/createMessage", `{"role":"assistant","content":{"type":"text","text":"tab\there\u0007"},"model":"m"}`, nil, `assistant "tab here\a" (model m)`},
		{"sampling/createMessage", ``, &jsonrpc.Error{Code: -1, Message: "User rejected sampling request"}, `error -1: User rejected sampling request`},
		{"elicitation/create", `{"action":"accept","content":{"a":1}}`, nil, `accept {"a":1}`},
		// mcpx's message quoting a server's 100 KB method name is cut.
		{"x", ``, &jsonrpc.Error{Code: -32601, Message: "mcpx does not handle " + strings.Repeat("x", 100000)}, `error -32601: mcpx does not handle ` + strings.Repeat("x", 4096-len("mcpx does not handle ")) + `… (100021 bytes in all)`},
		{"elicitation/create", `{"task":{"taskId":"t","status":"working","createdAt":"","lastUpdatedAt":"","ttl":null}}`, nil, `created task t: working`},
	} {
		if got := SummarizeAnswer(tc.method, json.RawMessage(tc.result), tc.err); got != tc.want {
			t.Errorf("%s answer:\n got %s\nwant %s", tc.method, got, tc.want)
		}
	}
}
