package record

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var scanSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-1E-2`, `true`, `false`, `null`,
	`01`, `1.`, `.5`, `-`, `1e`, `+1`, `[1,]`, `{"a":1,}`, `{"a"}`, `{1:2}`, `[1 2]`,
	`"\u00e9\ud83d\ude00"`, `"\x"`, `"\u12"`, "\"tab\there\"", `"\/\b\f\n\r\t\\\""`,
	`{"access_token":"x","nested":{"Authorization":{"a":[1]}}}`,
	`{"a\u005ftoken":1,"access_token":{"access_token":2}}`,
	` {"a" : [ 1 , 2 ] } `, "{\"a\":1}\n", `[[[[[]]]]]`, `nul`, `tru`, `{"a":1}{}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

func TestScanJSONAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range append(scanSeeds, oddFrames...) {
		checkScan(t, []byte(s))
	}
}

func FuzzScanJSON(f *testing.F) {
	for _, s := range append(scanSeeds, oddFrames...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScan(t, data) })
}

func checkScan(t *testing.T, data []byte) {
	t.Helper()
	r, _ := NewRedactor(RedactOptions{})
	res := scanJSON(data, r.sensitive)
	if want := json.Valid(data); res.valid != want {
		t.Fatalf("scanJSON(%q).valid = %v, json.Valid says %v", data, res.valid, want)
	}
	if !res.valid {
		return
	}
	var b bytes.Buffer
	json.Compact(&b, data)
	if want := bytes.Equal(b.Bytes(), data); res.compact != want {
		t.Fatalf("scanJSON(%q).compact = %v, want %v", data, res.compact, want)
	}
	// The sensitive values found are the ones the path walk finds.
	want := findSpans(data, r.matchFrame)
	if len(want) == 0 {
		want = nil
	}
	if !reflect.DeepEqual(res.spans, want) {
		t.Fatalf("scanJSON(%q) spans %v, findSpans %v", data, res.spans, want)
	}
}
