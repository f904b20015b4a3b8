package inspector

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testSchema = `{
  "type": "object",
  "properties": {
    "a": {"type": "number"},
    "n": {"type": "integer"},
    "zip": {"type": "string"},
    "flag": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "opts": {"type": "object"},
    "color": {"enum": ["red", "green"]},
    "level": {"enum": [1, 2, 3]},
    "maybe": {"type": ["integer", "null"]},
    "either": {"anyOf": [{"type": "number"}, {"type": "string"}]},
    "choice": {"oneOf": [{"type": "boolean"}, {"type": "array"}]},
    "fixed": {"const": "v1"},
    "free": {"description": "no type"},
    "nothing": {"type": "null"}
  },
  "required": ["a"]
}`

func TestBuildArgumentsTyping(t *testing.T) {
	tests := []struct {
		pair string
		want string // the value as JSON
	}{
		{"a=2", `2`},
		{"a=-2.5e3", `-2.5e3`},
		{"a=.5", `0.5`},
		{"a=007", `7`},
		{"n=42", `42`},
		{"n=-7", `-7`},
		{"n=1e3", `1000`},
		{"n=3.0", `3`},
		{"zip=012", `"012"`},
		{"zip=true", `"true"`},
		{"zip=", `""`},
		{`zip={"a":1}`, `"{\"a\":1}"`},
		{"zip=a=b", `"a=b"`},
		{"flag=true", `true`},
		{"flag=FALSE", `false`},
		{`tags=["x", "y"]`, `["x","y"]`},
		{"tags=[]", `[]`},
		{`opts={"k": {"v": 1}}`, `{"k":{"v":1}}`},
		{"color=red", `"red"`},
		{"level=2", `2`},
		{"maybe=5", `5`},
		{"maybe=null", `null`},
		{"either=3", `3`},
		{"either=three", `"three"`},
		// Where a string is allowed, a number is one only as JSON
		// writes it: the rest is the text typed, not a number rewritten.
		{"either=007", `"007"`},
		{"either=+33612345678", `"+33612345678"`},
		{"either=0x1p4", `"0x1p4"`},
		{"either=1_000", `"1_000"`},
		{"either=-2.5e3", `-2.5e3`},
		{"choice=true", `true`},
		{"choice=[1]", `[1]`},
		{"fixed=v1", `"v1"`},
		{"free=12", `12`},
		{"free=012", `"012"`},
		{"free=hello", `"hello"`},
		{`free={"x": [1, 2]}`, `{"x":[1,2]}`},
		{"free=", `""`},
		{"nothing=null", `null`},
	}
	for _, tt := range tests {
		t.Run(tt.pair, func(t *testing.T) {
			got, warnings, err := BuildArguments([]string{tt.pair}, nil, json.RawMessage(testSchema))
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings: %q", warnings)
			}
			key, _, _ := strings.Cut(tt.pair, "=")
			obj, err := ParseObject(got)
			if err != nil {
				t.Fatal(err)
			}
			if v := string(obj.Get(key)); v != tt.want {
				t.Errorf("%s → %s, want %s (whole object %s)", tt.pair, v, tt.want, got)
			}
		})
	}
}

func TestBuildArgumentsErrors(t *testing.T) {
	tests := []struct {
		pair    string
		wantKey string
		words   []string
	}{
		{"a=two", "a", []string{"number"}},
		{"a=1e400", "a", []string{"number"}},
		{"a=NaN", "a", []string{"number"}},
		{"a=", "a", []string{"number"}},
		{"n=2.5", "n", []string{"integer"}},
		{"flag=yes", "flag", []string{"true or false"}},
		{"tags=x", "tags", []string{"array"}},
		{`tags={"a":1}`, "tags", []string{"array"}},
		{"opts=[1]", "opts", []string{"object"}},
		{"level=high", "level", []string{"number"}},
		{"maybe=x", "maybe", []string{"integer", "null"}},
		{"choice=maybe", "choice", []string{"array", "boolean"}},
		{"noequals", "", []string{"key=value"}},
		{"=value", "", []string{"key=value"}},
	}
	for _, tt := range tests {
		t.Run(tt.pair, func(t *testing.T) {
			_, _, err := BuildArguments([]string{tt.pair}, nil, json.RawMessage(testSchema))
			var ae *ArgumentError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an *ArgumentError", err)
			}
			if ae.Key != tt.wantKey {
				t.Errorf("Key = %q, want %q", ae.Key, tt.wantKey)
			}
			if !containsAll(err.Error(), tt.words...) {
				t.Errorf("message %q lacks %q", err, tt.words)
			}
			if tt.wantKey != "" && !strings.Contains(err.Error(), tt.pair) {
				t.Errorf("message %q does not name the argument %q", err, tt.pair)
			}
		})
	}
}

// TestBuildArgumentsIntegerDigits: an integer beyond float64's 53 bits of
// mantissa goes out with the digits typed, wherever the schema says
// integer (a property, an array's items, a nested property, a type list,
// a oneOf); a fraction or exponent that makes a whole number is written
// out exactly; a number too large for float64 is refused by name.
func TestBuildArgumentsIntegerDigits(t *testing.T) {
	const schema = `{"type":"object","properties":{
		"i":{"type":"integer"},
		"n":{"type":"number"},
		"arr":{"type":"array","items":{"type":"integer"}},
		"obj":{"type":"object","properties":{"x":{"type":"integer"}}},
		"nn":{"type":["integer","null"]},
		"one":{"oneOf":[{"type":"integer"},{"type":"string"}]}}}`
	tests := []struct {
		pairs []string
		want  string
	}{
		{[]string{"i=12345678901234567890123"}, `{"i":12345678901234567890123}`},
		{[]string{"i=9223372036854775808"}, `{"i":9223372036854775808}`},
		{[]string{"i=-9223372036854775809"}, `{"i":-9223372036854775809}`},
		{[]string{"i=9007199254740993"}, `{"i":9007199254740993}`},
		{[]string{"i=12345678901234567890123.000"}, `{"i":12345678901234567890123}`},
		{[]string{"i=1.2345678901234567890123e22"}, `{"i":12345678901234567890123}`},
		{[]string{"i=+12345678901234567890123"}, `{"i":12345678901234567890123}`},
		{[]string{"i=1e3"}, `{"i":1000}`},
		{[]string{"n=12345678901234567890123"}, `{"n":12345678901234567890123}`},
		{[]string{"arr[0]=9223372036854775808", "arr[]=12345678901234567890123"}, `{"arr":[9223372036854775808,12345678901234567890123]}`},
		{[]string{"obj.x=12345678901234567890123"}, `{"obj":{"x":12345678901234567890123}}`},
		{[]string{"nn=12345678901234567890123"}, `{"nn":12345678901234567890123}`},
		{[]string{"one=12345678901234567890123"}, `{"one":12345678901234567890123}`},
		{[]string{"one=1e999"}, `{"one":"1e999"}`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.pairs, " "), func(t *testing.T) {
			got, _, err := BuildArguments(tt.pairs, nil, json.RawMessage(schema))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	for _, pair := range []string{"i=1e-400", "i=1.5", "i=12345678901234567890123.5"} {
		if got, _, err := BuildArguments([]string{pair}, nil, json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), "expected an integer") {
			t.Errorf("%s: got %s, %v; want expected an integer", pair, got, err)
		}
	}
	for _, pair := range []string{"i=1e999", "n=-1e400", "nn=1e999", "obj.x=1E+999"} {
		_, value, _ := strings.Cut(pair, "=")
		got, _, err := BuildArguments([]string{pair}, nil, json.RawMessage(schema))
		var ne *NumberRangeError
		if err == nil || !containsAll(err.Error(), pair, value+" is out of the range") || !errors.As(err, &ne) || ne.Number != value {
			t.Errorf("%s: got %s, %v; want it out of the range, a *NumberRangeError", pair, got, err)
		}
	}
	// Not a JSON number: refused all the same, but not as one the check
	// could not read (sending it unchecked would not send it either).
	for _, pair := range []string{"i=+1e999", "n=0x1p9999"} {
		var ne *NumberRangeError
		if got, _, err := BuildArguments([]string{pair}, nil, json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), "is out of the range") || errors.As(err, &ne) {
			t.Errorf("%s: got %s, %v; want it out of the range, no *NumberRangeError", pair, got, err)
		}
	}
	// Arguments that are not to be checked (--no-validate) send such a
	// number as the JSON number written, digits and all.
	props, known := schemaProperties(json.RawMessage(schema))
	for pair, want := range map[string]string{
		"i=1e999": `{"i":1e999}`, "n=-1.50e400": `{"n":-1.50e400}`, "nn=1E+999": `{"nn":1E+999}`,
		"one=1e999": `{"one":1e999}`, "arr[]=1e999": `{"arr":[1e999]}`, "obj.x=-1e999": `{"obj":{"x":-1e999}}`,
	} {
		got, _, err := buildArguments([]string{pair}, nil, json.RawMessage(schema), props, known, true)
		if err != nil || string(got) != want {
			t.Errorf("%s as written: got %s, %v; want %s", pair, got, err, want)
		}
	}
	if got, _, err := buildArguments([]string{"i=+1e999"}, nil, json.RawMessage(schema), props, known, true); err == nil {
		t.Errorf("i=+1e999 as written: got %s, want an error (not a JSON number)", got)
	}
}

// TestBuildArgumentsFollowsRefs: a property, an array's items or a branch
// of anyOf/oneOf given as a local $ref ("#/$defs/User", "#/definitions/…",
// any JSON Pointer into the same schema) is typed by the schema it points
// to, as the validation that follows reads it; a $ref to another document,
// to nothing, or round in a circle leaves the value untyped, without
// hanging. A path goes into the branch of an anyOf or oneOf that is an
// object (an array), as in a nullable one. An allOf types by what all of
// its schemas allow (pydantic v1 writes a described reference as allOf
// [{"$ref"}]).
func TestBuildArgumentsFollowsRefs(t *testing.T) {
	const schema = `{"type":"object",
		"$defs":{
			"User":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
				"friend":{"$ref":"#/$defs/User"},"tags":{"$ref":"#/$defs/Tags"}}},
			"Tags":{"type":"array","items":{"$ref":"#/definitions/Tag"}},
			"Alias":{"$ref":"#/$defs/User"},
			"Loop":{"$ref":"#/$defs/Loop2"},"Loop2":{"$ref":"#/$defs/Loop"},
			"Tree":{"anyOf":[{"$ref":"#/$defs/Tree"},{"type":"string"}]},
			"a/b c":{"type":"string"}},
		"definitions":{"Tag":{"type":"string"}},
		"properties":{
			"user":{"$ref":"#/$defs/User"},
			"alias":{"$ref":"#/$defs/Alias"},
			"code":{"type":"string"},
			"zip":{"$ref":"#/properties/code"},
			"either":{"oneOf":[{"$ref":"#/definitions/Tag"},{"type":"null"}]},
			"loop":{"$ref":"#/$defs/Loop"},
			"tree":{"$ref":"#/$defs/Tree"},
			"ext":{"$ref":"other.json#/$defs/User"},
			"missing":{"$ref":"#/$defs/Nope"},
			"esc":{"$ref":"#/$defs/a~1b%20c"},
			"opt":{"anyOf":[{"$ref":"#/$defs/User"},{"type":"null"}]},
			"list":{"oneOf":[{"type":"null"},{"type":"array","items":{"$ref":"#/definitions/Tag"}}]},
			"zipall":{"allOf":[{"$ref":"#/properties/code"}],"description":"pydantic v1"},
			"uall":{"allOf":[{"$ref":"#/$defs/User"}]},
			"both":{"allOf":[{"type":"number"},{"minimum":1},{"type":["integer","string"]}]}}}`
	tests := []struct {
		pairs    []string
		want     string
		warnings int
	}{
		{[]string{"user.name=123", "user.age=36"}, `{"user":{"name":"123","age":36}}`, 0},
		{[]string{"user.friend.name=123"}, `{"user":{"friend":{"name":"123"}}}`, 0},
		{[]string{"user.tags[]=1"}, `{"user":{"tags":["1"]}}`, 0},
		{[]string{"alias.name=123"}, `{"alias":{"name":"123"}}`, 0},
		{[]string{"zip=12"}, `{"zip":"12"}`, 0},
		{[]string{"either=12"}, `{"either":"12"}`, 0},
		{[]string{"esc=5"}, `{"esc":"5"}`, 0},
		{[]string{"loop=5"}, `{"loop":5}`, 0},
		{[]string{"tree=5"}, `{"tree":"5"}`, 0},
		{[]string{"ext=5"}, `{"ext":5}`, 0},
		{[]string{"missing=5"}, `{"missing":5}`, 0},
		{[]string{"user.nmae=x"}, `{"user":{"nmae":"x"}}`, 1},
		// A nullable object or array (Optional[User]: anyOf [User, null]).
		{[]string{"opt.name=123", "opt.friend.age=3"}, `{"opt":{"name":"123","friend":{"age":3}}}`, 0},
		{[]string{"list[]=1"}, `{"list":["1"]}`, 0},
		// Through allOf, as pydantic v1 writes a described reference.
		{[]string{"zipall=012"}, `{"zipall":"012"}`, 0},
		{[]string{"uall.name=123", "uall.age=3"}, `{"uall":{"name":"123","age":3}}`, 0},
		{[]string{"both=1e3"}, `{"both":1000}`, 0},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.pairs, " "), func(t *testing.T) {
			got, warnings, err := BuildArguments(tt.pairs, nil, json.RawMessage(schema))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if len(warnings) != tt.warnings {
				t.Errorf("warnings %q, want %d", warnings, tt.warnings)
			}
		})
	}
}

func TestBuildArgumentsMergeAndWarnings(t *testing.T) {
	tests := []struct {
		name         string
		pairs        []string
		base         string
		schema       string
		want         string
		wantWarnings [][]string
		wantErr      bool
	}{
		{
			name:  "pairs merge into --args, order kept",
			pairs: []string{"a=1", "zip=9"}, base: `{"zip":"x","other":true}`, schema: testSchema,
			want: `{"zip":"9","other":true,"a":1}`,
		},
		{
			name:  "later pair wins",
			pairs: []string{"a=1", "a=2"}, schema: testSchema,
			want: `{"a":2}`,
		},
		{
			name:  "unknown key warns and is typed without schema",
			pairs: []string{"nmae=5"}, schema: `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}}}`,
			want:         `{"nmae":5}`,
			wantWarnings: [][]string{{`"nmae"`, "age, name"}},
		},
		{
			name:  "schema without properties: no warnings",
			pairs: []string{"x=1", "y=z"}, schema: `{"type":"object"}`,
			want: `{"x":1,"y":"z"}`,
		},
		{
			name:  "empty properties: every key warns",
			pairs: []string{"x=1"}, schema: `{"type":"object","properties":{}}`,
			want:         `{"x":1}`,
			wantWarnings: [][]string{{`"x"`}},
		},
		{
			name:  "no schema at all",
			pairs: []string{"n=1.5", "b=false", "s=text", "l=[1]", "q=\"quoted\"", "z=012"},
			want:  `{"n":1.5,"b":false,"s":"text","l":[1],"q":"quoted","z":"012"}`,
		},
		{
			name: "only --args", base: `{"a": [1, 2]}`,
			want: `{"a":[1, 2]}`, // member values kept byte for byte
		},
		{
			name: "nothing", want: `{}`,
		},
		{name: "--args not an object", base: `[1]`, wantErr: true},
		{name: "--args with trailing data", base: `{} x`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings, err := BuildArguments(tt.pairs, json.RawMessage(tt.base), json.RawMessage(tt.schema))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("got %s, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if len(warnings) != len(tt.wantWarnings) {
				t.Fatalf("warnings %q, want %d", warnings, len(tt.wantWarnings))
			}
			for i, words := range tt.wantWarnings {
				if !containsAll(warnings[i], words...) {
					t.Errorf("warning %q lacks %q", warnings[i], words)
				}
			}
		})
	}
}

func TestStringArguments(t *testing.T) {
	got, err := StringArguments([]string{"city=Paris", "n=3", "empty=", "eq=a=b", "json={\"x\":1}", `k\=v=1`, `a.b=c`, `back\\=s`})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"city":"Paris","n":"3","empty":"","eq":"a=b","json":"{\"x\":1}","k=v":"1","a.b":"c","back\\":"s"}`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, err := StringArguments(nil); err != nil || string(got) != `{}` {
		t.Errorf("no pairs: %s, %v", got, err)
	}
	var ae *ArgumentError
	if _, err := StringArguments([]string{"novalue"}); !errors.As(err, &ae) {
		t.Errorf("bad pair: err = %v, want *ArgumentError", err)
	}
}

func TestSchemaTypes(t *testing.T) {
	tests := []struct {
		schema string
		want   []string
	}{
		{`{"type":"string"}`, []string{"string"}},
		{`{"type":["string","null"]}`, []string{"null", "string"}},
		{`{"enum":["a",1,null]}`, []string{"null", "number", "string"}},
		{`{"anyOf":[{"type":"integer"},{"oneOf":[{"type":"boolean"}]}]}`, []string{"boolean", "integer"}},
		{`{"const":{"a":1}}`, []string{"object"}},
		{`{"description":"x"}`, nil},
		{``, nil},
		{`"not a schema"`, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, schemaTypes(json.RawMessage(tt.schema))); diff != "" {
			t.Errorf("schemaTypes(%s) (-want +got):\n%s", tt.schema, diff)
		}
	}
}

func TestSuggest(t *testing.T) {
	candidates := []string{"get-sum", "echo", "add", "getTinyImage", "longRunningOperation", "printEnv"}
	tests := []struct {
		name string
		n    int
		want []string
		from []string // instead of candidates
	}{
		// One edit away: the typo's fix alone, not what shares a prefix.
		{"get_sum", 3, []string{"get-sum"}, nil},
		{"get-summ", 3, []string{"get-sum"}, []string{"get-sum", "get-annotated-message", "get-env"}},
		{"get-ann", 3, []string{"get-annotated-message"}, []string{"get-sum", "get-annotated-message", "get-env"}},
		{"get-x", 3, []string{"get-sum", "get-annotated-message", "get-env"}, []string{"get-sum", "get-annotated-message", "get-env"}},
		{"ecoh", 3, []string{"echo"}, nil},
		{"ECHO", 3, []string{"echo"}, nil},
		{"long", 3, []string{"longRunningOperation"}, nil},
		{"get-sum", 1, []string{"get-sum"}, nil},
		{"zzzzzz", 3, nil, nil},
		{"printenv", 3, []string{"printEnv"}, nil},
		// A nameless tool and a name listed twice (a server's list can
		// hold both) are not suggested: "did you mean ev, ?".
		{"ev", 3, []string{"eval"}, []string{"eval", "", "eval", "echo"}},
		{"", 3, nil, nil},
	}
	for _, tt := range tests {
		from := candidates
		if tt.from != nil {
			from = tt.from
		}
		got := Suggest(tt.name, from, tt.n)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Suggest(%q) (-want +got):\n%s", tt.name, diff)
		}
		if len(got) > tt.n {
			t.Errorf("Suggest(%q, n=%d) returned %d", tt.name, tt.n, len(got))
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"héllo", "hello", 1}, {"same", "same", 0},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetry)", tt.b, tt.a, got, tt.want)
		}
	}
}

const nestedSchema = `{"type":"object","properties":{
	"user":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
		"address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string"}}}}},
	"tags":{"type":"array","items":{"type":"string"}},
	"points":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"}}}},
	"file.name":{"type":"string"}}}`

func TestBuildArgumentsPaths(t *testing.T) {
	tests := []struct {
		name         string
		pairs        []string
		base, schema string
		want         string
		wantWarnings [][]string
	}{
		{name: "nested objects, typed by the nested schema",
			pairs: []string{"user.address.city=Paris", "user.address.zip=75001", "user.age=36", "user.name=007"}, schema: nestedSchema,
			want: `{"user":{"address":{"city":"Paris","zip":"75001"},"age":36,"name":"007"}}`},
		{name: "without a schema",
			pairs: []string{"user.address.city=Paris", "user.age=36"},
			want:  `{"user":{"address":{"city":"Paris"},"age":36}}`},
		{name: "array elements by index and appended",
			pairs: []string{"tags[0]=1", "tags[]=2", "tags[1]=3", "points[0].x=1.5", "points[].x=2"}, schema: nestedSchema,
			want: `{"tags":["1","3"],"points":[{"x":1.5},{"x":2}]}`},
		{name: "into the base, keeping what it has",
			pairs: []string{"user.address.city=Lyon", "tags[]=new"}, base: `{"user":{"name":"Ada","address":{"zip":"69001"}},"tags":["old"]}`, schema: nestedSchema,
			want: `{"user":{"name":"Ada","address":{"zip":"69001","city":"Lyon"}},"tags":["old","new"]}`},
		{name: "a JSON object, then a member of it",
			pairs: []string{`user={"name":"Ada"}`, "user.age=36"}, schema: nestedSchema,
			want: `{"user":{"name":"Ada","age":36}}`},
		{name: "a key the schema has with a dot stays one key",
			pairs: []string{"file.name=a.txt"}, schema: nestedSchema,
			want: `{"file.name":"a.txt"}`},
		{name: "an escaped dot",
			pairs: []string{`a\.b=1`, `c\\d.e=2`, `f\[0\]=3`},
			want:  `{"a.b":1,"c\\d":{"e":2},"f[0]":3}`},
		{name: "an escaped = is part of the key; the value is all after the first other =",
			pairs: []string{`k\=v=hi`, `a\=b.c=x=y`, `d\\=1`},
			want:  `{"k=v":"hi","a=b":{"c":"x=y"},"d\\":1}`},
		{name: "an escaped = typed by the schema's key",
			pairs: []string{`k\=v=12`}, schema: `{"type":"object","properties":{"k=v":{"type":"string"}}}`,
			want: `{"k=v":"12"}`},
		{name: "unknown nested property warns",
			pairs: []string{"user.adress.city=Paris"}, schema: nestedSchema,
			want:         `{"user":{"adress":{"city":"Paris"}}}`,
			wantWarnings: [][]string{{`the schema of user has no property "adress"`, "address, age, name"}}},
		{name: "a member of a map, typed by additionalProperties",
			pairs: []string{"env.HOME=123", "env.ZIP=007", "opt.env.N=1", "limits.cpu=2"},
			schema: `{"type":"object","properties":{
				"env":{"type":"object","additionalProperties":{"type":"string"}},
				"opt":{"anyOf":[{"type":"object","properties":{"env":{"type":"object","additionalProperties":{"type":"string"}}}},{"type":"null"}]},
				"limits":{"type":"object","properties":{"mem":{"type":"integer"}},"additionalProperties":{"type":"integer"}}}}`,
			want: `{"env":{"HOME":"123","ZIP":"007"},"opt":{"env":{"N":"1"}},"limits":{"cpu":2}}`},
		{name: "a member typed by patternProperties, first match",
			pairs: []string{"labels.x-id=42", "labels.other=42"},
			schema: `{"type":"object","properties":{"labels":{"type":"object",
				"patternProperties":{"^x-":{"type":"string"},"[":{"type":"integer"}},"additionalProperties":{"type":"integer"}}}}`,
			want: `{"labels":{"x-id":"42","other":42}}`},
		{name: "a top-level member typed by additionalProperties",
			pairs: []string{"a=1", "b=2"}, schema: `{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"string"}}`,
			want: `{"a":1,"b":"2"}`},
		{name: "additionalProperties false still warns",
			pairs: []string{"m.k=1"}, schema: `{"type":"object","properties":{"m":{"type":"object","properties":{"j":{"type":"integer"}},"additionalProperties":false}}}`,
			want:         `{"m":{"k":1}}`,
			wantWarnings: [][]string{{`the schema of m has no property "k"`}}},
		{name: "an inputSchema that is a $ref",
			pairs:  []string{"s=123", "i=5"},
			schema: `{"type":"object","$ref":"#/$defs/Args","$defs":{"Args":{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer"}}}}}`,
			want:   `{"s":"123","i":5}`},
		{name: "an inputSchema that is an allOf of object schemas",
			pairs: []string{"s=123", "i=5", "o.t=1"},
			schema: `{"type":"object","properties":{"o":{"type":"object"}},"allOf":[{"properties":{"s":{"type":"string"}}},{"$ref":"#/$defs/I"}],
				"$defs":{"I":{"properties":{"i":{"type":"integer"}}}}}`,
			want: `{"s":"123","i":5,"o":{"t":1}}`},
		{name: "a member of the second schema of an allOf",
			pairs:  []string{"o.s=123", "o.i=5"},
			schema: `{"type":"object","properties":{"o":{"allOf":[{"type":"object","properties":{"s":{"type":"string"}}},{"type":"object","properties":{"i":{"type":"string"}}}]}}}`,
			want:   `{"o":{"s":"123","i":"5"}}`},
		{name: "a type that is not a JSON Schema type is not there",
			pairs:  []string{"a=1", "b=x", "c=007"},
			schema: `{"type":"object","properties":{"a":{"type":"strng"},"b":{"type":"strng"},"c":{"type":["strng","integer"]}}}`,
			want:   `{"a":1,"b":"x","c":7}`},
		{name: "unknown top-level key warns as before",
			pairs: []string{"usr.name=x"}, schema: nestedSchema,
			want:         `{"usr":{"name":"x"}}`,
			wantWarnings: [][]string{{`the schema has no argument "usr"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings, err := BuildArguments(tt.pairs, json.RawMessage(tt.base), json.RawMessage(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if len(warnings) != len(tt.wantWarnings) {
				t.Fatalf("warnings %q, want %d", warnings, len(tt.wantWarnings))
			}
			for i, words := range tt.wantWarnings {
				if !containsAll(warnings[i], words...) {
					t.Errorf("warning %q lacks %q", warnings[i], words)
				}
			}
		})
	}
}

func TestBuildArgumentsPathErrors(t *testing.T) {
	tests := []struct {
		name  string
		pairs []string
		base  string
		words []string
	}{
		{"a value, then a member of it", []string{"a=1", "a.b=2"}, "", []string{"argument a.b=2", "a is 1, not an object", "set by a=1"}},
		{"a member, then the value", []string{"a.b=2", "a=1"}, "", []string{"argument a=1", "replace what a.b=2 set inside a"}},
		{"a member, then a JSON object", []string{"a.b=2", `a={"x":1}`}, "", []string{"replace what a.b=2 set"}},
		{"the base's value is not an object", []string{"a.b=2"}, `{"a":"text"}`, []string{`a is "text", not an object`}},
		{"an index into an object", []string{"a.b=1", "a[0]=2"}, "", []string{"a is {", "not an array"}},
		{"a gap in an array", []string{"tags[2]=x"}, "", []string{"tags has 0 elements", "[2]"}},
		{"two dots", []string{"a..b=1"}, "", []string{"not a path", "empty"}},
		{"a trailing dot", []string{"a.=1"}, "", []string{"empty"}},
		{"a leading dot", []string{".a=1"}, "", []string{"empty"}},
		{"an open bracket", []string{"a[0=1"}, "", []string{"not closed"}},
		{"a bad index", []string{"a[x]=1"}, "", []string{"[x] is not an array index"}},
		{"a negative index", []string{"a[-1]=1"}, "", []string{"not an array index"}},
		{"text after ]", []string{"a[0]b=1"}, "", []string{"must follow a dot"}},
		{"a stray ]", []string{"a]=1"}, "", []string{"without its ["}},
		{"only an escaped =", []string{`a\=1`}, "", []string{`argument "a\=1": expected key=value`, `\= is an = in the key`}},
		{"an index first", []string{"[0]=1"}, "", []string{"starts with a member name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := BuildArguments(tt.pairs, json.RawMessage(tt.base), nil)
			var ae *ArgumentError
			if !errors.As(err, &ae) {
				t.Fatalf("got %s, %v; want an *ArgumentError", got, err)
			}
			if !containsAll(err.Error(), tt.words...) {
				t.Errorf("message %q lacks %q", err, tt.words)
			}
		})
	}
}

// An argument is quoted in its error bounded, its control characters
// escaped: the message stays one line whatever was pasted.
func TestArgumentErrorQuotesBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("9", 5000) + "\x1b[2J\nEND"
	schema := []byte(`{"type":"object","properties":{"n":{"type":"number"}}}`)
	for _, pair := range []string{long, "n=" + long} {
		_, _, err := BuildArguments([]string{pair}, nil, schema)
		var ae *ArgumentError
		if !errors.As(err, &ae) {
			t.Fatalf("BuildArguments(%.20q…) = %v, want an *ArgumentError", pair, err)
		}
		msg := err.Error()
		if len(msg) > 600 || strings.ContainsAny(msg, "\x1b\n") || strings.Contains(msg, "END") || !strings.Contains(msg, "… (") {
			t.Errorf("error (%d bytes): %.400q", len(msg), msg)
		}
	}
}
