package inspector

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// NotFoundError wraps a server's refusal of an unknown tool, prompt or
// resource with the names the server does list that come closest (none
// when nothing is close: its list is then the place to look).
type NotFoundError struct {
	Kind        string // "tool", "prompt" or "resource"
	Name        string
	Suggestions []string
	// Template is set when Name, a resource URI, is one of the server's
	// resource templates as it lists it: a URI to make one from, not to
	// read.
	Template bool
	Err      error
}

func (e *NotFoundError) Error() string {
	msg := e.Err.Error()
	var nl *notListedError
	listed := errors.As(e.Err, &nl) // msg says what the server lacks
	switch {
	case e.Template:
		msg += fmt.Sprintf(" (%q is one of the server's resource templates: read a URI made from it, each {variable} replaced by a value)", e.Name)
	case len(e.Suggestions) > 0 && listed:
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(e.Suggestions, ", "))
	case len(e.Suggestions) > 0:
		msg += fmt.Sprintf(" (the server has no %s %q; did you mean %s?)", e.Kind, e.Name, strings.Join(e.Suggestions, ", "))
	case !listed:
		msg += fmt.Sprintf(" (the server lists no %s %q)", e.Kind, e.Name)
	}
	return msg
}

// notListedError is NotFoundError's Err when mcpx found the name missing
// from the server's list itself (tools schema, a tool's help), rather
// than the server refusing a request: its text already says what the
// server lacks, which NotFoundError then does not say again.
type notListedError struct{ list, kind, name string }

func (e *notListedError) Error() string {
	return e.list + " has no " + e.kind + " " + quoteName(e.name)
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// ToolArguments builds the arguments object for a call to tool name from
// key=value pairs and an optional base JSON object. When there are pairs
// it types them by the tool's inputSchema from the session's tools/list,
// which it lists only when it has none or the server said it changed; a
// tool that is not listed is not an error here (the server decides), its
// pairs are typed without a schema. Warnings are for the person. It is
// PrepareToolArguments without validation.
func (s *Session) ToolArguments(ctx context.Context, name string, pairs []string, base json.RawMessage) (json.RawMessage, []string, error) {
	return s.PrepareToolArguments(ctx, name, ToolInput{Pairs: pairs, Base: base})
}

// ToolInput is what a person gave as a tool call's arguments.
type ToolInput struct {
	// Pairs are key=value arguments (see BuildArguments), merged over Base,
	// an optional JSON object.
	Pairs []string
	Base  json.RawMessage
	// Validate checks the arguments against the tool's inputSchema before
	// they are sent: a call that does not match is an
	// *InvalidArgumentsError, one with a number too large to check a
	// *NumberRangeError, one with a string too long to match against the
	// schema's patterns a *PatternWorkError, one whose check would not end
	// (the schema applies again and again at every level) a
	// *CheckWorkError. An inspector must be able to send a bad call on
	// purpose, so it is a choice: without it, a number the check could
	// not read (1e999) in a pair goes out as the JSON number written.
	Validate bool
}

// InvalidArgumentsError reports arguments that do not match the tool's
// inputSchema (a missing required argument, a value outside an enum, a
// wrong type), found before the call was sent.
type InvalidArgumentsError struct {
	Tool string
	// Problems are the failures, one line each ("at /color: value must
	// be one of ...").
	Problems []string
}

func (e *InvalidArgumentsError) Error() string {
	return fmt.Sprintf("the arguments do not match the inputSchema of tool %q: %s", e.Tool, strings.Join(e.Problems, "; "))
}

// PrepareToolArguments builds the arguments object for a call to tool
// name (see ToolArguments) and, with in.Validate, checks it against the
// tool's inputSchema from tools/list (spec: server/tools, "Tool": the
// schema the arguments must follow). What keeps it from checking — a
// tool that is not listed, a schema that does not compile, a tools/list
// that fails when no pairs need typing — is a warning, and the call goes
// out: the server decides.
func (s *Session) PrepareToolArguments(ctx context.Context, name string, in ToolInput) (json.RawMessage, []string, error) {
	var schema json.RawMessage
	var warnings []string
	listed := false
	if len(in.Pairs) > 0 || in.Validate {
		tool, err := s.listedTool(ctx, name)
		switch {
		case err != nil && len(in.Pairs) > 0:
			return nil, nil, fmt.Errorf("fetching tool schemas to type the arguments: %w", err)
		case err != nil:
			if ctx.Err() != nil {
				return nil, nil, err
			}
			warnings = append(warnings, fmt.Sprintf("the arguments are not checked: %v", err))
		default:
			if tool == nil {
				warnings = append(warnings, fmt.Sprintf("tool %q is not in the server's tools/list; its arguments are not typed or checked by its schema", name))
				break
			}
			schema, listed = inputSchemaOf(tool), true
		}
	}
	var props map[string]json.RawMessage
	var known bool
	switch {
	case len(in.Pairs) == 0: // --args alone: nothing to type
	case listed:
		props, known = s.tools.properties(name, schema)
	default:
		props, known = schemaProperties(schema)
	}
	args, w, err := buildArguments(in.Pairs, in.Base, schema, props, known, !in.Validate)
	warnings = append(warnings, w...)
	if err != nil || !in.Validate || !listed {
		return args, warnings, err
	}
	if len(schema) == 0 {
		// The server's departure (a Tool must have an inputSchema:
		// schema.json), not the caller's: reported as one.
		s.depart(ctx, "tool %q has no inputSchema; its arguments are not checked", name)
		return args, warnings, nil
	}
	compiled, cerr := s.tools.inputSchema(name, schema)
	if cerr != nil {
		warnings = append(warnings, fmt.Sprintf("the arguments are not checked: the inputSchema of tool %q: %v", name, cerr))
		return args, warnings, nil
	}
	problems, verr := compiled.problems(args)
	if verr != nil {
		// (A *NumberRangeError: valid JSON the validator cannot read; a
		// *PatternWorkError: a string too long for the schema's pattern; a
		// *CheckWorkError: a check that would not end.)
		return args, warnings, fmt.Errorf("the arguments of tool %q cannot be checked against its inputSchema: %w", name, verr)
	}
	if len(problems) > 0 {
		return args, warnings, &InvalidArgumentsError{Tool: name, Problems: problems}
	}
	return args, warnings, nil
}

// inputSchemaOf returns the inputSchema member of a listed tool (valid
// JSON, as the session's list holds it) as encoding/json would find it
// (the last member whose name matches, case aside), read in place: decoding the tool for it on every call was a
// twentieth of a REPL tool call's CPU.
func inputSchemaOf(tool json.RawMessage) json.RawMessage {
	var schema json.RawMessage
	rawjson.Members(tool, func(name, v []byte) bool {
		if rawjson.MatchName(name, "inputSchema") != "" {
			schema = v
		}
		return true
	})
	return schema
}

// CallTool calls tools/call. A JSON-RPC error for an unknown tool comes back
// as a *NotFoundError carrying close names from tools/list.
func (s *Session) CallTool(ctx context.Context, name string, args json.RawMessage, opts ...CallOption) (json.RawMessage, error) {
	params, err := namedParams(name, args)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding params: %w", mcp.MethodToolsCall, err)
	}
	res, err := s.Call(ctx, mcp.MethodToolsCall, params, append(opts, withSubject(name))...)
	if err != nil {
		return nil, s.explainUnknown(ctx, err, "tool", name)
	}
	return res, nil
}

// PromptArgumentsError reports arguments for prompts/get that do not fit
// the prompt as the server's prompts/list declares it (spec: server/prompts,
// "Prompt": each argument's name and whether it is required), found before
// the request was sent: names it does not declare, and required ones not
// given.
type PromptArgumentsError struct {
	Prompt string
	// Unknown are the names given that the prompt does not declare, in
	// the order given.
	Unknown []UnknownArgument
	// Missing are the required arguments not given, in the prompt's order.
	Missing []string
	// Declared are the prompt's argument names, in its order.
	Declared []string
}

// UnknownArgument is an argument name a prompt does not declare, with the
// declared names closest to it (none when nothing is close).
type UnknownArgument struct {
	Name        string
	Suggestions []string
}

func (e *PromptArgumentsError) Error() string {
	var parts []string
	for _, u := range e.Unknown {
		switch {
		case len(u.Suggestions) > 0:
			parts = append(parts, fmt.Sprintf("no argument %q (did you mean %s?)", u.Name, quoteNames(u.Suggestions)))
		case len(e.Declared) > 0:
			parts = append(parts, fmt.Sprintf("no argument %q (it takes %s)", u.Name, quoteNames(e.Declared)))
		default:
			parts = append(parts, fmt.Sprintf("no argument %q (it takes none)", u.Name))
		}
	}
	switch len(e.Missing) {
	case 0:
	case 1:
		parts = append(parts, "missing required argument "+quoteNames(e.Missing))
	default:
		parts = append(parts, "missing required arguments "+quoteNames(e.Missing))
	}
	return fmt.Sprintf("prompt %q: %s", e.Prompt, strings.Join(parts, "; "))
}

// quoteNames quotes names (the server's text, escaped) for a message.
func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// PreparePromptArguments builds the arguments of prompts/get for prompt
// name from key=value pairs (see StringArguments) and, with validate,
// checks their names against the prompt's arguments in the session's
// prompts/list, listed only when the session has no fresh copy (as for
// tools): a name the prompt does not declare, or a required argument
// missing, is a *PromptArgumentsError. What keeps it from checking — a
// prompt that is not listed, a prompts/list that fails, a prompt whose
// arguments cannot be read — is a warning, and the request goes out: the
// server decides.
func (s *Session) PreparePromptArguments(ctx context.Context, name string, pairs []string, validate bool) (json.RawMessage, []string, error) {
	args, err := StringArguments(pairs)
	if err != nil || !validate {
		return args, nil, err
	}
	prompt, err := s.listedPrompt(ctx, name)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, nil, err
	case err != nil:
		return args, []string{fmt.Sprintf("the arguments are not checked: %v", err)}, nil
	case prompt == nil:
		return args, []string{fmt.Sprintf("prompt %q is not in the server's prompts/list; its arguments are not checked", name)}, nil
	}
	var p struct {
		Arguments []struct {
			Name     string `json:"name"`
			Required bool   `json:"required"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal(prompt, &p); err != nil {
		return args, []string{fmt.Sprintf("the arguments are not checked: the arguments of prompt %q in prompts/list cannot be read: %v", name, err)}, nil
	}
	e := &PromptArgumentsError{Prompt: name}
	declared := map[string]bool{}
	for _, a := range p.Arguments {
		e.Declared = append(e.Declared, a.Name)
		declared[a.Name] = true
	}
	given := map[string]bool{}
	for _, pair := range pairs {
		key, _, _ := StringPair(pair) // StringArguments read every pair
		if given[key] {
			continue
		}
		given[key] = true
		if !declared[key] {
			e.Unknown = append(e.Unknown, UnknownArgument{Name: key, Suggestions: Suggest(key, e.Declared, 3)})
		}
	}
	for _, a := range p.Arguments {
		if a.Required && !given[a.Name] {
			given[a.Name] = true // named once, if declared twice
			e.Missing = append(e.Missing, a.Name)
		}
	}
	if len(e.Unknown) > 0 || len(e.Missing) > 0 {
		return args, nil, e
	}
	return args, nil, nil
}

// GetPrompt calls prompts/get with string arguments. A result that is not
// a GetPromptResult is returned as it came, with a warning for each way it
// departs (PromptResultProblems).
func (s *Session) GetPrompt(ctx context.Context, name string, args json.RawMessage, opts ...CallOption) (json.RawMessage, error) {
	if string(args) == "{}" {
		args = nil
	}
	params, err := namedParams(name, args)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding params: %w", mcp.MethodPromptsGet, err)
	}
	res, err := s.Call(ctx, mcp.MethodPromptsGet, params, append(opts, withSubject(name))...)
	if err != nil {
		return nil, s.explainUnknown(ctx, err, "prompt", name)
	}
	for _, p := range PromptResultProblems(res) {
		s.depart(ctx, "the result of prompt %q departs from the spec (server/prompts): %s", name, p)
	}
	return res, nil
}

// CheckListed returns a *NotFoundError wrapping err when the server's list
// (tools/list for kind "tool", prompts/list for "prompt") does not have
// name, and nil otherwise. Servers often report an unknown tool as a tool
// result with isError rather than a JSON-RPC error; this explains both.
func (s *Session) CheckListed(ctx context.Context, kind, name string, err error) *NotFoundError {
	method := map[string]string{"tool": mcp.MethodToolsList, "prompt": mcp.MethodPromptsList}[kind]
	list, lerr := s.List(ctx, method, nil)
	if lerr != nil || findByName(list.Items, name) != nil {
		return nil
	}
	return &NotFoundError{Kind: kind, Name: name, Suggestions: Suggest(name, ItemNames(list.Items), 3), Err: err}
}

// explainUnknown turns a JSON-RPC error about name into a *NotFoundError
// when the server's own list does not have name.
func (s *Session) explainUnknown(ctx context.Context, err error, kind, name string) error {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || ctx.Err() != nil {
		return err
	}
	if nf := s.CheckListed(ctx, kind, name, err); nf != nil {
		return nf
	}
	return err
}

func findByName(items []json.RawMessage, name string) json.RawMessage {
	for _, it := range items {
		if n, ok := itemName(it); ok && n == name {
			return it
		}
	}
	return nil
}

// itemName returns an item's name as decoding it into a struct with a
// Name string field would, and false where that decoding fails. Valid
// items are read in place: decoding each of 10,000 tools took tens of
// milliseconds.
func itemName(it json.RawMessage) (string, bool) {
	if !json.Valid(it) {
		return "", false
	}
	if rawjson.IsNull(rawjson.Trim(it)) {
		return "", true
	}
	name, ok := "", true
	if !rawjson.Members(it, func(n, v []byte) bool {
		if rawjson.MatchName(n, "name") == "" {
			return true
		}
		switch {
		case rawjson.IsNull(v): // leaves the name as it was
		case rawjson.IsString(v):
			var s string
			if json.Unmarshal(v, &s) != nil {
				ok = false
			}
			name = s
		default:
			ok = false
		}
		return true
	}) {
		return "", false
	}
	return name, ok
}

// ItemNames returns the names of a list's items (tools, prompts), read
// in place as itemName reads them, leaving out the items whose name is not
// a string.
func ItemNames(items []json.RawMessage) []string {
	var names []string
	for _, it := range items {
		if n, ok := itemName(it); ok {
			names = append(names, n)
		}
	}
	return names
}

// ToolResultIsError reports whether a CallToolResult has isError: true.
//
// raw is a result as the session returns it (valid JSON). Only the result's
// own members are looked at: a large content is skipped, not decoded.
func ToolResultIsError(raw json.RawMessage) bool {
	isError := false
	rawjson.Members(raw, func(name, value []byte) bool {
		// As encoding/json would: the name matched without regard to
		// case, the last one winning.
		if n, ok := rawjson.String(name); ok && strings.EqualFold(n, "isError") {
			isError = string(value) == "true"
		}
		return true
	})
	return isError
}

// CompletionRef is what completion/complete completes for
// (spec: server/utilities/completion).
type CompletionRef struct {
	// Prompt names a prompt (ref/prompt); URI names a resource template
	// (ref/resource). Exactly one is set.
	Prompt, URI string
}

// completionContextVersion is the first revision whose completion/complete
// carries context.arguments (spec 2025-06-18: changelog).
const completionContextVersion = "2025-06-18"

// completionContextIgnored reports whether the session's revision predates
// completion/complete's context: a server of it does not read it.
func (s *Session) completionContextIgnored() bool {
	v := s.revision()
	return s.modern() == nil && v != "" && v < completionContextVersion
}

// Complete calls completion/complete for one argument, with the values of
// other arguments as context (context.arguments, since 2025-06-18; sent to
// an older session too, after a warning, since it is asked for). Its
// errors name the prompt or template; a refusal about a prompt the server
// does not list names the closest ones it does, as GetPrompt's.
func (s *Session) Complete(ctx context.Context, ref CompletionRef, argName, partial string, context map[string]string) (json.RawMessage, error) {
	res, err := s.complete(ctx, ref, argName, partial, context)
	if err != nil && ref.Prompt != "" {
		return nil, s.explainUnknown(ctx, err, "prompt", ref.Prompt)
	}
	return res, err
}

// complete is Complete without the look at prompts/list after an error:
// the catalog's completion on every key press asks for nothing more.
func (s *Session) complete(ctx context.Context, ref CompletionRef, argName, partial string, context map[string]string) (json.RawMessage, error) {
	if len(context) > 0 && s.completionContextIgnored() {
		s.warnOnce("completion context", "the session speaks %s, whose completion/complete has no context (it came in %s): the server may complete without it; sending it anyway",
			s.protocolVersion(), completionContextVersion)
	}
	var r map[string]string
	switch {
	case ref.Prompt != "" && ref.URI == "":
		r = map[string]string{"type": "ref/prompt", "name": ref.Prompt}
	case ref.URI != "" && ref.Prompt == "":
		r = map[string]string{"type": "ref/resource", "uri": ref.URI}
	default:
		return nil, errors.New("complete: give exactly one of a prompt name or a resource template URI")
	}
	params := map[string]any{
		"ref":      r,
		"argument": map[string]string{"name": argName, "value": partial},
	}
	if len(context) > 0 {
		params["context"] = map[string]any{"arguments": context}
	}
	return s.Call(ctx, mcp.MethodCompletionComplete, params, withSubject(ref.Prompt+ref.URI))
}

// ReadResource calls resources/read. A refusal that says the resource was
// not found — -32602 since 2026-07-28, -32002 before (spec 2026-07-28:
// server/resources, "Error Handling") — names close URIs from
// resources/list when the server does not list uri. A result that is not a
// ReadResourceResult is returned as it came, with a warning for each way
// it departs (ResourceResultProblems).
func (s *Session) ReadResource(ctx context.Context, uri string, opts ...CallOption) (json.RawMessage, error) {
	res, err := s.Call(ctx, mcp.MethodResourcesRead, map[string]string{"uri": uri}, append(opts, withSubject(uri))...)
	if err != nil {
		return nil, s.explainResource(ctx, err, uri)
	}
	for _, p := range ResourceResultProblems(res) {
		s.depart(ctx, "the result of reading %s departs from the spec (server/resources): %s", uri, p)
	}
	return res, nil
}

func (s *Session) explainResource(ctx context.Context, err error, uri string) error {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || ctx.Err() != nil {
		return err
	}
	// A server may refuse a URI it has no resource for with another code
	// than the spec's (server-everything: -32603 for a template read as it
	// is listed): such a refusal is explained only when the URI is one of
	// the templates, which a brace in it makes worth asking.
	notFound := rpcErr.Code == mcp.CodeResourceNotFound || rpcErr.Code == jsonrpc.CodeInvalidParams
	if !notFound && !strings.Contains(uri, "{") {
		return err
	}
	list, lerr := s.List(ctx, mcp.MethodResourcesList, nil)
	if lerr != nil {
		return err
	}
	for _, it := range list.Items {
		var r struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(it, &r) == nil && r.URI == uri {
			return err
		}
	}
	// A template read as it is listed (a person who took it for a URI).
	if strings.Contains(uri, "{") {
		if ts, terr := s.List(ctx, mcp.MethodResourcesTemplatesList, nil); terr == nil {
			for _, it := range ts.Items {
				var t struct {
					URITemplate string `json:"uriTemplate"`
				}
				if json.Unmarshal(it, &t) == nil && t.URITemplate == uri {
					return &NotFoundError{Kind: "resource", Name: uri, Template: true, Err: err}
				}
			}
		}
	}
	if !notFound {
		return err
	}
	// URIs are not names: no "did you mean" (an edit distance between URIs
	// says little), only where to look.
	return &NotFoundError{Kind: "resource", Name: uri, Err: err}
}

// ResourceContent is one item of a ReadResourceResult. Its bytes — the
// text, or the decoded blob — stay as received until WriteTo decodes them
// into a writer in pieces, so a large resource is held once, encoded, and
// never again decoded (issue 13).
type ResourceContent struct {
	URI      string
	MimeType string
	Binary   bool
	// Type is a tool result's content type (text, image, audio,
	// resource, resource_link…); "" for the contents of a resource.
	Type string
	// value is the text or the blob as received: a JSON string, quotes
	// included; nil for an item with neither.
	value []byte
}

// DecodeContents reads the contents of a ReadResourceResult in place: it
// decodes no text or blob (see ResourceContent.WriteTo). raw is a result
// as the session returns it, valid JSON.
func DecodeContents(raw json.RawMessage) ([]ResourceContent, error) {
	var f rawjson.Fields
	var items [][]byte
	if !f.Object(raw, []string{"contents"}, func(_ string, v []byte) { items = f.Array(v) }) {
		return nil, violation(errors.New("result is not a ReadResourceResult: contents is not an array of objects"))
	}
	var out []ResourceContent
	for _, it := range items {
		rc, ok := decodeResourceContent(&f, it)
		if !ok {
			return nil, violation(errors.New("result is not a ReadResourceResult: a content is not an object with string uri, mimeType, text or blob"))
		}
		out = append(out, rc)
	}
	return out, nil
}

// decodeResourceContent reads one TextResourceContents or
// BlobResourceContents in place.
func decodeResourceContent(f *rawjson.Fields, it []byte) (ResourceContent, bool) {
	var rc ResourceContent
	var text, blob []byte
	if !f.Object(it, []string{"uri", "mimeType", "text", "blob"}, func(n string, v []byte) {
		switch n {
		case "uri":
			rc.URI = f.Str(v)
		case "mimeType":
			rc.MimeType = f.Str(v)
		case "text":
			text = f.OptStr(v)
		case "blob":
			blob = f.OptStr(v)
		}
	}) {
		return rc, false
	}
	switch {
	case text != nil:
		rc.value = text
	case blob != nil:
		rc.value, rc.Binary = blob, true
	}
	return rc, true
}

// ToolContents reads the content blocks of a CallToolResult in place, as
// DecodeContents reads a resource's (spec: server/tools, "Tool Result"):
// a text block is text, an image's or audio's data is binary, an embedded
// resource is its text or blob. A block that carries no data (a
// resource link, a type mcpx does not know) has none: HasData is false.
// raw is a result as the session returns it, valid JSON.
func ToolContents(raw json.RawMessage) ([]ResourceContent, error) {
	var f rawjson.Fields
	var items [][]byte
	if !f.Object(raw, []string{"content"}, func(_ string, v []byte) { items = f.Array(v) }) {
		return nil, violation(errors.New("result is not a CallToolResult: content is not an array of objects"))
	}
	bad := violation(errors.New("result is not a CallToolResult: a content block is not an object with string type, text, data, mimeType or uri"))
	var out []ResourceContent
	for _, it := range items {
		var rc ResourceContent
		var text, data, resource []byte
		if !f.Object(it, []string{"type", "text", "data", "mimeType", "uri", "resource"}, func(n string, v []byte) {
			switch n {
			case "type":
				rc.Type = f.Str(v)
			case "text":
				text = f.OptStr(v)
			case "data":
				data = f.OptStr(v)
			case "mimeType":
				rc.MimeType = f.Str(v)
			case "uri":
				rc.URI = f.Str(v)
			case "resource":
				resource = v
			}
		}) {
			return nil, bad
		}
		switch rc.Type {
		case "text":
			rc.value = text
		case "image", "audio":
			rc.value, rc.Binary = data, data != nil
		case "resource":
			inner, ok := decodeResourceContent(&f, resource)
			if !ok {
				return nil, bad
			}
			inner.Type = rc.Type
			rc = inner
		}
		out = append(out, rc)
	}
	return out, nil
}

// SavedContent returns the index of the content that tools call -o
// writes: the first image, audio or embedded blob, else the first text or
// embedded text; -1 when no content has data to write.
func SavedContent(contents []ResourceContent) int {
	for i, ct := range contents {
		if ct.HasData() && ct.Binary {
			return i
		}
	}
	for i, ct := range contents {
		if ct.HasData() {
			return i
		}
	}
	return -1
}

// HasData reports whether the content has text or data to write.
func (rc ResourceContent) HasData() bool { return rc.value != nil }

// Check reports whether the content decodes: a blob that is not valid
// base64 is an error. WriteTo finds the same error, but only after it
// wrote what came before it.
func (rc ResourceContent) Check() error {
	if !rc.Binary {
		// A text always decodes (DecodeContents read a JSON string):
		// decoding it here was a pass over it for nothing.
		return nil
	}
	_, err := writeBase64(io.Discard, rawjson.StringBytes(rc.value))
	if err != nil {
		return rc.base64Error(err)
	}
	return nil
}

// WriteTo writes the content's bytes to w — the text, or the decoded blob
// (standard base64, padded or not) — decoding in pieces.
func (rc ResourceContent) WriteTo(w io.Writer) (int64, error) {
	if rc.value == nil {
		return 0, nil
	}
	if !rc.Binary {
		// Through a buffer: each escape (a text's every "\n") ends a
		// piece, and each piece was a write of its own, a system call
		// for a file (-o): a 100 MiB text of short lines took 10 s.
		bw := bufio.NewWriterSize(w, 64<<10)
		var n int64
		var err error
		rawjson.DecodeString(rc.value, func(piece []byte) bool {
			var k int
			k, err = bw.Write(piece)
			n += int64(k)
			return err == nil
		})
		if err == nil {
			err = bw.Flush()
		}
		return n - int64(bw.Buffered()), err
	}
	// Base64 needs no JSON escapes: the blob is read in place unless the
	// server escaped some character anyway.
	n, err := writeBase64(w, rawjson.StringBytes(rc.value))
	var we writeError
	if errors.As(err, &we) {
		return n, we.err
	}
	if err != nil {
		return n, rc.base64Error(err)
	}
	return n, nil
}

// base64Error says that the content's data is not base64.
func (rc ResourceContent) base64Error(err error) error {
	if rc.Type == "image" || rc.Type == "audio" {
		return violationf("%s content: data is not valid base64: %w", rc.Type, err)
	}
	return violationf("content %q: blob is not valid base64: %w", rc.URI, err)
}

// Base64Len returns the length of the data the JSON string q (quotes
// included) decodes to as base64, decoding it as ResourceContent.WriteTo
// does (the standard alphabet, padded or not, line breaks skipped), or an
// error saying where it is not base64: a blob's, an image's and an
// audio's data are base64 (schema.json: "format": "byte"), and what a
// person is shown of them is their size, or that they are not.
func Base64Len(q []byte) (int64, error) {
	return writeBase64(io.Discard, rawjson.StringBytes(q))
}

// writeError is a failure of the writer rather than of the data.
type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }

// writeBase64 decodes s, standard base64 with its padding or without, into
// w in chunks. A failure of w is returned as a writeError.
func writeBase64(w io.Writer, s []byte) (int64, error) {
	if bytes.ContainsAny(s, "\r\n") {
		// Line breaks (MIME style) are skipped by the decoder; taken out
		// here, so that chunks are whole groups of four characters.
		s = bytes.ReplaceAll(bytes.ReplaceAll(s, []byte("\r"), nil), []byte("\n"), nil)
	}
	enc := base64.StdEncoding
	if t := bytes.TrimRight(s, "="); len(s)%4 != 0 || len(s)-len(t) > 2 {
		enc, s = base64.RawStdEncoding, t
	}
	const chunk = 64 << 10 // a multiple of 4 characters
	buf := make([]byte, enc.DecodedLen(min(len(s), chunk)))
	var n int64
	for off := 0; off < len(s); off += chunk {
		part := s[off:min(off+chunk, len(s))]
		k, err := enc.Decode(buf, part)
		if err != nil {
			var ce base64.CorruptInputError
			if errors.As(err, &ce) {
				err = base64.CorruptInputError(int64(ce) + int64(off))
			}
			return n, err
		}
		k, err = w.Write(buf[:k])
		n += int64(k)
		if err != nil {
			return n, writeError{err}
		}
	}
	return n, nil
}

// ToolSchema returns tool name's inputSchema (or outputSchema) exactly as
// tools/list carried it: mcpx never rewrites a schema or resolves its
// $refs (spec 2026-07-28: basic/index, "JSON Schema Usage").
func (s *Session) ToolSchema(ctx context.Context, name string, output bool) (json.RawMessage, error) {
	tool, err := s.listedTool(ctx, name)
	if err != nil {
		return nil, err
	}
	if tool == nil {
		tools, _ := s.listedTools(ctx)
		return nil, &NotFoundError{Kind: "tool", Name: name, Suggestions: Suggest(name, ItemNames(tools), 3),
			Err: &notListedError{list: "tools/list", kind: "tool", name: name}}
	}
	var t struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(tool, &t); err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	schema, which := t.InputSchema, "inputSchema"
	if output {
		schema, which = t.OutputSchema, "outputSchema"
	}
	if len(schema) == 0 {
		return nil, &NoSchemaError{Tool: name, Which: which}
	}
	return schema, nil
}

// NoSchemaError reports a tool that tools/list gave no schema of the kind
// asked for: an outputSchema is optional (spec 2025-06-18 and later:
// server/tools, "Output Schema"), an inputSchema required, but a server
// may still leave it out. It is what was asked for that is not there,
// as with a tool not listed (NotFoundError), not a failure of mcpx.
type NoSchemaError struct {
	Tool  string
	Which string // "inputSchema" or "outputSchema"
}

func (e *NoSchemaError) Error() string {
	return fmt.Sprintf("tool %s has no %s in tools/list", quoteName(e.Tool), e.Which)
}
