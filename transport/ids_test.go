package transport

import (
	"slices"
	"testing"
)

// TestFrameIDs pins what the transport follows streams by: the ids of a
// frame's requests and responses (a batch element that is not a message
// hides none of its neighbours), compared loosely so that a server that
// answers 7 with "7" still settles the request.
func TestFrameIDs(t *testing.T) {
	tests := []struct {
		frame     string
		req, resp []string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, []string{"7"}, nil},
		{`{"jsonrpc":"2.0","id":"7","result":{}}`, nil, []string{"7"}},
		{`{"jsonrpc":"2.0","id":"a\u0062","error":{"code":1,"message":"m"}}`, nil, []string{"ab"}},
		{`[{"jsonrpc":"2.0","id":1,"method":"a"},5,{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"method":"b"}]`, []string{"1", "2"}, nil},
		{`[{"jsonrpc":"2.0","id":1,"result":{}},[],{"jsonrpc":"2.0","id":"x","result":{}}]`, nil, []string{"1", "x"}},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil, nil},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`, nil, nil},
		{`{"jsonrpc":"2.0","id":3,"method":5}`, nil, nil},
		{`{"ID":4,"METHOD":"x"}`, []string{"4"}, nil},
		{`not json`, nil, nil},
	}
	for _, tt := range tests {
		if got := requestIDs([]byte(tt.frame)); !slices.Equal(got, tt.req) {
			t.Errorf("requestIDs(%s) = %q, want %q", tt.frame, got, tt.req)
		}
		if got := responseIDs([]byte(tt.frame)); !slices.Equal(got, tt.resp) {
			t.Errorf("responseIDs(%s) = %q, want %q", tt.frame, got, tt.resp)
		}
	}
}
