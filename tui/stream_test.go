package tui

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/pretty"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// randomJSON returns a random JSON document with the shapes the layout
// cares about: arrays that fit on a line or not, at every column, nested
// objects, empty containers, odd white space, escapes, C1 controls,
// invalid UTF-8.
func randomJSON(rng *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", " ", "\n  ", "\t"}[rng.Intn(5)] }
	scalars := []string{`1`, `-2.5e3`, `true`, `false`, `null`, `""`, `"a"`, `"long string that takes room on the line"`,
		`"esc\"aped\\\n\u00e9"`, "\"c1 \u0085 del \x7f\"", "\"bidi \u202e \u2067\"", "\"bad \xff utf8\"", `"\u2028"`, `"<&>"`}
	if depth <= 0 || rng.Intn(3) == 0 {
		return scalars[rng.Intn(len(scalars))]
	}
	n := rng.Intn(6)
	var parts []string
	if rng.Intn(2) == 0 {
		for i := range n {
			parts = append(parts, ws()+fmt.Sprintf(`"k%d"`, i)+ws()+":"+ws()+randomJSON(rng, depth-1)+ws())
		}
		return "{" + strings.Join(parts, ",") + ws() + "}"
	}
	for range n {
		parts = append(parts, ws()+randomJSON(rng, depth-1)+ws())
	}
	return "[" + strings.Join(parts, ",") + ws() + "]"
}

// The streaming layout is byte for byte what tidwall/pretty and
// EscapeJSON make of the same JSON.
func TestPrettyWriterMatchesPretty(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	docs := []string{`{}`, `[]`, `[[]]`, `{"a":[]}`, `[{}]`, `"x"`, `12`, `[1,2,3]`, `{"a":{"b":{"c":[1,[2,[3]]]}}}`,
		`[` + strings.Repeat(`1,`, 40) + `1]`, `{"tools":[` + strings.Repeat(`{"name":"n","d":[1,2]},`, 3) + `{}]}`,
		`["` + strings.Repeat("long ", 20<<10) + `", 1]`, `{"a":[[["` + strings.Repeat("x", 70) + `"]]]}`}
	for range 2000 {
		docs = append(docs, randomJSON(rng, 5))
	}
	for _, d := range docs {
		if !json.Valid([]byte(d)) {
			continue
		}
		want := EscapeJSON(string(pretty.PrettyOptions([]byte(d), &pretty.Options{Width: 80, Indent: "  "})))
		var got bytes.Buffer
		if err := writePrettyJSON(&got, []byte(d), ""); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Fatalf("input %q\ngot\n%s\nwant\n%s", d, got.String(), want)
		}
		// And with a prefix on every line, as a log message's data is
		// printed.
		want = EscapeJSON(string(pretty.PrettyOptions([]byte(d), &pretty.Options{Width: 80, Prefix: "  ", Indent: "  "})))
		got.Reset()
		if err := writePrettyJSON(&got, []byte(d), "  "); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Fatalf("input %q with a prefix\ngot\n%s\nwant\n%s", d, got.String(), want)
		}
	}
}

// JSON nested deeper than maxIndentLevels is indented to that level and
// compact below it: the same JSON, in output that grows with the
// document, not with the square of its depth (18 KB nested 9,000 levels
// deep was 162 MB), with or without colour, as a result or as a log
// message's data.
func TestDeepJSONIndentedToACap(t *testing.T) {
	const depth = 9000
	// Each level holds a C1 control, raw.
	doc := `{"a":` + strings.Repeat("[{\"k\":\"\u009b\"},", depth) + `1` + strings.Repeat("]", depth) + `}`
	for _, colour := range []bool{false, true} {
		var b bytes.Buffer
		NewPrinter(&b, colour).JSON(json.RawMessage(doc))
		out := b.String()
		if len(out) > 10*len(doc) {
			t.Fatalf("colour %v: %d bytes of output for %d bytes of JSON", colour, len(out), len(doc))
		}
		if strings.Contains(out, "\u009b") || !strings.Contains(out, `\u009b`) {
			t.Errorf("colour %v: the C1 control is not escaped", colour)
		}
		if colour {
			continue
		}
		var got, want any
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("output is not JSON: %v", err)
		}
		_ = json.Unmarshal([]byte(doc), &want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Error("output is not the same JSON")
		}
		if indent := "\n" + strings.Repeat("  ", maxIndentLevels) + `[{"k":"\u009b"},[{"k":`; !strings.Contains(out, indent) {
			t.Errorf("no line indented %d levels holding the rest compact", maxIndentLevels)
		}
	}
	var b bytes.Buffer
	NewConsole(&b, false, false).LogMessage(json.RawMessage(`{"level":"info","data":` + doc + `}`))
	if b.Len() > 10*len(doc) {
		t.Fatalf("%d bytes of log output for %d bytes of JSON", b.Len(), len(doc))
	}
}

// A large result is printed without a second copy of it, and exactly as
// a small one would be.
func TestLargeResultsPrintInPlace(t *testing.T) {
	text := strings.Repeat("line with \"quotes\", a tab\t, é and \x1b[31m\n", 200<<10) + "no newline at the end"
	textJSON, _ := json.Marshal(text)
	frame := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + string(textJSON) + `}],"isError":false}}`)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	msgs, _, err := jsonrpc.DecodeFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	result := msgs[0].Result
	// The output goes to hashes, which allocate nothing.
	human, raw := sha256.New(), sha256.New()
	NewPrinter(human, false).ToolResult(result)
	NewPrinter(raw, false).JSON(result)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("decoding and printing a %d-byte frame allocated %d bytes", len(frame), n)
	}
	if want := sha256.Sum256([]byte(Escape(text) + "\n")); !bytes.Equal(human.Sum(nil), want[:]) {
		t.Errorf("text output differs from Escape(text)")
	}
	if want := sha256.Sum256([]byte(EscapeJSON(string(pretty.PrettyOptions(result, &pretty.Options{Width: 80, Indent: "  "}))))); !bytes.Equal(raw.Sum(nil), want[:]) {
		t.Errorf("JSON output differs from the in-memory layout")
	}
}

func TestDecodeContentsLargeBlob(t *testing.T) {
	data := make([]byte, 3<<20+1)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b64 := base64.StdEncoding.EncodeToString(data)
	for i, blob := range []string{b64, strings.TrimRight(b64, "="), strings.ReplaceAll(b64[:64], "/", `\/`) + b64[64:]} {
		raw := []byte(`{"contents":[{"uri":"u","mimeType":"application/octet-stream","blob":"` + blob + `"}]}`)
		var before, after runtime.MemStats
		var got bytes.Buffer
		got.Grow(len(data))
		runtime.ReadMemStats(&before)
		c, err := inspector.DecodeContents(raw)
		if err == nil && len(c) == 1 {
			_, err = c[0].WriteTo(&got)
		}
		runtime.ReadMemStats(&after)
		if err != nil || len(c) != 1 || !bytes.Equal(got.Bytes(), data) || !c[0].Binary {
			t.Fatalf("DecodeContents: %v", err)
		}
		// Escapes (the last blob) need a decoded copy of the text first;
		// otherwise the blob is decoded as it is written.
		if n := after.TotalAlloc - before.TotalAlloc; i < 2 && n > 1<<20 {
			t.Errorf("decoding a %d-byte blob allocated %d bytes", len(data), n)
		}
		var out bytes.Buffer
		NewPrinter(&out, false).ReadResult(raw)
		if want := "[binary: application/octet-stream, 3.0 MiB; use -o FILE to save it]\n"; out.String() != want {
			t.Errorf("ReadResult = %q, want %q", out.String(), want)
		}
	}
}
