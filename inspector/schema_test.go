package inspector

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/modsource"
)

// TestSchemaProblems: the reasons a value fails a schema, said as
// "at /location: reason", in both dialects MCP servers write (2020-12, the
// default since 2025-11-25, and draft-07).
func TestSchemaProblems(t *testing.T) {
	const props = `"properties":{"name":{"type":"string","minLength":2},"age":{"type":"integer","minimum":18},` +
		`"tags":{"type":"array","maxItems":2,"items":{"type":"string"}},"mode":{"enum":["a","b"]},"k":{"const":"x"},` +
		`"code":{"type":"string","pattern":"^[A-Z]+$"},"pos":{"type":"array","prefixItems":[{"type":"number"}]},` +
		`"when":{"type":"string","format":"date"}},"required":["name"]`
	for _, dialect := range []string{"", `"$schema":"https://json-schema.org/draft/2020-12/schema",`, `"$schema":"http://json-schema.org/draft-07/schema#",`, `"$schema":"http://json-schema.org/draft-04/schema#",`} {
		s, err := compileSchema(json.RawMessage(`{`+dialect+`"type":"object",`+props+`}`), false)
		if err != nil {
			t.Fatalf("%s: %v", dialect, err)
		}
		for in, want := range map[string]string{
			`{"name":"Ada","age":36,"tags":["x"],"when":"not a date"}`: "",
			`{}`:                                  "missing property 'name'",
			`[]`:                                  "got array, want object",
			`{"name":3}`:                          "at /name: got number, want string",
			`{"name":"A"}`:                        "at /name: length must be >= 2, but got 1",
			`{"name":"Ada","age":17.5}`:           "at /age: got number, want integer",
			`{"name":"Ada","age":3}`:              "at /age: must be >= 18 but found 3",
			`{"name":"Ada","tags":["a",1]}`:       "at /tags/1: got number, want string",
			`{"name":"Ada","tags":["a","b","c"]}`: "at /tags: must have at most 2 items, but has 3",
			`{"name":"Ada","mode":"c"}`:           "at /mode: value must be one of 'a', 'b'",
			`{"name":"Ada","k":"y"}`:              "at /k: value must be 'x'",
			`{"name":"Ada","code":"abc"}`:         "at /code: 'abc' does not match pattern '^[A-Z]+$'",
			`{"age":3}`:                           "missing property 'name'; at /age: must be >= 18 but found 3",
		} {
			got := ""
			if err := s.Validate(json.RawMessage(in)); err != nil {
				got = err.Error()
			}
			if got != want {
				t.Errorf("%s%s:\n got %q\nwant %q", dialect, in, got, want)
			}
		}
	}
}

// TestSchemaProblemsMembers: a member that fails the additionalProperties
// or patternProperties of its object (a map: zod's record) is named, as a
// property is, rather than left to the library's words, which name no
// location.
func TestSchemaProblemsMembers(t *testing.T) {
	s, err := compileSchema(json.RawMessage(`{"type":"object","properties":{
		"env":{"type":"object","properties":{"PATH":{"type":"integer"}},"additionalProperties":{"type":"string"}},
		"labels":{"type":"object","patternProperties":{"^x/":{"type":"string"}}},
		"users":{"type":"object","additionalProperties":{"$ref":"#/$defs/User"}}},
		"additionalProperties":{"type":"boolean"},
		"$defs":{"User":{"type":"object","properties":{"age":{"type":"integer","minimum":0}}}}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`{"env":{"PATH":1,"HOME":"/h","ZIP":7}}`:      "at /env/ZIP: got number, want string",
		`{"labels":{"x/id":1}}`:                       "at /labels/x/id: got number, want string",
		`{"users":{"ada":{"age":-1}}}`:                "at /users/ada/age: must be >= 0 but found -1",
		`{"verbose":"yes"}`:                           "at /verbose: got string, want boolean",
		`{"env":{"PATH":1,"HOME":"/h"},"quiet":true}`: "",
	} {
		got := ""
		if err := s.Validate(json.RawMessage(in)); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestSchemaProblemsAlternatives: a value that fails an anyOf or oneOf is
// explained in one line, in the words of the other failures, from the
// alternatives checked one by one (their $refs resolved): one type
// wanted among several, the reason of the alternative of the value's
// type, the values of titled enums, every reason where several
// alternatives of the type fail; never the library's several lines of
// "<anonymous schema>".
func TestSchemaProblemsAlternatives(t *testing.T) {
	for _, defs := range []string{"$defs", "definitions"} {
		raw := `{"type":"object","properties":{
			"a":{"anyOf":[{"type":"string"},{"type":"integer"}]},
			"b":{"oneOf":[{"type":"number"},{"type":"integer"}]},
			"c":{"type":"object","properties":{"d":{"oneOf":[{"const":"x","title":"Ex"},{"const":"y"}]}}},
			"e":{"$ref":"#/$defs/E"},
			"limit":{"anyOf":[{"type":"integer","maximum":10},{"type":"null"}]},
			"u":{"anyOf":[{"$ref":"#/$defs/P"},{"$ref":"#/$defs/Q"}]},
			"opt":{"anyOf":[{"$ref":"#/$defs/P"},{"type":"null"}]},
			"list":{"type":"array","items":{"anyOf":[{"type":"object","properties":{"n":{"type":"integer"}}},{"enum":["a"]}]}},
			"size":{"oneOf":[{"const":"s","title":"Small"},{"enum":["m","l"]}]},
			"n":{"not":{"type":"string"}},
			"ulist":{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/P"},{"$ref":"#/$defs/Q"}]}},
			"rows":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}}}}},
		"$defs":{"E":{"anyOf":[{"type":"string","maxLength":2},{"type":"null"}]},
			"P":{"type":"object","properties":{"p":{"type":"integer"}},"required":["p"]},"Q":{"type":"object","required":["q"]}}}`
		raw = strings.ReplaceAll(raw, "$defs", defs)
		if defs == "definitions" {
			raw = `{"$schema":"http://json-schema.org/draft-07/schema#",` + raw[1:]
		}
		s, err := compileSchema(json.RawMessage(raw), false)
		if err != nil {
			t.Fatalf("%s: %v", defs, err)
		}
		for in, want := range map[string]string{
			`{"a":true}`:                    "at /a: got boolean, want string or integer",
			`{"a":[1]}`:                     "at /a: got array, want string or integer",
			`{"b":3}`:                       "at /b: matches 2 of the forms its oneOf allows (number, integer), where it must match exactly one",
			`{"c":{"d":"z"}}`:               "at /c/d: value must be one of 'x', 'y'",
			`{"e":"abc"}`:                   "at /e: length must be <= 2, but got 3",
			`{"limit":12}`:                  "at /limit: must be <= 10 but found 12",
			`{"limit":"x"}`:                 "at /limit: got string, want integer or null",
			`{"u":{}}`:                      "at /u: matches none of the forms its anyOf allows: missing property 'p', or missing property 'q'",
			`{"u":{"p":"x"}}`:               "at /u: matches none of the forms its anyOf allows: at /u/p: got string, want integer, or missing property 'q'",
			`{"opt":{"p":"x"}}`:             "at /opt/p: got string, want integer",
			`{"opt":5}`:                     "at /opt: got number, want object or null",
			`{"list":[1,{"n":"x"}]}`:        "at /list/0: got number, want object or string",
			`{"ulist":[{"p":1},{"p":"x"}]}`: "at /ulist/1: matches none of the forms its anyOf allows: at /ulist/1/p: got string, want integer, or missing property 'q'",
			`{"list":[{"n":"x"}]}`:          "at /list/0/n: got string, want integer",
			`{"size":"x"}`:                  "at /size: value must be one of 's', 'm', 'l'",
			`{"n":"x"}`:                     `at /n: matches the schema its "not" gives, which it must not`,
			`{"rows":[{"n":1},{"n":"x"}]}`:  "at /rows/1/n: got string, want integer",
			`{"a":1,"limit":null}`:          "",
		} {
			got := ""
			if err := s.Validate(json.RawMessage(in)); err != nil {
				got = err.Error()
			}
			if got != want {
				t.Errorf("%s %s:\n got %q\nwant %q", defs, in, got, want)
			}
		}
	}
}

// TestSchemaProblemsAlternativesUnsaid: where the alternatives cannot be
// checked alone (a $ref of the document to "#" would be read in the part),
// the failure is still one line, without the library's wording.
func TestSchemaProblemsAlternativesUnsaid(t *testing.T) {
	s, err := compileSchema(json.RawMessage(`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"}]},
		"b":{"oneOf":[{"type":"number"},{"type":"integer"}]},"self":{"$ref":"#"}}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`{"a":true}`: "at /a: matches none of the forms its anyOf allows",
		`{"b":3}`:    "at /b: matches more than one of the forms its oneOf allows, where it must match exactly one",
	} {
		if err := s.Validate(json.RawMessage(in)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// TestSchemaDraft07: draft-07's own keywords keep their draft-07 meaning.
func TestSchemaDraft07(t *testing.T) {
	s, err := compileSchema(json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"}],"additionalItems":false,"definitions":{"n":{"type":"number"}},"dependencies":{"a":["b"]}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(json.RawMessage(`["a"]`)); err != nil {
		t.Errorf("valid: %v", err)
	}
	if err := s.Validate(json.RawMessage(`["a",1]`)); err == nil {
		t.Error("additionalItems false must refuse a second item")
	}
}

// TestSchemaFormats: CompileSchema (elicitation forms) asserts the formats
// a form may name; compileSchema(raw, false) (tool arguments) does not.
func TestSchemaFormats(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","properties":{"e":{"type":"string","format":"email"},"u":{"type":"string","format":"uri"},"d":{"type":"string","format":"date"},"t":{"type":"string","format":"date-time"}}}`)
	s, err := CompileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(json.RawMessage(`{"e":"ada@example.com","u":"https://example.com/x","d":"2025-11-25","t":"2025-11-25T10:00:00Z"}`)); err != nil {
		t.Errorf("valid: %v", err)
	}
	err = s.Validate(json.RawMessage(`{"e":"nope","u":"/relative","d":"25/11/2025","t":"2025-11-25"}`))
	want := "at /d: '25/11/2025' is not a valid date; at /e: 'nope' is not a valid email; at /t: '2025-11-25' is not a valid date-time; at /u: '/relative' is not a valid uri"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	field, err := CompileSchema(json.RawMessage(`{"type":"string","format":"email"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := field.Validate(json.RawMessage(`"Ada <ada@example.com>"`)); err == nil {
		t.Error("a field's email must be a bare address")
	}
	lax, err := compileSchema(raw, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := lax.Validate(json.RawMessage(`{"e":"nope"}`)); err != nil {
		t.Errorf("formats of tool arguments are annotations: %v", err)
	}
}

// TestSchemaRefused: schemas that cannot be used are errors, never fetched;
// one the library cannot decode is said in JSON terms, naming the member.
func TestSchemaRefused(t *testing.T) {
	for raw, want := range map[string]string{
		`{"type":`:                "schema is not JSON",
		`{"type":"no-such-type"}`: "invalid schema",
		`{"properties":{"a":{"type":["string","x"]}}}`: "invalid schema",
		`{"$ref":"https://example.com/schema.json"}`:   "does not fetch",
		`{"type":"string","pattern":"("}`:              "invalid schema",
	} {
		if _, err := compileSchema(json.RawMessage(raw), false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", raw, err, want)
		}
	}
	// A schema the library does not decode is said in JSON's terms,
	// naming the member by its JSON Pointer, never in Go's.
	for raw, want := range map[string]string{
		`{"type":"object","properties":{"n":{"type":"number","maximum":1e999}}}`:          "invalid schema: at /properties/n/maximum: 1e999 is out of the range of the numbers mcpx can check (about ±1.8e308)",
		`{"properties":{"a":{"anyOf":[{"type":"integer"},{"minimum":"x"}]}}}`:             "invalid schema: at /properties/a/anyOf/1/minimum: it is a string, not a number",
		`{"$defs":{"X":{"maximum":true}},"properties":{"maximum":{"maximum":1}}}`:         "invalid schema: at /$defs/X/maximum: it is a boolean, not a number",
		`{"properties":{"required":{"type":"object","required":"x"}}}`:                    "invalid schema: at /properties/required/required: it is a string, not an array",
		`{"properties":{"a/b":{"description":5}}}`:                                        "invalid schema: at /properties/a~1b/description: it is a number, not a string",
		`{"items":[{"enum":{}}]}`:                                                         "invalid schema: at /items/0/enum: it is an object, not an array",
		`{"properties":{"a":{"type":5}}}`:                                                 "invalid schema: at /properties/a/type: it is a number, not a string or an array",
		`{"properties":{"minLength":{"minLength":1.5}}}`:                                  "invalid schema: at /properties/minLength/minLength: 1.5 is not an integer",
		`{"properties":{"a":{"maxItems":"3"}}}`:                                           "invalid schema: at /properties/a/maxItems: it is a string, not an integer",
		`{"properties":{"a":{"maxItems":3e10}}}`:                                          "invalid schema: at /properties/a/maxItems: 3e10 is out of the range of the integers mcpx can read (at most 2147483647)",
		`{"properties":{"a":{"maxLength":3e2}}}`:                                          "invalid schema: at /properties/a/maxLength: 3e2 has an exponent, which mcpx cannot read as an integer",
		`{"properties":{"a":{"not":{"items":{"additionalProperties":{"const":1e400}}}}}}`: "invalid schema: at /properties/a/not/items/additionalProperties/const: 1e400 is out of the range",
	} {
		_, err := compileSchema(json.RawMessage(raw), false)
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "json:") {
			t.Errorf("%s: err = %v, want %q", raw, err, want)
		}
	}
	// A $ref that leads back to where it started without going into the
	// value is refused: the library would follow it until the program
	// died of a stack overflow. A recursive schema that goes into the
	// value (a tree's children) is fine.
	for raw, want := range map[string]string{
		`{"$defs":{"A":{"$ref":"#/$defs/A"}},"properties":{"a":{"$ref":"#/$defs/A"}}}`:                          "invalid schema: at /$defs/A: a $ref leads back here without going into the value",
		`{"$defs":{"A":{"allOf":[{"$ref":"#/$defs/B"}]},"B":{"not":{"$ref":"#/$defs/A"}}}}`:                     "invalid schema: at /$defs/A: a $ref leads back here",
		`{"anyOf":[{"type":"null"},{"$ref":"#"}]}`:                                                              "invalid schema: at the root: a $ref leads back here",
		`{"definitions":{"T":{"oneOf":[{"type":"string"},{"if":{"$ref":"#/definitions/T"}}]}},"type":"object"}`: "invalid schema: at /definitions/T: a $ref leads back here",
	} {
		if _, err := compileSchema(json.RawMessage(raw), false); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", raw, err, want)
		}
	}
	tree, err := compileSchema(json.RawMessage(`{"$defs":{"T":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/T"}}}},
		"U":{"$ref":"#/$defs/V"},"V":{"type":"string"}},"properties":{"t":{"$ref":"#/$defs/T"},"a":{"$ref":"#/$defs/U"},"b":{"$ref":"#/$defs/U"}}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`{"t":{"kids":[{"kids":[{"kids":5}]}]}}`: "at /t/kids/0/kids/0/kids: got number, want array",
		`{"t":{"kids":[{},5]}}`:                  "at /t/kids/1: got number, want object",
		`{"a":5}`:                                "at /a: got number, want string",
	} {
		if err := tree.Validate(json.RawMessage(in)); err == nil || err.Error() != want {
			t.Errorf("a tree, %s: %v, want %q", in, err, want)
		}
	}
	// Where a part of the document cannot be checked alone ($ref "#"),
	// the item is not found: said at the array.
	nested, err := compileSchema(json.RawMessage(`{"type":"array","items":{"$ref":"#"}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := nested.Validate(json.RawMessage(`[[],[[5]]]`)); err == nil || !strings.HasPrefix(err.Error(), "an item does not match the schema of its items: type: ") {
		t.Errorf("nested arrays: %v", err)
	}
	// A $ref inside the document resolves.
	s, err := compileSchema(json.RawMessage(`{"$defs":{"n":{"type":"number"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(json.RawMessage(`{"a":"x"}`)); err == nil || !strings.Contains(err.Error(), "got string, want number") {
		t.Errorf("got %v", err)
	}
}

// TestStartupCostsNoSchemaCompilation: the JSON Schema library linked into
// mcpx does no work when the program starts (issue 13: the one used before
// compiled its metaschemas in its package initialisation, 6 ms of every
// start), nor do mcpx's own packages. Measured as allocations of the
// package's init, from inittrace.
func TestStartupCostsNoSchemaCompilation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpx")
	}
	modsource.ReadAll(t) // go run builds mcpx behind go test's cache
	// go run keeps the executable in the build cache (no link when it is
	// warm); -exec runs it with GODEBUG set for it alone, not for go.
	cmd := exec.CommandContext(t.Context(), "go", "run", "-exec", "env GODEBUG=inittrace=1", "github.com/mcpx-dev/mcpx", "--version")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcpx --version: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "init github.com/mcpx-dev/mcpx/cmd @") {
		t.Fatalf("no init trace of mcpx's packages:\n%s", out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != "init" {
			continue
		}
		bytes, err := strconv.Atoi(f[7])
		if err != nil {
			continue
		}
		if bytes > 256<<10 {
			t.Errorf("package %s allocates %d bytes at start-up: %s", f[1], bytes, line)
		}
		// mcpx's own packages build what they need on first use (a
		// regular expression behind sync.OnceValue): 103 KB of cmd's
		// start-up was regular expressions only a listing uses.
		if strings.HasPrefix(f[1], "github.com/mcpx-dev/mcpx/") && bytes > 32<<10 {
			t.Errorf("mcpx package %s allocates %d bytes at start-up (build it on first use): %s", f[1], bytes, line)
		}
	}
}

// TestSchemaNumberOutOfRange: a valid JSON number beyond float64's range
// cannot be checked (the validator reads numbers as float64); the error
// says which number, where, instead of "not JSON" and Go's decoder
// message.
func TestSchemaNumberOutOfRange(t *testing.T) {
	s, err := compileSchema(json.RawMessage(`{"type":"object","properties":{"u":{}}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]NumberRangeError{
		`{"u":1e999}`:                      {At: "/u", Number: "1e999"},
		`{"a":[1,{"b":-1e400}],"c":1e999}`: {At: "/a/1/b", Number: "-1e400"},
		`{"z":1,"a":1e999,"b":1e999}`:      {At: "/a", Number: "1e999"},
		`1e999`:                            {At: "", Number: "1e999"},
	} {
		err := s.Validate(json.RawMessage(in))
		var ne *NumberRangeError
		if !errors.As(err, &ne) {
			t.Fatalf("%s: err = %v, want a *NumberRangeError", in, err)
		}
		if *ne != want {
			t.Errorf("%s: %+v, want %+v", in, *ne, want)
		}
		if msg := err.Error(); !strings.Contains(msg, want.Number+" is out of the range of the numbers mcpx can check") || strings.Contains(msg, "JSON") || strings.Contains(msg, "Go value") {
			t.Errorf("%s: message %q", in, msg)
		}
	}
	if err := s.Validate(json.RawMessage(`{"u":12345678901234567890123,"v":1e-400}`)); err != nil {
		t.Errorf("numbers within the range: %v", err)
	}
	if err := s.Validate(json.RawMessage(`{"u":`)); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("not JSON: %v", err)
	}
}

// A server's long pattern against its own long default (an elicitation
// form; 64 KiB each here, a megabyte each held mcpx for hours) is not
// matched: Go's regular expressions take time
// proportional to both, an hour that nothing could interrupt. The value is
// reported as not checked, at once.
func TestPatternWorkBounded(t *testing.T) {
	big := strings.Repeat("P", 64<<10)
	s, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"p":{"type":"string","pattern":"` + big + `"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.Validate(json.RawMessage(`{"p":"` + big + `"}`))
	var pe *PatternWorkError
	if !errors.As(err, &pe) || pe.StringLen != 64<<10 || pe.PatternSize < 64<<10 {
		t.Fatalf("Validate: %v, want a *PatternWorkError", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing took %v", d)
	}
	if want := "matching the schema's pattern (65538 instructions) against a string of 65536 bytes would take too long"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// Within the bound a pattern is checked as ever, a long key too.
	if err := s.Validate(json.RawMessage(`{"p":"P"}`)); err == nil || errors.As(err, &pe) {
		t.Errorf("a short string against the long pattern: %v, want a mismatch", err)
	}
	small, err := CompileSchema(json.RawMessage(`{"type":"object","patternProperties":{"^[a-z]+$":{"type":"string","pattern":"^x+$"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 1<<20)
	if err := small.Validate(json.RawMessage(`{"abc":"` + long + `"}`)); err != nil {
		t.Errorf("a megabyte string against a small pattern: %v", err)
	}
}

// An elicitation form whose default would take too long to check against
// its pattern is not offered by accept-defaults, and answers at once.
func TestAcceptDefaultsHostilePattern(t *testing.T) {
	e := elicitor(t, "accept-defaults", nil)
	var notes []string
	e.Note = func(s string) { notes = append(notes, s) }
	big := strings.Repeat("P", 64<<10)
	raw, err := e.Handle(testCtx(t), "elicitation/create", json.RawMessage(`{"message":"m","requestedSchema":{"type":"object","properties":{"p":{"type":"string","pattern":"`+big+`","default":"`+big+`"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"accept","content":{}}`; string(raw) != want {
		t.Errorf("answer %s, want %s", raw, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "the default of field(s) p does not match") {
		t.Errorf("notes %q", notes)
	}
}

// A schema nested deeper than maxSchemaNesting is refused before the
// library decodes it, which costs time with the square of the depth (a
// schema 4,000 levels deep took seconds); one at the limit compiles.
func TestSchemaTooDeep(t *testing.T) {
	nested := func(levels int) string { // 2 levels of JSON a level
		return `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"object","properties":{"a":`, levels) + `{}` + strings.Repeat(`}}`, levels) + `}}`
	}
	start := time.Now()
	_, err := compileSchema(json.RawMessage(nested(4000)), false)
	if err == nil || !strings.Contains(err.Error(), "invalid schema: it is nested deeper than the 128 levels of JSON mcpx checks") {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing the schema took %v", d)
	}
	if _, err := compileSchema(json.RawMessage(nested(maxSchemaNesting/2-2)), false); err != nil {
		t.Errorf("a schema within the limit: %v", err)
	}
}

// A schema whose $refs and anyOfs have one value checked against more
// schemas than maxInPlace (forty $defs, each an anyOf of two $refs to the
// next: 2^40 checks, which never end) is refused when it is compiled;
// $refs that share a target a few times over are not.
func TestSchemaRefBombRefused(t *testing.T) {
	chain := func(n int) []byte {
		defs := map[string]any{fmt.Sprintf("D%d", n): map[string]any{"type": "string"}}
		for i := range n {
			next := map[string]any{"$ref": fmt.Sprintf("#/$defs/D%d", i+1)}
			defs[fmt.Sprintf("D%d", i)] = map[string]any{"anyOf": []any{next, next}}
		}
		raw, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/D0"}}, "$defs": defs})
		return raw
	}
	start := time.Now()
	_, err := compileSchema(chain(40), false)
	if err == nil || !strings.Contains(err.Error(), "invalid schema: at /$defs/D") || !strings.Contains(err.Error(), "have a value checked against more than 10000 schemas in place") {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing the schema took %v", d)
	}
	// Ten levels: 2^11 schemas in place, within the bound; checked.
	s, err := compileSchema(chain(10), false)
	if err != nil {
		t.Fatalf("ten levels: %v", err)
	}
	if s.Validate(json.RawMessage(`{"a":5}`)) == nil || s.Validate(json.RawMessage(`{"a":"x"}`)) != nil {
		t.Error("ten levels: not checked")
	}
}

// A schema that applies twice at every level of the value (an anyOf that
// names one definition twice, which applies the schema again to a
// property) is not checked against a value nested forty levels deep, 2^40
// applications: a *CheckWorkError, at once. The same through an anchor,
// and a shallow value, or a large one against a plain schema, checked.
func TestSchemaCheckWorkBounded(t *testing.T) {
	t.Parallel()
	nestedValue := func(depth int) json.RawMessage {
		v := `"leaf"`
		for range depth {
			v = `{"a":` + v + `}`
		}
		return json.RawMessage(v)
	}
	for name, schema := range map[string]string{
		"pointer": `{"$ref":"#/$defs/S","$defs":{"S":{"anyOf":[{"$ref":"#/$defs/T"},{"$ref":"#/$defs/T"}]},"T":{"type":["object","string"],"properties":{"a":{"$ref":"#/$defs/S"}}}}}`,
		"anchor":  `{"$ref":"#s","$defs":{"S":{"$anchor":"s","anyOf":[{"$ref":"#t"},{"$ref":"#t"}]},"T":{"$anchor":"t","type":["object","string"],"properties":{"a":{"$ref":"#s"}}}}}`,
	} {
		s, err := compileSchema(json.RawMessage(schema), false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		start := time.Now()
		var we *CheckWorkError
		if err := s.Validate(nestedValue(40)); !errors.As(err, &we) {
			t.Errorf("%s: forty levels: err = %v, want a *CheckWorkError", name, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: refusing the check took %v", name, d)
		}
		if err := s.Validate(nestedValue(5)); err != nil {
			t.Errorf("%s: five levels: %v", name, err)
		}
		if err := s.Validate(json.RawMessage(`{"a":{"a":5}}`)); err == nil || errors.As(err, &we) {
			t.Errorf("%s: a bad value five levels deep: err = %v, want a failure", name, err)
		}
	}
	plain, err := compileSchema(json.RawMessage(`{"type":"object","properties":{"rows":{"type":"array","items":{"$ref":"#/$defs/row"}}},"$defs":{"row":{"type":"object","properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]any, 50000)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "tags": []any{"a", "b"}}
	}
	big, _ := json.Marshal(map[string]any{"rows": rows})
	if err := plain.Validate(big); err != nil {
		t.Errorf("50,000 rows against a plain schema: %v", err)
	}
}

// draft-07's dependencies apply a schema to the value in place, as
// dependentSchemas does, and the library follows them in a draft-07
// schema: a circle through them is refused (it would overflow the stack,
// which kills mcpx), as are forty definitions each applying the next
// twice through them (2^40 checks), and a schema that applies twice at
// every level of the value through them is not checked against a value
// forty levels deep.
func TestSchemaDraft7DependenciesBounded(t *testing.T) {
	const draft7 = `"$schema":"http://json-schema.org/draft-07/schema#"`
	_, err := compileSchema(json.RawMessage(`{`+draft7+`,"definitions":{"A":{"dependencies":{"x":{"$ref":"#/definitions/A"}}}},"allOf":[{"$ref":"#/definitions/A"}]}`), false)
	if err == nil || !strings.Contains(err.Error(), "a $ref leads back here") {
		t.Errorf("a circle through dependencies: err = %v", err)
	}

	chain := func(n int) []byte {
		defs := map[string]any{fmt.Sprintf("D%d", n): map[string]any{}}
		for i := range n {
			next := map[string]any{"$ref": fmt.Sprintf("#/definitions/D%d", i+1)}
			defs[fmt.Sprintf("D%d", i)] = map[string]any{"dependencies": map[string]any{"a": next, "b": next}}
		}
		raw, _ := json.Marshal(map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": defs, "allOf": []any{map[string]any{"$ref": "#/definitions/D0"}}})
		return raw
	}
	if _, err := compileSchema(chain(40), false); err == nil || !strings.Contains(err.Error(), "have a value checked against more than 10000 schemas in place") {
		t.Errorf("forty definitions through dependencies: err = %v", err)
	}
	s, err := compileSchema(chain(5), false)
	if err != nil {
		t.Fatalf("five definitions: %v", err)
	}
	if err := s.Validate(json.RawMessage(`{"a":1,"b":1}`)); err != nil {
		t.Errorf("five definitions: %v", err)
	}

	s, err = compileSchema(json.RawMessage(`{`+draft7+`,"allOf":[{"$ref":"#/definitions/S"}],"definitions":{
		"S":{"dependencies":{"a":{"$ref":"#/definitions/T"},"b":{"$ref":"#/definitions/T"}}},
		"T":{"type":["object","string","integer"],"properties":{"a":{"$ref":"#/definitions/S"}}}}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	nested := func(depth int) json.RawMessage {
		v := `"leaf"`
		for range depth {
			v = `{"a":` + v + `,"b":1}`
		}
		return json.RawMessage(v)
	}
	start := time.Now()
	var we *CheckWorkError
	if err := s.Validate(nested(40)); !errors.As(err, &we) {
		t.Errorf("forty levels: err = %v, want a *CheckWorkError", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing the check took %v", d)
	}
	if err := s.Validate(nested(5)); err != nil {
		t.Errorf("five levels: %v", err)
	}
}
