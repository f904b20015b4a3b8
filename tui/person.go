package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Person is the person at the terminal, asked line by line through a
// Prompter: it implements inspector.Person with conversations, one at a
// time (the prompt policies of elicitation and sampling).
type Person struct {
	Prompter *Prompter
	// OpenURL opens a URL in the browser, only ever after the person
	// consented; the caller chooses the browser. Nil means none: the
	// person is asked to open the URL shown.
	OpenURL func(string) error
}

// NewPerson returns the person who answers on p's terminal; openURL opens
// a page in the browser once they consented (nil: none).
func NewPerson(p *Prompter, openURL func(string) error) *Person {
	return &Person{Prompter: p, OpenURL: openURL}
}

// FillForm asks for a form field by field, then for review.
func (t *Person) FillForm(ctx context.Context, q *inspector.FormQuestion) (inspector.ElicitResult, error) {
	p := t.Prompter
	end, err := p.Begin(ctx)
	if err != nil {
		return inspector.ElicitResult{}, err
	}
	defer end()
	form := q.Form
	p.Println("")
	p.Println(fmt.Sprintf("── %s asks for information (elicitation/create) ──", EscapeLine(q.Server)))
	p.Println(clipText(q.Message))
	var names []string
	required := false
	for _, fld := range form.Fields {
		names = append(names, fieldLabel(fld))
		required = required || fld.Required
	}
	if len(names) > 0 {
		line := "Fields: " + clipList(names, "field")
		if required {
			line += "   (* required)"
		}
		p.Println(line)
	}
	if len(form.Undefined) > 0 {
		var undefined []string
		for _, name := range form.Undefined {
			undefined = append(undefined, clipLine(name))
		}
		p.Println("warning: the schema requires " + strings.Join(undefined, ", ") + ", which it does not define: no answer satisfies it (decline or cancel)")
	}
	answer := func(action string) (inspector.ElicitResult, error) {
		p.Println("(" + action + ")")
		return inspector.ElicitResult{Action: action}, nil
	}
	choice, err := p.Choose(ctx, "[a]nswer, [d]ecline or [c]ancel? [a] ", []string{"answer", "decline", "cancel"}, "answer")
	if err != nil {
		return t.formEnded(ctx, err)
	}
	if choice != "answer" {
		return answer(choice)
	}
	values := map[string]json.RawMessage{}
	for _, fld := range form.Fields {
		// (A default its own schema refuses is not offered: Enter
		// would keep a value that cannot be sent.)
		if fld.Default != nil && fld.Validate(fld.Default) == nil {
			values[fld.Name] = fld.Default
		}
	}
	for {
		for _, fld := range form.Fields {
			v, err := t.askField(ctx, fld, values[fld.Name])
			if err != nil {
				return t.formEnded(ctx, err)
			}
			if v == nil {
				delete(values, fld.Name)
			} else {
				values[fld.Name] = v
			}
		}
		content := inspector.NewObject()
		for _, fld := range form.Fields {
			if v, ok := values[fld.Name]; ok {
				content.Set(fld.Name, v)
			}
		}
		raw := content.Marshal()
		p.Println("Answer: " + EscapeLine(string(raw)))
		if verr := form.Validate(raw); verr != nil {
			p.Println("  ✗ " + clipMessage(verr.Error()))
			choice, err = p.Choose(ctx, "[e]dit, [d]ecline or [c]ancel? [e] ", []string{"edit", "decline", "cancel"}, "edit")
		} else {
			choice, err = p.Choose(ctx, "Send it? [s]end, [e]dit, [d]ecline or [c]ancel? [s] ", []string{"send", "edit", "decline", "cancel"}, "send")
		}
		if err != nil {
			return t.formEnded(ctx, err)
		}
		switch choice {
		case "send":
			return inspector.ElicitResult{Action: inspector.ActionAccept, Content: raw}, nil
		case "decline", "cancel":
			return answer(choice)
		}
	}
}

// formEnded maps the end of a conversation to an answer: end of input,
// or the question dismissed (Ctrl-C, which the screen shows already), is
// the person dismissing the form (cancel); a cancelled context is an error.
func (t *Person) formEnded(ctx context.Context, err error) (inspector.ElicitResult, error) {
	if errors.Is(err, io.EOF) {
		if !errors.Is(err, inspector.ErrDismissed) {
			t.Prompter.Println("(end of input: cancelled)")
		}
		return inspector.ElicitResult{Action: inspector.ActionCancel}, nil
	}
	t.withdrawn(ctx)
	return inspector.ElicitResult{}, err
}

// askField asks for one field until the answer is valid. It returns nil
// for a field left out.
func (t *Person) askField(ctx context.Context, fld *inspector.FormField, current json.RawMessage) (json.RawMessage, error) {
	p := t.Prompter
	p.Println("")
	head := fieldLabel(fld)
	if fld.Description != "" {
		head += ": " + clipLine(fld.Description)
	}
	p.Println(head)
	var hint []string
	switch {
	case fld.Multi:
		hint = append(hint, "choose "+orString(bounds(fld.Min, fld.Max, ""), "any")+", comma-separated numbers")
	case len(fld.Options) > 0:
		hint = append(hint, "choose one by number")
	case fld.Type == "boolean":
		hint = append(hint, "y or n")
	case fld.Type == "string":
		h := "string"
		if fld.Format != "" {
			h += ", format " + clipLine(fld.Format)
		}
		if b := bounds(fld.Min, fld.Max, " characters"); b != "" {
			h += ", " + b
		}
		if fld.Pattern != "" {
			h += ", matching " + clipLine(fld.Pattern)
		}
		hint = append(hint, h)
	default:
		h := clipLine(fld.Type)
		if b := bounds(fld.Min, fld.Max, ""); b != "" {
			h += ", " + b
		}
		hint = append(hint, h)
	}
	for i, o := range fld.Options[:min(len(fld.Options), maxShownOptions)] {
		line := fmt.Sprintf("  %d) %s", i+1, clipLine(o.Value))
		if o.Title != "" && o.Title != o.Value {
			line = fmt.Sprintf("  %d) %s  [%s]", i+1, clipLine(o.Title), clipLine(o.Value))
		}
		p.Println(line)
	}
	if n := len(fld.Options) - maxShownOptions; n > 0 {
		p.Println(fmt.Sprintf("  … (%s not shown: type the number or the value of one)", plural(n, "more choice")))
	}
	if !fld.Required {
		hint = append(hint, `"-" leaves it out`)
	}
	prompt := "  (" + strings.Join(hint, "; ") + ")"
	if current != nil {
		prompt += " [" + clipLine(describeDefault(fld, current)) + "]"
	}
	prompt += " > "
	for {
		line, err := p.ReadLine(ctx, prompt)
		if err != nil {
			return nil, err
		}
		s := strings.TrimSpace(line)
		switch {
		case s == "" && current != nil:
			return current, nil
		case s == "" && fld.Required:
			p.Println("  ✗ this field is required")
			continue
		case s == "":
			return nil, nil
		case s == "-" && !fld.Required:
			return nil, nil
		}
		v, err := parseAnswer(fld, line)
		if err == nil {
			err = fld.Validate(v)
		}
		if err != nil {
			p.Println("  ✗ " + clipMessage(err.Error()))
			continue
		}
		return v, nil
	}
}

// bounds describes a field's bounds: "1 to 5", "at least 1", "at most 5"
// (unit after them), or "" for none.
func bounds(lo, hi *float64, unit string) string {
	switch {
	case lo != nil && hi != nil:
		return num(*lo) + " to " + num(*hi) + unit
	case lo != nil:
		return "at least " + num(*lo) + unit
	case hi != nil:
		return "at most " + num(*hi) + unit
	}
	return ""
}

// fieldLabel is how a field is named to the person.
func fieldLabel(fld *inspector.FormField) string {
	l := clipLine(fld.Name)
	if fld.Title != "" && fld.Title != fld.Name {
		l = clipLine(fld.Title) + " (" + clipLine(fld.Name) + ")"
	}
	if fld.Required {
		l += " *"
	}
	return l
}

// parseAnswer turns what the person typed into the field's JSON value.
func parseAnswer(fld *inspector.FormField, in string) (json.RawMessage, error) {
	s := strings.TrimSpace(in)
	switch {
	case fld.Multi:
		vals := []string{}
		if s != "" {
			for _, part := range strings.Split(s, ",") {
				v, err := pickOption(fld, strings.TrimSpace(part))
				if err != nil {
					return nil, err
				}
				vals = append(vals, v)
			}
		}
		return jsonOf(vals), nil
	case len(fld.Options) > 0:
		v, err := pickOption(fld, s)
		if err != nil {
			return nil, err
		}
		return jsonOf(v), nil
	case fld.Type == "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "t", "1", "on":
			return json.RawMessage("true"), nil
		case "n", "no", "false", "f", "0", "off":
			return json.RawMessage("false"), nil
		}
		return nil, errors.New("answer y or n")
	case fld.Type == "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errors.New("expected a whole number")
		}
		return json.RawMessage(strconv.FormatInt(n, 10)), nil
	case fld.Type == "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			// JSON has no NaN or infinity.
			return nil, errors.New("expected a number")
		}
		return json.RawMessage(strconv.FormatFloat(n, 'g', -1, 64)), nil
	}
	return jsonOf(in), nil
}

// jsonOf encodes a string or a list of strings.
func jsonOf[T string | []string](v T) json.RawMessage {
	b, _ := json.Marshal(v) // strings always encode
	return b
}

// pickOption resolves an option by its number, value or title.
func pickOption(fld *inspector.FormField, s string) (string, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(fld.Options) {
		return fld.Options[n-1].Value, nil
	}
	for _, o := range fld.Options {
		if o.Value == s {
			return o.Value, nil
		}
	}
	for _, o := range fld.Options {
		if o.Title != "" && strings.EqualFold(o.Title, s) {
			return o.Value, nil
		}
	}
	return "", fmt.Errorf("%q is not one of the choices; give its number", s)
}

// describeDefault shows a default the way the person would type it.
func describeDefault(fld *inspector.FormField, v json.RawMessage) string {
	title := func(val string) string {
		for i, o := range fld.Options {
			if o.Value == val {
				return strconv.Itoa(i + 1)
			}
		}
		return val
	}
	if fld.Multi {
		var vals []string
		_ = json.Unmarshal(v, &vals)
		for i := range vals {
			vals[i] = title(vals[i])
		}
		return strings.Join(vals, ",")
	}
	if len(fld.Options) > 0 {
		return title(textOf(v))
	}
	if fld.Type == "boolean" {
		if string(v) == "true" {
			return "y"
		}
		return "n"
	}
	return textOf(v)
}

// textOf returns a JSON string's value, or the raw JSON of other values.
func textOf(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// VisitURL shows the page a URL-mode elicitation asks the person to visit
// and asks for consent to open it in the browser.
func (t *Person) VisitURL(ctx context.Context, q *inspector.URLQuestion) (inspector.ElicitResult, error) {
	p := t.Prompter
	end, err := p.Begin(ctx)
	if err != nil {
		return inspector.ElicitResult{}, err
	}
	defer end()
	p.Println("")
	p.Println(fmt.Sprintf("── %s asks you to open a web page (elicitation/create, url mode) ──", EscapeLine(q.Server)))
	p.Println(clipText(q.Message))
	p.Println("URL:  " + EscapeLine(q.URL))
	p.Println("Host: " + clipLine(q.Parsed.Host))
	for _, w := range q.Warnings {
		p.Println("warning: " + clipMessage(w))
	}
	if !q.Openable {
		why := q.NotOpenable
		if why == "" {
			why = "mcpx does not open it"
		}
		p.Println(clipLine(why) + ": declined.")
		return inspector.ElicitResult{Action: inspector.ActionDecline}, nil
	}
	choice, err := p.Choose(ctx, "Open it in your browser? [y]es, [n]o (decline), [c]ancel: ", []string{"yes", "no", "cancel"}, "")
	for err == nil && choice == "" {
		choice, err = p.Choose(ctx, "Please answer y, n or c: ", []string{"yes", "no", "cancel"}, "")
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			return inspector.ElicitResult{Action: inspector.ActionCancel}, nil
		}
		t.withdrawn(ctx)
		return inspector.ElicitResult{}, err
	}
	switch choice {
	case "no":
		return inspector.ElicitResult{Action: inspector.ActionDecline}, nil
	case "cancel":
		return inspector.ElicitResult{Action: inspector.ActionCancel}, nil
	}
	open := t.OpenURL
	if open == nil {
		open = func(string) error { return errors.New("no browser configured") }
	}
	if err := open(q.URL); err != nil {
		p.Println(fmt.Sprintf("could not open a browser (%v); open the URL above yourself", err))
	} else if !q.AwaitDone {
		p.Println("opened in your browser; the server will carry on when you finish there")
	}
	if q.AwaitDone {
		if _, err := p.ReadLine(ctx, "Press Enter when you have finished in the browser (mcpx then retries the request): "); err != nil && !errors.Is(err, io.EOF) {
			t.withdrawn(ctx)
			return inspector.ElicitResult{}, err
		}
	}
	return inspector.ElicitResult{Action: inspector.ActionAccept}, nil
}

// Confirm asks a yes-or-no question.
func (t *Person) Confirm(ctx context.Context, question string, def bool) (bool, error) {
	p := t.Prompter
	end, err := p.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer end()
	d := "no"
	if def {
		d = "yes"
	}
	choice, err := p.Choose(ctx, question+" [y]es, [n]o: ", []string{"yes", "no"}, d)
	return choice == "yes", err
}

// Sample shows a sampling request, reads the assistant's reply the person
// types (composeReply), then shows it back for review: send it, edit it
// (type it again) or decline the request. Nothing goes to the server
// without that review (spec 2025-11-25: client/sampling, "User
// Interaction Model": a human in the loop who can deny the request, and
// responses presented for review before delivery). Composing and review
// are one conversation, so no other server's question comes between them.
func (t *Person) Sample(ctx context.Context, q *inspector.SamplingQuestion) (inspector.SamplingReply, error) {
	p := t.Prompter
	end, err := p.Begin(ctx)
	if err != nil {
		return inspector.SamplingReply{}, err
	}
	defer end()
	req := q.Request
	asker, Asker := "the server", "The server"
	if q.View {
		asker, Asker = "the view", "The view"
	}
	p.Println("")
	p.Println(fmt.Sprintf("── %s asks for an LLM completion (sampling/createMessage) ──", EscapeLine(q.Server)))
	p.Printf("%s", renderSamplingRequest(req))
	p.Println("Type the assistant's reply; end it with an empty line. An empty reply declines; a reply is shown for review before it is sent.")
	if req.OffersTools() {
		p.Println(`A line "/tool NAME {json input}" answers with a tool use instead of text.`)
	}
	switch {
	case len(req.Tools) > 0 && req.ToolChoiceMode() == inspector.ToolChoiceRequired:
		p.Println(Asker + ` requires a tool use (toolChoice "required").`)
	case len(req.Tools) > 0 && req.ToolChoiceMode() == inspector.ToolChoiceNone:
		p.Println(Asker + ` allows no tool use (toolChoice "none"): answer with text.`)
	}
	declined := func() (inspector.SamplingReply, error) {
		p.Println("(declined)")
		return inspector.SamplingReply{}, nil
	}
	for {
		reply, err := t.composeReply(ctx, req)
		if err != nil {
			return inspector.SamplingReply{}, err
		}
		if reply.Empty() {
			return declined()
		}
		p.Printf("%s", describeReply(reply))
		// No default: the reply ends with an empty line, and an Enter
		// too many must not send it unreviewed.
		choices := []string{"send", "edit", "decline"}
		choice, err := p.Choose(ctx, "Send it to "+asker+"? [s]end, [e]dit or [d]ecline: ", choices, "")
		for err == nil && choice == "" {
			choice, err = p.Choose(ctx, "Please answer s, e or d: ", choices, "")
		}
		switch {
		case errors.Is(err, inspector.ErrDismissed):
			return inspector.SamplingReply{}, err
		case errors.Is(err, io.EOF):
			// The person cannot review it any more: nothing is sent
			// unreviewed (as a form whose input ends is cancelled).
			p.Println("(end of input before the review: declined)")
			return inspector.SamplingReply{}, nil
		case err != nil:
			t.withdrawn(ctx)
			return inspector.SamplingReply{}, err
		}
		switch choice {
		case "send":
			return reply, nil
		case "decline":
			return declined()
		}
		p.Println("Type the reply again; it replaces the one above (an empty reply declines).")
	}
}

// composeReply reads one reply to req, up to an empty line or the end of
// input; a line "/tool NAME {json}" adds a tool use when the request offers
// tools. A reply the request does not allow is refused at once and an
// empty line then declines (an empty reply).
func (t *Person) composeReply(ctx context.Context, req *inspector.SamplingRequest) (inspector.SamplingReply, error) {
	p := t.Prompter
	var lines []string
	var reply inspector.SamplingReply
	refused := false // the reply was refused once: an empty line now declines
	for {
		line, err := p.ReadLine(ctx, "> ")
		if err != nil {
			if errors.Is(err, inspector.ErrNoTerminal) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, inspector.ErrDismissed) {
				t.withdrawn(ctx)
				return inspector.SamplingReply{}, err
			}
			break // end of input ends the reply
		}
		if line == "" {
			if refused {
				lines, reply.ToolUses = nil, nil
				break
			}
			reply.Text = strings.Join(lines, "\n")
			if cerr := req.CheckReply(reply); cerr != nil && !reply.Empty() {
				p.Println("  ✗ " + clipMessage(cerr.Error()) + "; add a /tool line, or press Enter again to decline")
				refused = true
				continue
			}
			break
		}
		refused = false
		if rest, ok := strings.CutPrefix(line, "/tool"); ok && len(req.Tools) > 0 && (rest == "" || rest[0] == ' ') {
			name, input, _ := strings.Cut(strings.TrimSpace(rest), " ")
			if name == "" {
				p.Println(`  usage: /tool NAME {json input}, e.g. /tool ` + clipLine(req.Tools[0].Name) + ` {}`)
				continue
			}
			input = strings.TrimSpace(input)
			if input == "" {
				input = "{}"
			}
			if !json.Valid([]byte(input)) {
				p.Println(`  ✗ the tool input must be JSON, e.g. /tool get_weather {"city":"Paris"}`)
				continue
			}
			if cerr := req.CheckToolUse(name, json.RawMessage(input)); cerr != nil {
				p.Println("  ✗ " + clipMessage(cerr.Error()))
				continue
			}
			reply.ToolUses = append(reply.ToolUses, inspector.ToolUse{Name: name, Input: json.RawMessage(input)})
			continue
		}
		lines = append(lines, line)
	}
	reply.Text = strings.Join(lines, "\n")
	if cerr := req.CheckReply(reply); cerr != nil && !reply.Empty() {
		// The input ended on a reply the request does not allow.
		p.Println("  ✗ " + clipMessage(cerr.Error()))
		reply = inspector.SamplingReply{}
	}
	return reply, nil
}

// describeReply shows a reply as it is about to be sent: its text and
// each tool use.
func describeReply(r inspector.SamplingReply) string {
	var b strings.Builder
	b.WriteString("Your reply:\n")
	if r.Text != "" {
		b.WriteString(indent(Escape(r.Text), "  "))
	}
	for _, u := range r.ToolUses {
		input := string(u.Input)
		if input == "" {
			input = "{}"
		}
		// (In full, unlike a server's: this is what is sent.)
		fmt.Fprintf(&b, "  [tool use %s] %s\n", EscapeName(u.Name), EscapeLine(input))
	}
	return b.String()
}

// withdrawn tells the person, when a question went away because the
// server withdrew its request (notifications/cancelled), why: no answer
// goes to the server then.
func (t *Person) withdrawn(ctx context.Context) {
	if inspector.Withdrawn(ctx) {
		t.Prompter.Println("(the server withdrew its request; nothing was sent)")
	}
}

// What a question shows of a server's text: a person reads no more on a
// terminal, and who asks and what to answer must stay on the screen
// (spec 2025-11-25: client/elicitation, "Security Considerations": a
// clear indication of which server asks). The request as it came is on
// the wire (--wire, a trace).
const (
	maxShownLines    = 60
	maxShownBytes    = 8 << 10
	maxShownMessages = 20
	// maxShownOptions is how many choices of an enum are listed, and
	// maxShownItems how many names a list on one line holds (a form's
	// fields, a sampling request's tools, model hints, stop sequences,
	// a message's content blocks): a server may send a hundred thousand.
	maxShownOptions = 100
	maxShownItems   = 20
)

// clipText is Escape for a server's text in a question, cut after
// maxShownLines lines or maxShownBytes bytes with a line that says how
// much was left out.
func clipText(s string) string {
	cut, rest := min(len(s), maxShownBytes), ""
	if i := nthIndex(s[:cut], '\n', maxShownLines); i >= 0 {
		cut, rest = i, s[i+1:]
	} else {
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut--
		}
		rest = s[cut:]
	}
	if rest == "" {
		return Escape(s)
	}
	lines := strings.Count(strings.TrimSuffix(rest, "\n"), "\n") + 1
	return Escape(s[:cut]) + fmt.Sprintf("\n… (%s more, %s, not shown)", HumanSize(int64(len(rest))), plural(lines, "line"))
}

// clipLine is EscapeLine for a server's text on a line of a question, cut
// after maxShownBytes / 16 bytes.
func clipLine(s string) string {
	return EscapeLine(rawjson.Shorten(s, maxShownBytes/16))
}

// clipMessage is EscapeLine for a message of mcpx's that may quote a
// server's text at length (a schema's pattern in a validation error), cut
// after maxShownBytes bytes.
func clipMessage(s string) string {
	return EscapeLine(rawjson.Shorten(s, maxShownBytes))
}

// clipList joins items (each shown already) with ", ", up to
// maxShownItems of them, saying how many more of what there are.
func clipList(items []string, what string) string {
	if len(items) <= maxShownItems {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:maxShownItems], ", ") + fmt.Sprintf(", … (%s not shown)", plural(len(items)-maxShownItems, "more "+what))
}

// nthIndex returns the index of the nth c in s, or -1.
func nthIndex(s string, c byte, n int) int {
	off := 0
	for range n {
		i := strings.IndexByte(s[off:], c)
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off - 1
}

// renderSamplingRequest describes a sampling request for a person: system
// prompt, model preferences, limits, tools and every message.
func renderSamplingRequest(req *inspector.SamplingRequest) string {
	var b strings.Builder
	if req.SystemPrompt != "" {
		fmt.Fprintf(&b, "System prompt: %s\n", clipText(req.SystemPrompt))
	}
	if prefs := describeModelPreferences(req.ModelPreferences); prefs != "" {
		fmt.Fprintf(&b, "Model preferences: %s\n", prefs)
	}
	var limits []string
	if req.MaxTokens != nil {
		limits = append(limits, fmt.Sprintf("max tokens %d", *req.MaxTokens))
	}
	if req.Temperature != nil {
		limits = append(limits, fmt.Sprintf("temperature %s", num(*req.Temperature)))
	}
	if len(req.StopSequences) > 0 {
		q := make([]string, len(req.StopSequences))
		for i, s := range req.StopSequences {
			q[i] = EscapeLine(fmt.Sprintf("%q", rawjson.Shorten(s, maxShownBytes/16)))
		}
		limits = append(limits, "stop at "+clipList(q, "stop sequence"))
	}
	if req.IncludeContext != "" && req.IncludeContext != "none" {
		limits = append(limits, "include context "+clipLine(req.IncludeContext))
	}
	if len(limits) > 0 {
		fmt.Fprintf(&b, "Limits: %s\n", strings.Join(limits, ", "))
	}
	if len(req.Tools) > 0 {
		var names []string
		for _, t := range req.Tools {
			n := clipLine(t.Name)
			if t.Description != "" {
				n += " (" + firstLine(rawjson.Shorten(t.Description, maxShownBytes/16)) + ")"
			}
			names = append(names, n)
		}
		choice := "auto"
		if req.ToolChoice != nil && req.ToolChoice.Mode != "" {
			choice = req.ToolChoice.Mode
		}
		fmt.Fprintf(&b, "Tools (choice %s): %s\n", clipLine(choice), clipList(names, "tool"))
	}
	msgs := req.Messages
	if n := len(msgs); n > maxShownMessages {
		// The latest are the ones to answer.
		fmt.Fprintf(&b, "(%d earlier messages not shown)\n", n-maxShownMessages)
		msgs = msgs[n-maxShownMessages:]
	}
	for _, m := range msgs {
		fmt.Fprintf(&b, "[%s]\n", clipLine(m.Role))
		blocks := inspector.ContentBlocks(m.Content)
		if n := len(blocks); n > maxShownItems {
			fmt.Fprintf(&b, "  (%d earlier content blocks not shown)\n", n-maxShownItems)
			blocks = blocks[n-maxShownItems:]
		}
		for _, blk := range blocks {
			b.WriteString(indent(describeBlock(blk), "  "))
		}
	}
	return b.String()
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// describeBlock renders one sampling content block as text.
func describeBlock(raw json.RawMessage) string {
	var c struct {
		Type      string            `json:"type"`
		Text      string            `json:"text"`
		Data      string            `json:"data"`
		MimeType  string            `json:"mimeType"`
		ID        string            `json:"id"`
		Name      string            `json:"name"`
		Input     json.RawMessage   `json:"input"`
		ToolUseID string            `json:"toolUseId"`
		Content   []json.RawMessage `json:"content"`
		IsError   bool              `json:"isError"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return clipLine(string(raw))
	}
	switch c.Type {
	case "text":
		return clipText(c.Text)
	case "image", "audio":
		return fmt.Sprintf("[%s: %s, %s]", c.Type, clipLine(c.MimeType), HumanSize(int64(len(c.Data)*3/4)))
	case "tool_use":
		return fmt.Sprintf("[tool use %s id=%s] %s", clipLine(c.Name), clipLine(c.ID), EscapeLine(compactString(c.Input)))
	case "tool_result":
		var parts []string
		for _, inner := range c.Content[:min(len(c.Content), maxShownItems)] {
			parts = append(parts, describeBlock(inner))
		}
		if n := len(c.Content) - maxShownItems; n > 0 {
			parts = append(parts, fmt.Sprintf("(%s not shown)", plural(n, "more block")))
		}
		head := fmt.Sprintf("[tool result for %s]", clipLine(c.ToolUseID))
		if c.IsError {
			head = fmt.Sprintf("[tool error for %s]", clipLine(c.ToolUseID))
		}
		return head + " " + strings.Join(parts, " ")
	}
	return fmt.Sprintf("[%s] %s", clipLine(c.Type), EscapeLine(compactString(raw)))
}

func describeModelPreferences(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var mp struct {
		Hints []struct {
			Name string `json:"name"`
		} `json:"hints"`
		Cost         *float64 `json:"costPriority"`
		Speed        *float64 `json:"speedPriority"`
		Intelligence *float64 `json:"intelligencePriority"`
	}
	if json.Unmarshal(raw, &mp) != nil {
		return EscapeLine(compactString(raw))
	}
	var parts []string
	if len(mp.Hints) > 0 {
		var h []string
		for _, x := range mp.Hints {
			h = append(h, clipLine(x.Name))
		}
		parts = append(parts, "hints "+clipList(h, "hint"))
	}
	for _, p := range []struct {
		name string
		v    *float64
	}{{"cost", mp.Cost}, {"speed", mp.Speed}, {"intelligence", mp.Intelligence}} {
		if p.v != nil {
			parts = append(parts, fmt.Sprintf("%s %s", p.name, num(*p.v)))
		}
	}
	return strings.Join(parts, "; ")
}

var _ inspector.Person = (*Person)(nil)
