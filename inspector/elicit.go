package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// ElicitPolicy says how elicitation/create is answered: prompt (field by
// field), decline, cancel, accept-defaults (every field with a schema
// default), or file:PATH (the content object from a JSON file, validated
// against the requested schema).
type ElicitPolicy struct {
	Mode string
	File string
	// OnWait, when set, is told that reading File waits for the writer
	// of a named pipe (Ctrl-C ends the wait).
	OnWait func(path string)
}

// ParseElicitPolicy parses a policy as written: prompt, decline, cancel,
// accept-defaults or file:PATH.
func ParseElicitPolicy(s string) (ElicitPolicy, error) {
	switch {
	case s == PolicyPrompt || s == PolicyDecline || s == PolicyCancel || s == PolicyAcceptDefaults:
		return ElicitPolicy{Mode: s}, nil
	case strings.HasPrefix(s, "file:") && len(s) > len("file:"):
		return ElicitPolicy{Mode: PolicyFile, File: s[len("file:"):]}, nil
	}
	return ElicitPolicy{}, fmt.Errorf("unknown elicitation policy %q: use prompt, decline, cancel, accept-defaults or file:PATH", s)
}

func (p ElicitPolicy) String() string {
	if p.Mode == PolicyFile {
		return "file:" + p.File
	}
	return p.Mode
}

// Elicitor answers elicitation/create by policy
// (spec 2025-11-25: client/elicitation; 2025-06-18 form mode).
type Elicitor struct {
	Policy ElicitPolicy
	// Person is asked when the policy is prompt.
	Person Person
	// Form and URL are the modes declared in the elicitation capability;
	// requests for another mode are refused with invalid params.
	Form, URL bool
	// Note tells the person something, e.g. what a policy did.
	Note func(string)
	// Who names the server for the person.
	Who func() string

	fileContent json.RawMessage

	mu      sync.Mutex
	pending map[string]string // URL elicitations accepted: elicitationId -> URL
	order   []string          // pending's ids, oldest first (see maxPendingURL)

	// stateless is set for the 2026-07-28 revision, whose URL
	// elicitations carry no elicitationId (the client learns the outcome by
	// retrying; spec 2026-07-28: changelog, minor change 11).
	stateless bool
}

// NewElicitor checks the policy and, for file:PATH, reads the file now so a
// mistake is reported before the server starts. A prompt policy needs a
// person to ask (a *NoPersonError otherwise).
func NewElicitor(ctx context.Context, p ElicitPolicy, person Person) (*Elicitor, error) {
	e := &Elicitor{Policy: p, Person: person, Form: true, pending: map[string]string{}}
	switch p.Mode {
	case PolicyPrompt:
		if person == nil {
			return nil, &NoPersonError{Feature: "elicitation"}
		}
	case PolicyFile:
		data, err := readAnswerFile(ctx, p.File, p.OnWait)
		if err != nil {
			return nil, fmt.Errorf("elicitation content file: %w", err)
		}
		if _, err := ParseObject(data); err != nil || !json.Valid(data) {
			return nil, fmt.Errorf(`elicitation content file %s: must hold a JSON object of field values, e.g. {"name":"Ada"}`, p.File)
		}
		e.fileContent = compactOrSelf(data)
	case PolicyDecline, PolicyCancel, PolicyAcceptDefaults:
	default:
		return nil, fmt.Errorf("unknown elicitation policy %q", p.Mode)
	}
	return e, nil
}

// Clone returns an elicitor with the same policy and a fresh state (no
// pending URL elicitations), for another connection.
func (e *Elicitor) Clone() *Elicitor {
	return &Elicitor{
		Policy: e.Policy, Person: e.Person, Form: e.Form, URL: e.URL,
		Note: e.Note, Who: e.Who,
		fileContent: e.fileContent, pending: map[string]string{}, stateless: e.stateless,
	}
}

func compactOrSelf(data []byte) json.RawMessage {
	if c, err := compactJSON(json.RawMessage(data)); err == nil {
		return c
	}
	return data
}

func (e *Elicitor) note(s string) {
	if e.Note != nil {
		e.Note(s)
	}
}

func (e *Elicitor) who() string {
	if e.Who != nil {
		if w := e.Who(); w != "" {
			return w
		}
	}
	return "the server"
}

// ElicitRequest is an elicitation/create request's params.
type ElicitRequest struct {
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
	URL             string          `json:"url"`
	ElicitationID   string          `json:"elicitationId"`
}

// Handle answers elicitation/create.
func (e *Elicitor) Handle(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method != mcp.MethodElicitationCreate {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not handle " + jsonrpc.Clip(method)}
	}
	var req ElicitRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, invalidParams("elicitation/create params: %s", rawjson.DecodeProblem(err))
	}
	switch req.Mode {
	case "", "form":
		if !e.Form {
			return nil, invalidParams("elicitation/create: mcpx did not declare form mode")
		}
		return e.form(ctx, &req)
	case "url":
		if !e.URL {
			return nil, invalidParams("elicitation/create: mcpx did not declare url mode")
		}
		return e.url(ctx, &req)
	}
	return nil, invalidParams("elicitation/create: unknown mode %s", jsonrpc.QuoteClipped(req.Mode))
}

// ElicitAnswer builds an ElicitResult.
func ElicitAnswer(action string, content json.RawMessage) json.RawMessage {
	obj := &Object{vals: map[string]json.RawMessage{}}
	obj.Set("action", marshalRaw(action))
	if content != nil {
		obj.Set("content", content)
	}
	return obj.Marshal()
}

func (e *Elicitor) form(ctx context.Context, req *ElicitRequest) (json.RawMessage, error) {
	form, err := ParseForm(req.RequestedSchema)
	if err != nil {
		return nil, invalidParams("elicitation/create: requestedSchema: %v", err)
	}
	switch e.Policy.Mode {
	case PolicyDecline:
		return ElicitAnswer("decline", nil), nil
	case PolicyCancel:
		return ElicitAnswer("cancel", nil), nil
	case PolicyAcceptDefaults:
		content, missing, invalid := form.Defaults()
		if len(invalid) > 0 {
			e.note(fmt.Sprintf("elicitation policy accept-defaults: the default of field(s) %s does not match its own schema; accepted without them", strings.Join(invalid, ", ")))
		}
		if len(missing) > 0 {
			e.note(fmt.Sprintf("elicitation policy accept-defaults: required field(s) %s have no default; accepted without them", strings.Join(missing, ", ")))
		}
		if len(form.Undefined) > 0 {
			e.note(fmt.Sprintf("elicitation policy accept-defaults: the schema requires field(s) %s, which are not among its properties; accepted without them", strings.Join(form.Undefined, ", ")))
		}
		return ElicitAnswer("accept", content), nil
	case PolicyFile:
		if err := form.Validate(e.fileContent); err != nil {
			e.note(fmt.Sprintf("elicitation policy %s does not match the requested schema: %v", e.Policy, err))
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcpx: the elicitation content file does not match the requested schema: %v", err)}
		}
		return ElicitAnswer("accept", e.fileContent), nil
	case PolicyPrompt:
		res, err := asking(ctx, func() (ElicitResult, error) {
			return e.Person.FillForm(ctx, &FormQuestion{Server: e.who(), Message: req.Message, Form: form})
		})
		if err != nil {
			return e.personGone(err)
		}
		return ElicitAnswer(res.Action, res.Content), nil
	}
	return nil, fmt.Errorf("unknown elicitation policy %q", e.Policy.Mode)
}

func (e *Elicitor) url(ctx context.Context, req *ElicitRequest) (json.RawMessage, error) {
	u, err := url.Parse(req.URL)
	if err != nil || u.Scheme == "" {
		return nil, invalidParams("elicitation/create: url %s is not a valid absolute URL", jsonrpc.QuoteClipped(req.URL))
	}
	if req.ElicitationID == "" && !e.stateless {
		return nil, invalidParams("elicitation/create: url mode needs an elicitationId")
	}
	why := NotOpenable(u)
	web := why == ""
	switch e.Policy.Mode {
	case PolicyDecline:
		return ElicitAnswer("decline", nil), nil
	case PolicyCancel:
		return ElicitAnswer("cancel", nil), nil
	case PolicyAcceptDefaults, PolicyFile:
		if !web {
			e.note(fmt.Sprintf("elicitation policy %s declined a URL elicitation: %s (%s)", e.Policy, req.URL, why))
			return ElicitAnswer("decline", nil), nil
		}
		// A policy cannot open a browser on the person's behalf (consent
		// must be explicit); it accepts and shows the URL to open by hand,
		// with what makes it easy to misread.
		note := fmt.Sprintf("elicitation policy %s accepted a URL elicitation without opening it: %s (host %s)", e.Policy, req.URL, u.Host)
		for _, w := range URLWarnings(u) {
			note += "; warning: " + w
		}
		e.note(note)
		e.remember(req)
		return ElicitAnswer("accept", nil), nil
	case PolicyPrompt:
		res, err := asking(ctx, func() (ElicitResult, error) {
			return e.Person.VisitURL(ctx, &URLQuestion{Server: e.who(), Message: req.Message, URL: req.URL, Parsed: u,
				Warnings: URLWarnings(u), Openable: web, NotOpenable: why, AwaitDone: e.stateless})
		})
		if err != nil {
			return e.personGone(err)
		}
		if res.Action == ActionAccept && !web {
			// mcpx opens only http and https URLs.
			res.Action = ActionDecline
		}
		if res.Action == ActionAccept {
			e.remember(req)
		}
		return ElicitAnswer(res.Action, nil), nil
	}
	return nil, fmt.Errorf("unknown elicitation policy %q", e.Policy.Mode)
}

// personGone maps a question that got no answer to the answer: a person
// who dismissed it or whose input ended cancelled it (spec 2025-11-25:
// client/elicitation, "Response Actions"); any other error (the context
// ended, nobody to ask) is an error.
func (e *Elicitor) personGone(err error) (json.RawMessage, error) {
	if errors.Is(err, io.EOF) {
		return ElicitAnswer(ActionCancel, nil), nil
	}
	return nil, err
}

// NotOpenable says why mcpx does not open u in a browser, or "" when it
// does: only http and https URLs with a host, whose host holds no
// character that could hide the real one (bidirectional and other
// invisible controls, spaces, symbols no host name has)
// (spec 2025-11-25: client/elicitation, "Safe URL Handling").
func NotOpenable(u *url.URL) string {
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Sprintf("mcpx opens only http and https URLs; this one is %s:", u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return "the URL names no host"
	}
	for _, r := range host {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || strings.ContainsRune("-._:%", r) {
			continue
		}
		return fmt.Sprintf("its host holds the character %U, which no host name has: it may hide the real host", r)
	}
	return ""
}

// URLWarnings points out what makes a URL easy to misread
// (spec 2025-11-25: client/elicitation, "Safe URL Handling").
func URLWarnings(u *url.URL) []string {
	var w []string
	host := u.Hostname()
	for _, label := range strings.Split(host, ".") {
		if strings.HasPrefix(strings.ToLower(label), "xn--") {
			w = append(w, "the host contains Punycode ("+label+"): it may imitate another name")
			break
		}
	}
	for _, r := range host {
		if r > unicode.MaxASCII {
			w = append(w, "the host contains non-ASCII characters: it may imitate another name")
			break
		}
	}
	if u.User != nil {
		w = append(w, "the URL contains a user name before the host; the real host is "+host)
	}
	if u.Scheme == "http" {
		w = append(w, "the URL is not HTTPS")
	}
	return w
}

// maxPendingURL is how many accepted URL elicitations an Elicitor
// remembers for their completion notifications: a server may send any
// number of them (accept-defaults and file: accept each), and a
// notification about one forgotten is ignored, as about an unknown one.
const maxPendingURL = 1024

func (e *Elicitor) remember(req *ElicitRequest) {
	if req.ElicitationID == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.pending[req.ElicitationID]; !ok {
		if len(e.order) >= maxPendingURL {
			delete(e.pending, e.order[0])
			e.order = e.order[1:]
		}
		e.order = append(e.order, req.ElicitationID)
	}
	e.pending[req.ElicitationID] = req.URL
}

// Complete handles notifications/elicitation/complete. It returns the URL
// of the accepted elicitation it completes and true, or false for an
// unknown or already completed id, which the spec says to ignore
// (spec 2025-11-25: client/elicitation, "Completion Notifications").
func (e *Elicitor) Complete(params json.RawMessage) (id, u string, known bool) {
	var p struct {
		ElicitationID string `json:"elicitationId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", "", false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	u, known = e.pending[p.ElicitationID]
	if known {
		delete(e.pending, p.ElicitationID)
		e.order = slices.DeleteFunc(e.order, func(id string) bool { return id == p.ElicitationID })
	}
	return p.ElicitationID, u, known
}

// --- form mode -------------------------------------------------------------

// Form is a parsed form-mode requestedSchema: flat primitive fields, in
// the schema's order (spec 2025-11-25: client/elicitation, "Requested Schema").
type Form struct {
	Fields []*FormField
	// Undefined are the names the schema's required lists that are not
	// among its properties: a form nobody can answer so that it
	// validates (a server's mistake), which the person is told.
	Undefined []string
	schema    *Schema // the whole requestedSchema, nil if it does not compile
	raw       json.RawMessage
}

// FormField is one property of a requested schema.
type FormField struct {
	Name        string
	Type        string // string, number, integer, boolean, array
	Title       string
	Description string
	Format      string
	Required    bool
	Default     json.RawMessage // raw, as the server wrote it; nil if none
	// Options are the allowed values of a single-select enum (Multi false)
	// or of each item of a multi-select (Multi true).
	Options []Option
	Multi   bool
	// Min and Max are the field's bounds, nil where the schema sets none:
	// a number's (minimum, maximum), a string's length (minLength,
	// maxLength) or how many choices a multi-select takes (minItems,
	// maxItems).
	Min, Max *float64
	// Pattern is the regular expression a string must match ("" for none).
	Pattern string
	schema  *Schema
}

// Option is one enum value with its display title.
type Option struct {
	Value string
	Title string
}

// ParseForm parses a requestedSchema.
func ParseForm(raw json.RawMessage) (*Form, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("missing")
	}
	obj, err := ParseObject(raw)
	if err != nil {
		return nil, err
	}
	props, err := ParseObject(obj.Get("properties"))
	if err != nil {
		return nil, fmt.Errorf("properties: %w", err)
	}
	var required []string
	if r := obj.Get("required"); len(r) > 0 {
		_ = json.Unmarshal(r, &required)
	}
	f := &Form{raw: raw}
	f.schema, _ = CompileSchema(raw)
	for _, name := range props.Keys() {
		field, err := parseField(name, props.Get(name))
		if err != nil {
			return nil, fmt.Errorf("property %q: %w", name, err)
		}
		for _, r := range required {
			field.Required = field.Required || r == name
		}
		f.Fields = append(f.Fields, field)
	}
	for _, r := range required {
		if !props.Has(r) && !slices.Contains(f.Undefined, r) {
			f.Undefined = append(f.Undefined, r)
		}
	}
	return f, nil
}

func parseField(name string, raw json.RawMessage) (*FormField, error) {
	var p struct {
		Type        json.RawMessage   `json:"type"`
		Title       string            `json:"title"`
		Description string            `json:"description"`
		Format      string            `json:"format"`
		Default     json.RawMessage   `json:"default"`
		Enum        []json.RawMessage `json:"enum"`
		EnumNames   []string          `json:"enumNames"`
		Pattern     string            `json:"pattern"`
		// (Bounds are read leniently: one of the wrong type is left
		// to the schema's own validation, not a reason to refuse the form.)
		Minimum   json.RawMessage   `json:"minimum"`
		Maximum   json.RawMessage   `json:"maximum"`
		MinLength json.RawMessage   `json:"minLength"`
		MaxLength json.RawMessage   `json:"maxLength"`
		MinItems  json.RawMessage   `json:"minItems"`
		MaxItems  json.RawMessage   `json:"maxItems"`
		OneOf     []json.RawMessage `json:"oneOf"`
		AnyOf     []json.RawMessage `json:"anyOf"`
		Items     *struct {
			Type  string            `json:"type"`
			Enum  []json.RawMessage `json:"enum"`
			OneOf []json.RawMessage `json:"oneOf"`
			AnyOf []json.RawMessage `json:"anyOf"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	f := &FormField{Name: name, Title: p.Title, Description: p.Description, Format: p.Format}
	if len(p.Default) > 0 && string(p.Default) != "null" {
		f.Default = p.Default
	}
	var t string
	_ = json.Unmarshal(p.Type, &t)
	f.Type = t
	f.Options = enumOptions(p.Enum, p.EnumNames, p.OneOf, p.AnyOf)
	if t == "array" && p.Items != nil {
		f.Multi = true
		f.Options = enumOptions(p.Items.Enum, nil, p.Items.OneOf, p.Items.AnyOf)
	}
	if f.Type == "" && len(f.Options) > 0 {
		f.Type = "string"
	}
	switch f.Type {
	case "number", "integer":
		f.Min, f.Max = numberOf(p.Minimum), numberOf(p.Maximum)
	case "string":
		f.Min, f.Max, f.Pattern = numberOf(p.MinLength), numberOf(p.MaxLength), p.Pattern
	case "array":
		f.Min, f.Max = numberOf(p.MinItems), numberOf(p.MaxItems)
	}
	switch f.Type {
	case "string", "number", "integer", "boolean", "array":
	default:
		return nil, fmt.Errorf("type %q is not a primitive type a form can ask for", t)
	}
	f.schema, _ = CompileSchema(raw)
	return f, nil
}

func enumOptions(enum []json.RawMessage, names []string, oneOf, anyOf []json.RawMessage) []Option {
	var out []Option
	for i, v := range enum {
		o := Option{Value: rawString(v)}
		if i < len(names) {
			o.Title = names[i]
		}
		out = append(out, o)
	}
	for _, alt := range append(oneOf, anyOf...) {
		var c struct {
			Const json.RawMessage `json:"const"`
			Title string          `json:"title"`
		}
		if json.Unmarshal(alt, &c) == nil && len(c.Const) > 0 {
			out = append(out, Option{Value: rawString(c.Const), Title: c.Title})
		}
	}
	return out
}

// numberOf returns a JSON number's value, nil for anything else.
func numberOf(raw json.RawMessage) *float64 {
	var f float64
	if len(raw) == 0 || json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return &f
}

// rawString returns a JSON string's value, or the raw JSON of other values.
func rawString(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// Defaults returns the content of accept-defaults: every field that has a
// default its own schema accepts, set to it (SEP-1034); the names of
// required fields left out because they have none; and those of fields
// whose default their schema refuses, left out too (spec 2025-11-25:
// client/elicitation: clients SHOULD validate responses against the
// schema, and a server's default does not make a wrong value right).
func (f *Form) Defaults() (content json.RawMessage, missing, invalid []string) {
	obj := &Object{vals: map[string]json.RawMessage{}}
	for _, fld := range f.Fields {
		switch {
		case fld.Default != nil && fld.Validate(fld.Default) == nil:
			obj.Set(fld.Name, fld.Default)
		case fld.Default != nil:
			invalid = append(invalid, fld.Name)
		case fld.Required:
			missing = append(missing, fld.Name)
		}
	}
	return obj.Marshal(), missing, invalid
}

// Validate checks content against the requested schema, or, when the
// server's schema does not compile, at least that required fields are
// present and every field is of its type.
func (f *Form) Validate(content json.RawMessage) error {
	if f.schema != nil {
		return f.schema.Validate(content)
	}
	obj, err := ParseObject(content)
	if err != nil {
		return err
	}
	for _, fld := range f.Fields {
		if !obj.Has(fld.Name) {
			if fld.Required {
				return fmt.Errorf("missing required field %q", fld.Name)
			}
			continue
		}
		if err := fld.Validate(obj.Get(fld.Name)); err != nil {
			return fmt.Errorf("at /%s: %v", fld.Name, err)
		}
	}
	return nil
}

// Validate checks one value against the field's schema.
func (fld *FormField) Validate(v json.RawMessage) error {
	if fld.schema != nil {
		return fld.schema.Validate(v)
	}
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return err
	}
	ok := false
	switch x.(type) {
	case string:
		ok = fld.Type == "string"
	case float64:
		ok = fld.Type == "number" || fld.Type == "integer"
	case bool:
		ok = fld.Type == "boolean"
	case []any:
		ok = fld.Type == "array"
	}
	if !ok {
		return fmt.Errorf("expected %s", fld.Type)
	}
	return nil
}

// URLElicitationsRequired returns the URL elicitations a
// URLElicitationRequiredError (-32042) carries, or nil for any other error
// (spec 2025-11-25: client/elicitation, "URL Elicitation Required Error").
func URLElicitationsRequired(err error) []json.RawMessage {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
		return nil
	}
	var data struct {
		Elicitations []json.RawMessage `json:"elicitations"`
	}
	if json.Unmarshal(rpcErr.Data, &data) != nil {
		return nil
	}
	return data.Elicitations
}

// describeURLElicitation describes an elicitation a -32042 error carries
// on one line: its URL and the start of its message.
func describeURLElicitation(raw json.RawMessage) string {
	var req ElicitRequest
	_ = json.Unmarshal(raw, &req)
	msg := strings.Join(strings.Fields(req.Message), " ")
	if r := []rune(msg); len(r) > 60 {
		msg = string(r[:60]) + "…"
	}
	s := fmt.Sprintf("url %s, %q", req.URL, msg)
	if req.Mode != "url" {
		s = fmt.Sprintf("form, %q", msg)
	}
	if obj, err := ParseObject(raw); err == nil && obj.Has("task") {
		s += " (as a task)"
	}
	return s
}

// Required handles a URLElicitationRequiredError: each URL elicitation it
// carries goes through the policy as if the server had sent it as a request
// (consent, then the browser, for prompt). It reports whether to retry the
// failed request: only when a person took part and asks for it, since the
// out-of-band interaction has to happen first.
func (e *Elicitor) Required(ctx context.Context, err error) (retry bool) {
	list := URLElicitationsRequired(err)
	if len(list) == 0 || !e.URL {
		return false
	}
	accepted := 0
	for _, raw := range list {
		res, herr := e.Handle(ctx, mcp.MethodElicitationCreate, raw)
		if herr != nil {
			e.note("URL elicitation required by the server: " + herr.Error())
			continue
		}
		var r struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(res, &r)
		e.note(fmt.Sprintf("URL elicitation required by the server: %s → %s", describeURLElicitation(raw), r.Action))
		if r.Action == "accept" {
			accepted++
		}
	}
	if accepted == 0 || e.Policy.Mode != PolicyPrompt {
		return false
	}
	retry, cerr := e.Person.Confirm(ctx, "When you are done in the browser, retry the request?", true)
	return cerr == nil && retry
}
