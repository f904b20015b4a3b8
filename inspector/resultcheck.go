package inspector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/mcp"
)

// maxStructuredCheck bounds the structuredContent checked against an
// outputSchema: checking decodes the value, which costs several times its
// size in memory, and a result may be as large as a frame.
const maxStructuredCheck = 16 << 20

// maxResultProblems bounds the problems said about the items of one
// result.
const maxResultProblems = 5

// ToolResultProblems returns the ways res, the result of a tools/call of
// tool name, departs from CallToolResult in the session's revision (spec:
// server/tools, "Tool Result"; schema.json's CallToolResult and content
// blocks), one line each: an inspector shows the result as it came and
// says what is wrong with it, never hides it.
//
// When the session's copy of tools/list has the tool and the tool declares
// an outputSchema, the result must carry structuredContent that matches
// it (server/tools, "Output Schema": servers MUST provide structured
// results that conform, clients SHOULD validate them); a result with
// isError is not held to the schema. The check reads only the copy the
// session already has: it never lists the tools for it, so it adds
// nothing to the wire.
func (s *Session) ToolResultProblems(name string, res json.RawMessage) []string {
	raw := bytes.TrimSpace(res)
	if !isObject(raw) {
		return []string{"the result is not a JSON object"}
	}
	var content, isError, structured []byte
	rawjson.Members(raw, func(n, v []byte) bool {
		// Exact names, the last of duplicates, as a JSON decoder
		// of the spec's types reads them.
		switch {
		case rawjson.NameIs(n, "content"):
			content = v
		case rawjson.NameIs(n, "isError"):
			isError = v
		case rawjson.NameIs(n, "structuredContent"):
			structured = v
		}
		return true
	})
	var out []string
	add := func(format string, args ...any) {
		out = append(out, fmt.Sprintf(format, args...))
	}
	if content == nil {
		add(`it has no "content" (a CallToolResult must have one, if only [])`)
	} else {
		// The blocks are read in place: a result may be as large as a
		// frame.
		var blocks [][]byte
		if rawjson.Elements(content, func(block []byte) bool {
			blocks = append(blocks, block)
			return true
		}) {
			out = append(out, itemProblems("content", "content blocks", blocks, contentBlockProblem)...)
		} else {
			add(`"content" is not an array`)
		}
	}
	if isError != nil && string(isError) != "true" && string(isError) != "false" {
		add(`"isError" is not a boolean`)
	}
	version := ""
	if srv := s.Server(); srv != nil {
		version = srv.ProtocolVersion
	}
	// Before 2026-07-28 structuredContent is an object; from it, any JSON
	// value (2026-07-28: server/tools, "Structured Content").
	modern := mcp.IsModernVersion(version)
	if structured != nil && !modern && !isObject(structured) {
		add(`"structuredContent" is not an object`)
	}
	if string(isError) == "true" {
		return out
	}
	return append(out, s.outputSchemaProblems(name, structured, modern)...)
}

// CallToolParams sends tools/call with params as another client wrote them
// (an MCP Apps view's call, passed on by the host) and returns the result
// as it came; each way it departs from the spec (ToolResultProblems) is a
// session warning, so a view's calls are held to the same rules as a
// person's.
func (s *Session) CallToolParams(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	res, err := s.Call(ctx, mcp.MethodToolsCall, params)
	if err != nil {
		return nil, err
	}
	name, _ := rawjson.String(rawjson.Member(params, "name"))
	for _, p := range s.ToolResultProblems(name, res) {
		s.depart(ctx, "the result of tool %q departs from the spec (server/tools): %s", name, p)
	}
	return res, nil
}

// outputSchemaProblems checks structured (nil when the result has none)
// against tool name's outputSchema, when the session's copy of tools/list
// has one.
func (s *Session) outputSchemaProblems(name string, structured []byte, modern bool) []string {
	tool, _ := s.tools.lookupStale(name)
	if tool == nil {
		return nil
	}
	schema := rawjson.Member(tool, "outputSchema")
	if schema == nil || rawjson.IsNull(schema) {
		return nil
	}
	if structured == nil || !modern && rawjson.IsNull(structured) {
		return []string{"the tool declares an outputSchema, but the result has no structuredContent (servers MUST give structured results that conform to it)"}
	}
	if len(structured) > maxStructuredCheck {
		return []string{fmt.Sprintf("structuredContent (%d bytes) is too large to check against the tool's outputSchema", len(structured))}
	}
	compiled, err := s.tools.outputSchema(name, schema)
	if err != nil {
		return []string{fmt.Sprintf("structuredContent is not checked: the tool's outputSchema: %v", err)}
	}
	problems, err := compiled.problems(structured)
	switch {
	case err != nil:
		return []string{fmt.Sprintf("structuredContent is not checked against the tool's outputSchema: %v", err)}
	case len(problems) > maxResultProblems:
		problems = append(problems[:maxResultProblems], "…")
	}
	var out []string
	for _, p := range problems {
		out = append(out, "structuredContent does not match the tool's outputSchema: "+p)
	}
	return out
}

// contentBlockProblem returns what is wrong with one content block of a
// result ("" when nothing is): the members schema.json requires of each
// type it defines. A type the revisions do not define is left alone (an
// extension's, or a newer revision's).
func contentBlockProblem(block []byte) string {
	// One pass over the block's members (its text may be most of the
	// result), the last of duplicates kept.
	var typ, text, data, mimeType, uri, name, resource []byte
	if !rawjson.Members(block, func(n, v []byte) bool {
		switch rawjson.Name(n) {
		case "type":
			typ = v
		case "text":
			text = v
		case "data":
			data = v
		case "mimeType":
			mimeType = v
		case "uri":
			uri = v
		case "name":
			name = v
		case "resource":
			resource = v
		}
		return true
	}) {
		return "is not an object"
	}
	t, ok := rawjson.String(typ)
	if !ok {
		return `has no string "type"`
	}
	var need []string
	var vals [][]byte
	switch t {
	case "text":
		need, vals = []string{"text"}, [][]byte{text}
	case "image", "audio":
		need, vals = []string{"data", "mimeType"}, [][]byte{data, mimeType}
	case "resource_link":
		need, vals = []string{"uri", "name"}, [][]byte{uri, name}
	case "resource":
		var ruri, rtext, rblob []byte
		if !rawjson.Members(resource, func(n, v []byte) bool {
			switch rawjson.Name(n) {
			case "uri":
				ruri = v
			case "text":
				rtext = v
			case "blob":
				rblob = v
			}
			return true
		}) {
			return `(resource) has no "resource" object`
		}
		if !rawjson.IsString(ruri) || !rawjson.IsString(rtext) && !rawjson.IsString(rblob) {
			return `(resource) has no "resource" with a string "uri" and a string "text" or "blob"`
		}
		if p := base64Problem("blob", rtext, rblob); p != "" {
			return "(resource) " + p
		}
	}
	for i, n := range need {
		if !rawjson.IsString(vals[i]) {
			return fmt.Sprintf("(%s) has no string %q", t, n)
		}
	}
	if t == "image" || t == "audio" {
		if p := base64Problem("data", nil, data); p != "" {
			return fmt.Sprintf("(%s) %s", t, p)
		}
	}
	return ""
}

// base64Problem says what is wrong with the base64 member name of a
// content ("" when nothing is): data that does not decode (schema.json:
// "format": "byte"), or, for a resource's contents, a blob given
// besides a text (TextResourceContents or BlobResourceContents, not both:
// a client shows one, and the other is lost). text is nil when the
// contents have none, value nil when they have no string name.
func base64Problem(name string, text, value []byte) string {
	if !rawjson.IsString(value) {
		return ""
	}
	if rawjson.IsString(text) {
		return `has both a "text" and a "blob" (a resource's contents are one or the other)`
	}
	if _, err := Base64Len(value); err != nil {
		return fmt.Sprintf("has a %q that is not valid base64 (%v)", name, err)
	}
	return ""
}

// PromptResultProblems returns the ways res, a prompts/get result, departs
// from GetPromptResult (spec: server/prompts, "Getting a Prompt";
// schema.json's GetPromptResult and PromptMessage), one line each: a
// messages array whose every message has the role user or assistant and
// a content block.
func PromptResultProblems(res json.RawMessage) []string {
	items, problem := memberArray(res, "messages", "GetPromptResult")
	if problem != "" {
		return []string{problem}
	}
	return itemProblems("messages", "messages", items, promptMessageProblem)
}

func promptMessageProblem(msg []byte) string {
	var role, content []byte
	if !rawjson.Members(msg, func(n, v []byte) bool {
		switch rawjson.Name(n) {
		case "role":
			role = v
		case "content":
			content = v
		}
		return true
	}) {
		return "is not an object"
	}
	if r, _ := rawjson.String(role); r != "user" && r != "assistant" {
		if role == nil {
			return `has no "role"`
		}
		return fmt.Sprintf("has the role %s, which is neither \"user\" nor \"assistant\"", rawjson.Excerpt(role, 40))
	}
	if content == nil {
		return `has no "content"`
	}
	if p := contentBlockProblem(content); p != "" {
		return "content " + p
	}
	return ""
}

// ResourceResultProblems returns the ways res, a resources/read result,
// departs from ReadResourceResult (spec: server/resources, "Reading
// Resources"; schema.json's TextResourceContents and
// BlobResourceContents), one line each: a contents array whose every item
// has a string uri and a string text or blob.
func ResourceResultProblems(res json.RawMessage) []string {
	items, problem := memberArray(res, "contents", "ReadResourceResult")
	if problem != "" {
		return []string{problem}
	}
	return itemProblems("contents", "contents", items, resourceContentProblem)
}

// resourceContentProblem says what is wrong with one item of a
// ReadResourceResult's contents ("" when nothing is).
func resourceContentProblem(it []byte) string {
	var uri, text, blob []byte
	ok := rawjson.Members(it, func(n, v []byte) bool {
		switch rawjson.Name(n) {
		case "uri":
			uri = v
		case "text":
			text = v
		case "blob":
			blob = v
		}
		return true
	})
	switch {
	case !ok:
		return "is not an object"
	case !rawjson.IsString(uri):
		return `has no string "uri"`
	case !rawjson.IsString(text) && !rawjson.IsString(blob):
		return `has neither a string "text" nor a string "blob"`
	}
	return base64Problem("blob", text, blob)
}

// itemProblems says what problem finds wrong with each of items, the
// elements of the array member name ("content[2] is not an object"): at
// most maxResultProblems lines, the last counting the rest (a result of
// ten thousand malformed blocks is one mistake, made many times).
func itemProblems(name, plural string, items [][]byte, problem func([]byte) string) []string {
	var out []string
	bad := 0
	for i, it := range items {
		p := problem(it)
		if p == "" {
			continue
		}
		if bad < maxResultProblems-1 {
			out = append(out, fmt.Sprintf("%s[%d] %s", name, i, p))
		}
		bad++
	}
	if bad > maxResultProblems-1 {
		out = append(out, fmt.Sprintf("and %d more %s depart from the spec", bad-(maxResultProblems-1), plural))
	}
	return out
}

// memberArray returns the elements of the array member name of the result
// res, or a problem saying the result (a what) has none.
func memberArray(res json.RawMessage, name, what string) ([][]byte, string) {
	raw := bytes.TrimSpace(res)
	if !isObject(raw) {
		return nil, "the result is not a JSON object"
	}
	var v []byte
	rawjson.Members(raw, func(n, val []byte) bool {
		if rawjson.NameIs(n, name) {
			v = val
		}
		return true
	})
	if v == nil {
		return nil, fmt.Sprintf("it has no %q (a %s must have one)", name, what)
	}
	var items [][]byte
	if !rawjson.Elements(v, func(e []byte) bool {
		items = append(items, e)
		return true
	}) {
		return nil, fmt.Sprintf("%q is not an array", name)
	}
	return items, ""
}

// maxListProblems bounds the problems said about one list.
const maxListProblems = 10

// ListProblems returns the ways the items of a full list (tools/list,
// prompts/list, resources/list or resources/templates/list, every page)
// depart from the spec, one line each: an item that is not an object or
// lacks a member its type requires (schema.json: Tool needs name and an
// inputSchema of type "object", Prompt a name, Resource a name and uri,
// ResourceTemplate a name and uriTemplate), a tool or prompt name listed
// more than once, and, from 2025-11-25, a tool name outside the
// recommended form (server/tools, "Tool Names": 1 to 128 of A-Z, a-z,
// 0-9, _, - and .). A server author meets them here, where the list is
// read, rather than as a host's refusal.
//
// At most ten problems are said, a last line counting the rest ("and 5
// more problems"); n is how many problems there are in all, each a
// departure, so that a count of departures (--strict's) is exact.
func (s *Session) ListProblems(method string, items []json.RawMessage) (lines []string, n int) {
	return s.listProblems(method, items, maxListProblems)
}

// listProblems is ListProblems saying at most max problems, the last line
// counting the rest; every one when max is 0 (Check's report).
func (s *Session) listProblems(method string, items []json.RawMessage, max int) (lines []string, n int) {
	if method == ListSkills {
		return skillListProblems(items, max)
	}
	spec, ok := listItemSpecs[method]
	if !ok {
		return nil, 0
	}
	kind, required := spec.kind, spec.required
	version := ""
	if srv := s.Server(); srv != nil {
		version = srv.ProtocolVersion
	}
	namesAdvised := version >= "2025-11-25"
	var out []string
	more := 0
	add := func(format string, args ...any) {
		if max == 0 || len(out) < max {
			out = append(out, fmt.Sprintf(format, args...))
		} else {
			more++
		}
	}
	var count map[string]int
	var order []string
	if method == ListTools || method == ListPrompts {
		count, order = make(map[string]int, len(items)), make([]string, 0, len(items))
	}
	iconsDefined := version >= "2025-11-25"
	for i, it := range items {
		var name string
		var have [3]bool // of requiredNames
		var inputSchema []byte
		var mistyped []string // optional members of another type than the schema's
		if !rawjson.Members(it, func(n, v []byte) bool {
			// Names compared in place: a list may have 10,000 items.
			switch {
			case rawjson.NameIs(n, "inputSchema"):
				inputSchema = v
			case rawjson.NameIs(n, "name"):
				name, have[0] = rawjson.String(v)
			case rawjson.NameIs(n, "uri"):
				have[1] = rawjson.IsString(v)
			case rawjson.NameIs(n, "uriTemplate"):
				have[2] = rawjson.IsString(v)
			case method == ListPrompts && rawjson.NameIs(n, "arguments"):
				if p := promptArgumentsProblem(v); p != "" {
					mistyped = append(mistyped, p)
				}
			default:
				if p := optionalMemberProblem(n, v, iconsDefined); p != "" {
					mistyped = append(mistyped, p)
				}
			}
			return true
		}) {
			add("%s %d of the list is not an object", kind, i+1)
			continue
		}
		for _, r := range required {
			if !have[slices.Index(requiredNames, r)] {
				add("%s has no string %q", itemLabel(kind, name, i), r)
			}
		}
		for _, p := range mistyped {
			add("%s %s", itemLabel(kind, name, i), p)
		}
		hasName := have[0]
		if method == ListTools {
			t := rawjson.Member(inputSchema, "type")
			switch {
			case inputSchema == nil:
				add("%s has no inputSchema (a tool must have one, if only {\"type\": \"object\"})", itemLabel(kind, name, i))
			case !rawjson.IsString(t) || string(rawjson.StringBytes(t)) != "object":
				add("%s has an inputSchema whose type is not \"object\"", itemLabel(kind, name, i))
			}
			switch {
			case !hasName || !namesAdvised:
			case name == "":
				add("tool %d of the list has an empty name", i+1)
			default:
				if p := toolNameProblem(name); p != "" {
					add("tool name %q %s (spec server/tools, \"Tool Names\")", rawjson.Shorten(name, 60), p)
				}
			}
		}
		if hasName && (method == ListTools || method == ListPrompts) {
			if count[name] == 0 {
				order = append(order, name)
			}
			count[name]++
		}
	}
	for _, n := range order {
		if count[n] > 1 {
			add("%s %q is listed %d times (a client can call only one of them by name)", kind, rawjson.Shorten(n, 60), count[n])
		}
	}
	n = len(out) + more
	if more > 0 {
		out = append(out, fmt.Sprintf("and %d more problems", more))
	}
	return out, n
}

// optionalMemberProblem says how the optional member n (a JSON name) of a
// listed tool, prompt, resource or template departs from the type
// schema.json gives it, "" when it does not or is not one of those
// checked: title, description and mimeType are strings; annotations,
// _meta and outputSchema objects; size an integer; icons (2025-11-25;
// iconsDefined) an array of Icon objects, each with a string src that is
// an http:, https: or data: URI (iconSrcProblem). A
// null is taken as the member left out. A client that reads the list
// with the spec's types refuses the item, or the whole list, for it.
func optionalMemberProblem(n, v []byte, iconsDefined bool) string {
	if rawjson.IsNull(v) {
		return ""
	}
	name := rawjson.MatchName(n, "title", "description", "mimeType", "annotations", "_meta", "outputSchema", "size", "icons")
	if name == "" || !rawjson.NameIs(n, name) {
		return ""
	}
	switch name {
	case "title", "description", "mimeType":
		if !rawjson.IsString(v) {
			return fmt.Sprintf("has a %q that is %s, not a string", name, rawjson.Kind(v))
		}
	case "annotations", "_meta", "outputSchema":
		if !isObject(v) {
			return fmt.Sprintf("has %q that is %s, not an object", name, rawjson.Kind(v))
		}
	case "size":
		if !isInteger(v) {
			return fmt.Sprintf("has a \"size\" that is %s, not an integer", rawjson.Excerpt(v, 40))
		}
	case "icons":
		if !iconsDefined {
			return ""
		}
		bad, why := -1, ""
		i := 0
		if !rawjson.Elements(v, func(icon []byte) bool {
			src, ok := "", false
			if isObject(icon) {
				src, ok = rawjson.String(rawjson.Member(icon, "src"))
			}
			if !ok {
				bad, why = i, "that is not an object with a string \"src\""
				return false
			}
			if p := iconSrcProblem(src); p != "" {
				bad, why = i, p
				return false
			}
			i++
			return true
		}) {
			return fmt.Sprintf("has \"icons\" that is %s, not an array", rawjson.Kind(v))
		}
		if bad >= 0 {
			return fmt.Sprintf("has an icon (%d of \"icons\") %s", bad+1, why)
		}
	}
	return ""
}

// iconSrcProblem says how an icon's src departs from what the spec lets a
// client use, "" when it does not. Spec 2025-11-25 (and 2026-07-28),
// basic, "icons": src "can be: An HTTP/HTTPS URL pointing to an image
// file; A data URI with base64-encoded image data" (schema.json, Icon.src:
// "May be an HTTP/HTTPS URL or a data: URI"); Security considerations:
// "Clients MUST reject icon URIs that use unsafe schemes and redirects,
// such as javascript:, file:, ftp:, ws:, or local app URI schemes." An
// http: src is allowed, though a careful host may fetch only https: ones
// ("Ensure that the icon URI is either a HTTPS or data: URI" is the
// consumer's precaution). mcpx never loads an icon; a server author
// learns here that hosts will refuse it. An SVG in a data: URI may hold
// script too, but that the spec leaves to the consumer's precautions
// ("MAY choose to disallow specific file types"): it is no departure.
func iconSrcProblem(src string) string {
	scheme, _, ok := strings.Cut(src, ":")
	if !ok || !isURIScheme(scheme) {
		return "whose \"src\" is not a URI with a scheme (an icon is an http:, https: or data: URI: basic, \"icons\")"
	}
	switch strings.ToLower(scheme) {
	case "https", "http", "data":
		return ""
	}
	return fmt.Sprintf("whose \"src\" is a %s: URI, which clients must reject (an icon is an http:, https: or data: URI: basic, \"icons\")", rawjson.Shorten(scheme, 20))
}

// isURIScheme reports whether s is a URI scheme (RFC 3986 section 3.1:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
func isURIScheme(s string) bool {
	for i, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// promptArgumentsProblem says how a prompt's arguments depart from
// schema.json's (an array of PromptArgument, each with a string name and
// a boolean required if any), "" when they do not; null is taken as
// none. Only the first argument that departs is named.
func promptArgumentsProblem(v []byte) string {
	if rawjson.IsNull(v) {
		return ""
	}
	bad, i := "", 0
	if !rawjson.Elements(v, func(arg []byte) bool {
		i++
		switch {
		case !isObject(arg) || !rawjson.IsString(rawjson.Member(arg, "name")):
			bad = fmt.Sprintf("has an argument (%d of \"arguments\") that is not an object with a string \"name\"", i)
		case !isBoolOrAbsent(rawjson.Member(arg, "required")):
			bad = fmt.Sprintf("has an argument (%d of \"arguments\") whose \"required\" is not a boolean", i)
		}
		return bad == ""
	}) {
		return fmt.Sprintf("has \"arguments\" that is %s, not an array", rawjson.Kind(v))
	}
	return bad
}

// isBoolOrAbsent reports whether v, a member's value (nil when absent),
// is absent, null or a boolean.
func isBoolOrAbsent(v []byte) bool {
	return v == nil || rawjson.IsNull(v) || string(v) == "true" || string(v) == "false"
}

// itemLabel names item i (from 0) of a list, a kind, for a person: by its
// name when it has one, else by its place.
func itemLabel(kind, name string, i int) string {
	if name != "" {
		return fmt.Sprintf("%s %q", kind, rawjson.Shorten(name, 60))
	}
	return fmt.Sprintf("%s %d of the list", kind, i+1)
}

// requiredNames are the members listItemSpecs may require, "name" first.
var requiredNames = []string{"name", "uri", "uriTemplate"}

// listItemSpecs names the items of each list method and the string
// members schema.json requires of them.
var listItemSpecs = map[string]struct {
	kind     string
	required []string
}{
	ListTools:             {"tool", []string{"name"}},
	ListPrompts:           {"prompt", []string{"name"}},
	ListResources:         {"resource", []string{"name", "uri"}},
	ListResourceTemplates: {"resource template", []string{"name", "uriTemplate"}},
}

// toolNameProblem says how name strays from the form 2025-11-25
// recommends for tool names ("" when it does not).
func toolNameProblem(name string) string {
	if n := utf8.RuneCountInString(name); n > 128 {
		return fmt.Sprintf("is %d characters long, not 1 to 128", n)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return "has characters other than A-Z, a-z, 0-9, _, - and ."
		}
	}
	return ""
}

// logLevels are the levels of a notifications/message, RFC 5424's (spec:
// server/utilities/logging, "Log Levels").
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// logMessageProblem says how the params of a notifications/message depart
// from LoggingMessageNotification ("" when they do not): a level that is
// not one of logLevels, or no data.
func logMessageProblem(params json.RawMessage) string {
	var level, data []byte
	if !rawjson.Members(params, func(n, v []byte) bool {
		switch {
		case rawjson.NameIs(n, "level"):
			level = v
		case rawjson.NameIs(n, "data"):
			data = v
		}
		return true
	}) {
		return "without params"
	}
	l, _ := rawjson.String(level)
	switch {
	case level == nil:
		return "without a level"
	case !slices.Contains(logLevels, l):
		return fmt.Sprintf("with the level %s, which is none of %s", rawjson.Excerpt(level, 40), strings.Join(logLevels, ", "))
	case data == nil:
		return "without data"
	}
	return ""
}

// maxCompletionValues is how many values a CompleteResult may hold (spec:
// server/utilities/completion; schema.json: values "maxItems": 100).
const maxCompletionValues = 100

// CompleteResultProblems returns the ways res, a completion/complete
// result, departs from CompleteResult (spec: server/utilities/completion;
// schema.json's CompleteResult), one line each: a completion object whose
// values are an array of at most 100 strings, whose total is an integer
// and whose hasMore is a boolean. completion/complete answers a person
// typing, so the session does not say these itself: the command that
// shows a result does (the REPL's tab completion stays quiet).
func CompleteResultProblems(res json.RawMessage) []string {
	raw := bytes.TrimSpace(res)
	if !isObject(raw) {
		return []string{"the result is not a JSON object"}
	}
	completion := rawjson.Member(raw, "completion")
	var values, total, hasMore []byte
	if !rawjson.Members(completion, func(n, v []byte) bool {
		switch {
		case rawjson.NameIs(n, "values"):
			values = v
		case rawjson.NameIs(n, "total"):
			total = v
		case rawjson.NameIs(n, "hasMore"):
			hasMore = v
		}
		return true
	}) {
		return []string{`it has no "completion" object`}
	}
	var out []string
	n, notString := 0, 0
	if !rawjson.Elements(values, func(v []byte) bool {
		n++
		if !rawjson.IsString(v) {
			notString++
		}
		return true
	}) {
		out = append(out, `its completion has no "values" array`)
	}
	if notString > 0 {
		out = append(out, fmt.Sprintf("%d of its completion values are not strings", notString))
	}
	if n > maxCompletionValues {
		out = append(out, fmt.Sprintf("it has %d completion values, more than the %d allowed", n, maxCompletionValues))
	}
	if total != nil {
		// An integer, however large: digits, or a number with a zero
		// fraction as JSON Schema counts it (1.0).
		f, err := strconv.ParseFloat(string(total), 64)
		if !isInteger(total) && (err != nil || f != math.Trunc(f)) {
			out = append(out, fmt.Sprintf("its completion total %s is not an integer", rawjson.Excerpt(total, 40)))
		}
	}
	if hasMore != nil && string(hasMore) != "true" && string(hasMore) != "false" {
		out = append(out, fmt.Sprintf("its completion hasMore %s is not a boolean", rawjson.Excerpt(hasMore, 40)))
	}
	return out
}

// isInteger reports whether the JSON value v is digits, with a sign or
// not.
func isInteger(v []byte) bool {
	v = bytes.TrimPrefix(v, []byte("-"))
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// progressProblem says how the params of a notifications/progress depart
// from ProgressNotificationParams so far that mcpx cannot take them as
// progress ("" when they do not): no progressToken, or one that is
// neither a string nor a number (a ProgressToken); no progress, or one
// that is not a number (or one no float64 holds, such as 1e400); a total
// that is not such a number; a message that is not a string. A null total
// or message is taken as none.
func progressProblem(params json.RawMessage) string {
	var token, progress, total, message []byte
	if !rawjson.Members(params, func(n, v []byte) bool {
		switch {
		case rawjson.NameIs(n, "progressToken"):
			token = v
		case rawjson.NameIs(n, "progress"):
			progress = v
		case rawjson.NameIs(n, "total"):
			total = v
		case rawjson.NameIs(n, "message"):
			message = v
		}
		return true
	}) {
		return "without params"
	}
	// number says what keeps the value v from being read as a number.
	number := func(v []byte) string {
		if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
			return "which is not a number"
		}
		if _, err := strconv.ParseFloat(string(v), 64); err != nil {
			return "which is beyond the range of a 64-bit float"
		}
		return ""
	}
	switch {
	case token == nil:
		return "without a progressToken"
	case !rawjson.IsString(token) && number(token) == "which is not a number":
		return fmt.Sprintf("with the progressToken %s, which is neither a string nor a number", rawjson.Excerpt(token, 40))
	case progress == nil:
		return "without a progress"
	case number(progress) != "":
		return fmt.Sprintf("with the progress %s, %s", rawjson.Excerpt(progress, 40), number(progress))
	case total != nil && !rawjson.IsNull(total) && number(total) != "":
		return fmt.Sprintf("with the total %s, %s", rawjson.Excerpt(total, 40), number(total))
	case message != nil && !rawjson.IsNull(message) && !rawjson.IsString(message):
		return fmt.Sprintf("with the message %s, which is not a string", rawjson.Excerpt(message, 40))
	}
	return ""
}

// initializeResult is what the handshake reads of an InitializeResult.
type initializeResult struct {
	ProtocolVersion string
	// BadVersion is the protocolVersion as received (a JSON excerpt) when
	// it is present but names no version: not a string, or "".
	BadVersion   string
	Capabilities json.RawMessage
	ServerInfo   Implementation
	Instructions string
}

// readInitializeResult reads an initialize result (spec: basic/lifecycle,
// "Initialization"; schema.json's InitializeResult). Only a result that is
// not an object is an error; a protocolVersion that names no version (not
// a string, or empty) is left in BadVersion for the handshake to refuse
// as it refuses one that is missing. Anything else the spec
// requires and the server left out or mistyped (capabilities, serverInfo
// with its name and version, a string instructions) is a problem to say;
// the session goes on with what there is.
func readInitializeResult(raw json.RawMessage) (initializeResult, []string, error) {
	var res initializeResult
	var version, caps, info, instructions []byte
	if !rawjson.Members(raw, func(n, v []byte) bool {
		switch {
		case rawjson.NameIs(n, "protocolVersion"):
			version = v
		case rawjson.NameIs(n, "capabilities"):
			caps = v
		case rawjson.NameIs(n, "serverInfo"):
			info = v
		case rawjson.NameIs(n, "instructions"):
			instructions = v
		}
		return true
	}) {
		return res, nil, violation(errors.New("the result is not an InitializeResult: it is not a JSON object"))
	}
	if version != nil {
		v, ok := rawjson.String(version)
		if !ok || v == "" {
			res.BadVersion = rawjson.Excerpt(version, 40)
		} else {
			res.ProtocolVersion = v
		}
	}
	var problems []string
	switch {
	case caps == nil:
		problems = append(problems, `it has no "capabilities" (an InitializeResult must have them, if only {})`)
	case !isObject(caps):
		problems = append(problems, `its "capabilities" is not an object`)
	default:
		res.Capabilities = caps
		rawjson.Members(caps, func(n, v []byte) bool {
			// null is taken as not declared, as mcpx reads it.
			if !isObject(v) && !rawjson.IsNull(v) {
				problems = append(problems, fmt.Sprintf("capability %s is %s, not an object", rawjson.Excerpt(n, 40), rawjson.Excerpt(v, 40)))
			}
			return true
		})
	}
	switch {
	case info == nil:
		problems = append(problems, `it has no "serverInfo" (an InitializeResult must name the server and its version)`)
	case !isObject(info):
		problems = append(problems, `its "serverInfo" is not an object`)
	default:
		var complete bool
		res.ServerInfo, complete = readImplementation(info)
		if !complete {
			problems = append(problems, `its serverInfo lacks a string "name" or "version"`)
		}
		// Implementation's icons (2025-11-25), as a listed item's are.
		if icons := rawjson.Member(info, "icons"); icons != nil {
			if p := optionalMemberProblem([]byte(`"icons"`), icons, res.ProtocolVersion >= "2025-11-25"); p != "" {
				problems = append(problems, "its serverInfo "+p)
			}
		}
	}
	if instructions != nil && !rawjson.IsNull(instructions) {
		if v, ok := rawjson.String(instructions); ok {
			res.Instructions = v
		} else {
			problems = append(problems, `its "instructions" is not a string (ignored)`)
		}
	}
	return res, problems, nil
}

// readImplementation reads an Implementation (a serverInfo) member by
// member: one of another type than the schema's is left empty, and
// complete reports whether the name and version the schema requires are
// both strings.
func readImplementation(v []byte) (impl Implementation, complete bool) {
	var nameOK, versionOK bool
	impl.Name, nameOK = rawjson.String(rawjson.Member(v, "name"))
	impl.Version, versionOK = rawjson.String(rawjson.Member(v, "version"))
	impl.Title, _ = rawjson.String(rawjson.Member(v, "title"))
	return impl, nameOK && versionOK
}

// skillListProblems are the departures of a skills/list's entries from
// the Skills extension's rules (Skill.Problems), each naming its entry,
// and entries that cannot be loaded at all; as listProblems, at most max
// of them (every one when max is 0), and how many there are in all.
func skillListProblems(items []json.RawMessage, max int) (lines []string, n int) {
	var out []string
	more := 0
	add := func(p string) {
		if max == 0 || len(out) < max {
			out = append(out, p)
		} else {
			more++
		}
	}
	for i, it := range items {
		sk, err := ParseSkill(it)
		if err != nil {
			add(fmt.Sprintf("skill %d: %v", i+1, err))
		}
		if sk == nil {
			continue
		}
		for _, p := range sk.Problems() {
			add(fmt.Sprintf("skill %s: %s", sk.URI, p))
		}
	}
	n = len(out) + more
	if more > 0 {
		out = append(out, fmt.Sprintf("and %d more problems", more))
	}
	return out, n
}
