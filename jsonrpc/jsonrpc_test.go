package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// msgView is the part of a Message the decoding tests compare.
type msgView struct {
	Kind     string // request, notification, response, invalid
	ID       string
	Method   string
	Params   string
	Result   string
	Error    *Error
	ErrorRaw string
	Problems []string // words each problem must contain, in order
}

func view(m *Message) msgView {
	return msgView{Kind: m.Kind().String(), ID: m.ID.String(), Method: m.Method, Params: string(m.Params), Result: string(m.Result),
		Error: m.Error, ErrorRaw: string(m.ErrorRaw)}
}

func TestDecodeFrame(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      []msgView
		wantBatch bool
		wantErr   string
	}{
		{
			name: "request",
			in:   `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
			want: []msgView{{Kind: "request", ID: "1", Method: "ping"}},
		},
		{
			name: "request with string id and params, surrounding space",
			in:   "  {\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"roots/list\",\"params\":{\"x\": 1}}\r",
			want: []msgView{{Kind: "request", ID: `"abc"`, Method: "roots/list", Params: `{"x": 1}`}},
		},
		{
			name: "notification",
			in:   `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`,
			want: []msgView{{Kind: "notification", Method: "notifications/message", Params: `{"level":"info"}`}},
		},
		{
			name: "result",
			in:   `{"jsonrpc":"2.0","id":-3,"result":{"b":2,"a":1}}`,
			want: []msgView{{Kind: "response", ID: "-3", Result: `{"b":2,"a":1}`}},
		},
		{
			name: "error",
			in:   `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"nope","data":[1]}}`,
			want: []msgView{{Kind: "response", ID: "2", Error: &Error{Code: -32601, Message: "nope", Data: json.RawMessage(`[1]`)},
				ErrorRaw: `{"code":-32601,"message":"nope","data":[1]}`}},
		},
		{
			name: "error with null id",
			in:   `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
			want: []msgView{{Kind: "response", ID: "null", Error: &Error{Code: -32700, Message: "parse"}, ErrorRaw: `{"code":-32700,"message":"parse"}`}},
		},
		{
			name:      "batch",
			in:        `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"}]`,
			wantBatch: true,
			want:      []msgView{{Kind: "response", ID: "1", Result: "{}"}, {Kind: "notification", Method: "n"}},
		},
		{name: "empty batch", in: ` [ ] `, wantBatch: true, wantErr: "empty batch"},
		{name: "invalid JSON", in: `{"jsonrpc":`, wantErr: "not valid JSON"},
		{name: "two values", in: `{} {}`, wantErr: "not valid JSON"},
		{name: "too deep", in: `{"id":1,"method":"m","params":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, wantErr: "nested deeper than the 10000 levels mcpx reads"},
		{name: "brackets in a string, unended", in: `{"x":"` + strings.Repeat("[", 20000) + `"`, wantErr: "not valid JSON"},
		{name: "empty", in: "", wantErr: "empty"},
		{name: "blank", in: " \t\r", wantErr: "empty"},
		{
			name: "missing jsonrpc",
			in:   `{"id":1,"result":{}}`,
			want: []msgView{{Kind: "response", ID: "1", Result: "{}", Problems: []string{`"jsonrpc": "2.0"`}}},
		},
		{
			name: "wrong jsonrpc version",
			in:   `{"jsonrpc":"1.0","method":"x"}`,
			want: []msgView{{Kind: "notification", Method: "x", Problems: []string{`"jsonrpc" must be "2.0", not "1.0"`}}},
		},
		{
			name: "jsonrpc a number",
			in:   `{"jsonrpc":2.0,"method":"x"}`,
			want: []msgView{{Kind: "notification", Method: "x", Problems: []string{`"jsonrpc" must be "2.0", not 2.0`}}},
		},
		{
			name: "jsonrpc a long string",
			in:   `{"jsonrpc":"` + strings.Repeat("é", 100) + `","method":"x"}`,
			want: []msgView{{Kind: "notification", Method: "x", Problems: []string{`"jsonrpc" must be "2.0", not "` + strings.Repeat("é", 19) + `…`}}},
		},
		{
			name: "id twice",
			in:   `{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
			want: []msgView{{Kind: "response", ID: "2", Result: "{}", Problems: []string{`member "id" appears more than once; the last is read`}}},
		},
		{
			name: "method twice, differing in case",
			in:   `{"jsonrpc":"2.0","method":"a","Method":"b"}`,
			want: []msgView{{Kind: "notification", Method: "b", Problems: []string{`member "method" appears more than once`}}},
		},
		{
			name: "fractional id",
			in:   `{"jsonrpc":"2.0","id":1.5,"result":{}}`,
			want: []msgView{{Kind: "response", ID: "1.5", Result: "{}", Problems: []string{"id must be a string or an integer, got 1.5"}}},
		},
		{
			name: "boolean id",
			in:   `{"jsonrpc":"2.0","id":true,"method":"ping"}`,
			want: []msgView{{Kind: "request", ID: "true", Method: "ping", Problems: []string{"id must be"}}},
		},
		{
			name: "null id on a request",
			in:   `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
			want: []msgView{{Kind: "request", ID: "null", Method: "ping", Problems: []string{"id must be"}}},
		},
		{
			name: "id beyond int64",
			in:   `{"jsonrpc":"2.0","id":99999999999999999999,"result":{}}`,
			want: []msgView{{Kind: "response", ID: "99999999999999999999", Result: "{}", Problems: []string{"id must be"}}},
		},
		{
			name: "result and error",
			in:   `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
			want: []msgView{{Kind: "response", ID: "1", Result: "{}", Error: &Error{Code: 1, Message: "m"}, ErrorRaw: `{"code":1,"message":"m"}`, Problems: []string{"both result and error"}}},
		},
		{
			name: "neither",
			in:   `{"jsonrpc":"2.0","id":1}`,
			want: []msgView{{Kind: "response", ID: "1", Problems: []string{"neither"}}},
		},
		{
			name: "response without id",
			in:   `{"jsonrpc":"2.0","result":{}}`,
			want: []msgView{{Kind: "response", Result: "{}", Problems: []string{"without an id"}}},
		},
		{
			name: "malformed error member",
			in:   `{"jsonrpc":"2.0","id":1,"error":"oops"}`,
			want: []msgView{{Kind: "response", ID: "1", Error: &Error{Code: CodeInternalError, Message: `malformed error: "oops"`}, ErrorRaw: `"oops"`, Problems: []string{"error member"}}},
		},
		{
			name: "not an object",
			in:   `42`,
			want: []msgView{{Kind: "invalid", Problems: []string{"not a JSON object"}}},
		},
		{
			name: "null",
			in:   `null`,
			want: []msgView{{Kind: "invalid", Problems: []string{"not a JSON object"}}},
		},
		{
			name: "method of another type",
			in:   `{"jsonrpc":"2.0","id":1,"method":5}`,
			want: []msgView{{Kind: "invalid", ID: "1", Problems: []string{`"method" must be a string, not a number (5)`}}},
		},
		{
			name: "empty object",
			in:   `{}`,
			want: []msgView{{Kind: "invalid", Problems: []string{`"jsonrpc": "2.0"`, "neither", "without an id"}}},
		},
		{
			name: "byte order mark",
			in:   "\uFEFF{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
			want: []msgView{{Kind: "response", ID: "1", Result: "{}", Problems: []string{"byte order mark"}}},
		},
		{
			name:      "byte order mark before a batch",
			in:        "\uFEFF [{\"jsonrpc\":\"2.0\",\"method\":\"n\"},{\"id\":2,\"result\":1}]",
			wantBatch: true,
			want: []msgView{
				{Kind: "notification", Method: "n", Problems: []string{"byte order mark"}},
				{Kind: "response", ID: "2", Result: "1", Problems: []string{`"jsonrpc": "2.0"`, "byte order mark"}},
			},
		},
		{name: "byte order mark alone", in: "\uFEFF\r", wantErr: "empty"},
		{name: "byte order mark before no JSON", in: "\uFEFFStarting", wantErr: "not valid JSON"},
		{
			name:      "batch with a non-object",
			in:        `[null,"x",{"jsonrpc":"2.0","method":"n"}]`,
			wantBatch: true,
			want: []msgView{
				{Kind: "invalid", Problems: []string{"not a JSON object"}},
				{Kind: "invalid", Problems: []string{"not a JSON object"}},
				{Kind: "notification", Method: "n"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, batch, err := DecodeFrame([]byte(tt.in))
			if batch != tt.wantBatch {
				t.Errorf("batch = %v, want %v", batch, tt.wantBatch)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []msgView
			for i, m := range msgs {
				v := view(m)
				// Problems: check the words, then compare the rest.
				var want []string
				if i < len(tt.want) {
					want = tt.want[i].Problems
				}
				if len(m.Problems) != len(want) {
					t.Errorf("message %d problems = %q, want %d matching %q", i, m.Problems, len(want), want)
				} else {
					for j := range want {
						if !strings.Contains(m.Problems[j], want[j]) {
							t.Errorf("message %d problem %q lacks %q", i, m.Problems[j], want[j])
						}
					}
				}
				v.Problems = want
				got = append(got, v)
				if !json.Valid(m.Raw) {
					t.Errorf("message %d Raw %q is not the message's JSON", i, m.Raw)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			frame := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(tt.in), "\uFEFF"))
			if !batch && len(msgs) == 1 && string(msgs[0].Raw) != frame {
				t.Errorf("Raw = %q, want the frame's bytes %q", msgs[0].Raw, frame)
			}
		})
	}
}

func TestIDKey(t *testing.T) {
	tests := []struct {
		a, b        string
		same, loose bool
	}{
		{`1`, `1`, true, true},
		{`1`, `"1"`, false, true},
		{`"x"`, `"x"`, true, true},
		{`"ab"`, `"a\u0062"`, true, true},
		{`" 1"`, `"1"`, false, false},
		{`-5`, `-5`, true, true},
		{`-12`, `"-12"`, false, true},
		{`10`, `1`, false, false},
		{`"n:1"`, `1`, false, false},
		{` 7 `, `7`, true, true},
	}
	for _, tt := range tests {
		a, b := RawID([]byte(tt.a)), RawID([]byte(tt.b))
		if (a.Key() == b.Key()) != tt.same {
			t.Errorf("Key(%s)=%q, Key(%s)=%q: same = %v, want %v", tt.a, a.Key(), tt.b, b.Key(), a.Key() == b.Key(), tt.same)
		}
		if (a.LooseKey() == b.LooseKey()) != tt.loose {
			t.Errorf("LooseKey(%s)=%q, LooseKey(%s)=%q: same = %v, want %v", tt.a, a.LooseKey(), tt.b, b.LooseKey(), a.LooseKey() == b.LooseKey(), tt.loose)
		}
	}
	if k := (ID{}).Key(); k != "" {
		t.Errorf("the absent id has key %q", k)
	}
	if Int(7).Key() != RawID([]byte("7")).Key() || String("7").Key() != RawID([]byte(`"7"`)).Key() {
		t.Error("Int and String do not make the ids they name")
	}
	for _, tt := range []struct {
		id    ID
		valid bool
	}{{Int(1), true}, {String("a"), true}, {RawID([]byte("1.5")), false}, {RawID([]byte("null")), false}, {ID{}, false},
		{RawID([]byte("99999999999999999999")), false}, {RawID([]byte("true")), false}} {
		if tt.id.Valid() != tt.valid {
			t.Errorf("%q: Valid = %v", tt.id, !tt.valid)
		}
	}
}

// IntegerValue reads the integer a number written with a fraction or an
// exponent equals, and nothing else: not an integer as written (its Key
// is exact already), a string, a value with a fraction, one beyond int64,
// nor an exponent that would have it build a huge number.
func TestIDIntegerValue(t *testing.T) {
	tests := []struct {
		raw  string
		want string // "" for none
	}{
		{`3.0`, `3`}, {`3e0`, `3`}, {`3E+0`, `3`}, {`0.3e1`, `3`}, {`30e-1`, `3`}, {`-7.000`, `-7`},
		{`0.0`, `0`}, {`-0.0`, `0`}, {`1.5e3`, `1500`}, {`9223372036854775807.0`, `9223372036854775807`},
		{`3`, ``}, {`-3`, ``}, {`"3.0"`, ``}, {`3.5`, ``}, {`35e-1`, ``}, {`1e19`, ``}, {`9223372036854775808.0`, ``},
		{`1e999`, ``}, {`1e99999999`, ``}, {`3.`, ``}, {`.3e1`, ``}, {`3e`, ``}, {`null`, ``}, {`true`, ``}, {`{"a":1}`, ``},
		{`0.00001e5`, `1`}, {`5e-400`, ``},
	}
	for _, tt := range tests {
		got, ok := RawID([]byte(tt.raw)).IntegerValue()
		if ok != (tt.want != "") || ok && got.String() != tt.want {
			t.Errorf("IntegerValue(%s) = %s, %v; want %q", tt.raw, got, ok, tt.want)
		}
	}
}

func TestEncodeFrames(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"request", EncodeRequest(Int(3), "tools/list", json.RawMessage(`{"cursor":"c"}`)), `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c"}}`},
		{"request without params", EncodeRequest(Int(4), "ping", nil), `{"jsonrpc":"2.0","id":4,"method":"ping"}`},
		{"method needing escapes", EncodeRequest(Int(5), "a\"b\n", nil), `{"jsonrpc":"2.0","id":5,"method":"a\"b\n"}`},
		{"notification", EncodeNotification("notifications/initialized", nil), `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"result", EncodeResponse(String("s"), json.RawMessage(`{"a":1}`), nil), `{"jsonrpc":"2.0","id":"s","result":{"a":1}}`},
		{"empty result", EncodeResponse(Int(1), nil, nil), `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"error", EncodeResponse(Int(2), nil, &Error{Code: -32601, Message: "m"}), `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m"}}`},
		{"error for an unreadable id", EncodeResponse(ID{}, nil, &Error{Code: -32600, Message: "m"}), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Errorf("got  %s\nwant %s", tt.got, tt.want)
			}
			msgs, _, err := DecodeFrame(tt.got)
			if err != nil || len(msgs) != 1 || len(msgs[0].Problems) > 0 && !strings.Contains(tt.name, "unreadable") {
				t.Errorf("encoded frame does not decode cleanly: %v %v", err, msgs)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	for e, want := range map[*Error]string{
		{Code: CodeMethodNotFound, Message: "x"}:             "server error -32601 (method not found): x",
		{Code: 12345, Message: "custom"}:                     "server error 12345: custom",
		{Code: -32999, Message: "y", Name: "named above"}:    "server error -32999 (named above): y",
		{Code: CodeInvalidParams, Message: "z", Name: "own"}: "server error -32602 (own): z",
		{Code: 5}:                 "server error 5: (no message)",
		{Code: CodeInternalError}: "server error -32603 (internal error): (no message)",
	} {
		if s := e.Error(); s != want {
			t.Errorf("got %q, want %q", s, want)
		}
		if s := e.Error(); !strings.Contains(s, e.Message) || !strings.Contains(s, itoa(e.Code)) {
			t.Errorf("%q lacks code or message", s)
		}
	}
	// A message of any length is one line for a person: cut, with its
	// length said.
	long := &Error{Code: 1, Message: strings.Repeat("é", 200<<10)}
	if s := long.Error(); len(s) > 5<<10 || !strings.HasSuffix(s, "… (409600 bytes in all)") || !strings.HasPrefix(s, "server error 1: éé") {
		t.Errorf("a 400 KB message: %d bytes, ending %q", len(s), s[max(0, len(s)-40):])
	}
	if b, _ := json.Marshal(&Error{Code: 1, Message: "m", Name: "n"}); string(b) != `{"code":1,"message":"m"}` {
		t.Errorf("the name is sent: %s", b)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// An id of any size (an object, a long string) is quoted in a problem, and
// by ID.Excerpt, cut short: the warning that says it stays one line.
func TestLongIDIsCutShortInProblems(t *testing.T) {
	long := `{"k":"` + strings.Repeat("k", 100000) + `"}`
	msgs, _, err := DecodeFrame([]byte(`{"jsonrpc":"2.0","id":` + long + `,"method":"ping"}`))
	if err != nil || len(msgs) != 1 {
		t.Fatalf("DecodeFrame: %v, %d messages", err, len(msgs))
	}
	m := msgs[0]
	if m.ID.String() != long {
		t.Errorf("the id is not kept whole: %d bytes", len(m.ID.String()))
	}
	if len(m.Problems) != 1 || !strings.HasPrefix(m.Problems[0], `id must be a string or an integer, got {"k":"kkk`) || len(m.Problems[0]) > 200 {
		t.Errorf("Problems = %.300q", m.Problems)
	}
	if e := m.ID.Excerpt(); !strings.HasSuffix(e, "…") || len(e) > 100 {
		t.Errorf("Excerpt() = %q", e)
	}
	if e := Int(7).Excerpt(); e != "7" {
		t.Errorf("Int(7).Excerpt() = %q", e)
	}
}
