package tui

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/fuzzing"
)

// FuzzElicitField parses an arbitrary requested-schema property (form
// elicitation) and what a person types for it: ParseForm fails or yields
// one field, and an answer Parse accepts is valid JSON of the field's
// type (a finite number, an integer without fraction, a boolean, one of
// the options), which Validate judges without panicking.
func FuzzElicitField(f *testing.F) {
	answers := []string{"50", "user@example.com", "y", "1,2", "1", "Red", "-", "", "NaN", "Inf", "1e400", "0x10", " 7 ", "no", "3,x"}
	for i, prop := range fuzzing.PropertySchemas() {
		f.Add([]byte(prop), answers[i%len(answers)])
	}
	for _, a := range answers {
		f.Add([]byte(`{"type":"number"}`), a)
	}
	f.Fuzz(func(t *testing.T, prop []byte, answer string) {
		form, err := inspector.ParseForm(json.RawMessage(`{"type":"object","properties":{"f":` + string(prop) + `},"required":["f"]}`))
		if err != nil {
			return
		}
		if len(form.Fields) != 1 {
			t.Fatalf("ParseForm of one property: %d fields", len(form.Fields))
		}
		fld := form.Fields[0]
		v, err := parseAnswer(fld, answer)
		if err != nil {
			return
		}
		if !json.Valid(v) {
			t.Fatalf("field %+v: Parse(%q) = %q, not JSON", fld, answer, v)
		}
		var x any
		_ = json.Unmarshal(v, &x)
		switch {
		case fld.Multi:
			if _, ok := x.([]any); !ok {
				t.Fatalf("multi-select %+v: Parse(%q) = %s", fld, answer, v)
			}
		case len(fld.Options) > 0:
		case fld.Type == "number" || fld.Type == "integer":
			n, ok := x.(float64)
			if !ok || math.IsInf(n, 0) {
				t.Fatalf("%s field: Parse(%q) = %s", fld.Type, answer, v)
			}
			if _, err := strconv.ParseInt(string(v), 10, 64); fld.Type == "integer" && err != nil {
				t.Fatalf("integer field: Parse(%q) = %s", answer, v)
			}
		case fld.Type == "boolean":
			if _, ok := x.(bool); !ok {
				t.Fatalf("boolean field: Parse(%q) = %s", answer, v)
			}
		}
		_ = fld.Validate(v)
		content, _ := json.Marshal(map[string]json.RawMessage{"f": v})
		_ = form.Validate(content)
	})
}
