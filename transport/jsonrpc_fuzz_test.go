package transport

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// FuzzJSONRPCFrame checks the transport's id extraction (envelopes,
// requestIDs, responseIDs), which decides when a stream has delivered every
// response it owes, against the reference decoding of internal/fuzzing,
// shared with inspector's and record's targets of the same name: a frame's
// requests and responses are those the reference finds, element by element
// in a batch, with ids normalised by idString.
func FuzzJSONRPCFrame(f *testing.F) {
	for _, s := range fuzzing.Frames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ref, _, _ := fuzzing.Decode(data)
		var wantReq, wantResp []string
		for _, m := range ref {
			if id, ok := m.RequestID(); ok {
				wantReq = append(wantReq, idString(id))
			}
			if id, ok := m.Answers(); ok {
				wantResp = append(wantResp, idString(id))
			}
		}
		if got := requestIDs(data); !slices.Equal(got, wantReq) {
			t.Fatalf("requestIDs(%q) = %q, want %q", data, got, wantReq)
		}
		if got := responseIDs(data); !slices.Equal(got, wantResp) {
			t.Fatalf("responseIDs(%q) = %q, want %q", data, got, wantResp)
		}
		// idString makes 7 and "7" one id, and nothing else.
		for _, id := range append(wantReq, wantResp...) {
			quoted, _ := json.Marshal(id)
			if idString(quoted) != id {
				t.Fatalf("idString(%s) = %q, want %q", quoted, idString(quoted), id)
			}
		}
	})
}
