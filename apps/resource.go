package apps

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The extension's names (spec "Extension Identifier", "UI Resource
// Format", "Transport Layer").
const (
	// ExtensionID names the extension in capabilities.extensions.
	ExtensionID = "io.modelcontextprotocol/ui"
	// MIMEType is the only content type of a view's resource.
	MIMEType = "text/html;profile=mcp-app"
	// ProtocolVersion is the version of the view protocol this host speaks
	// (answered in ui/initialize).
	ProtocolVersion = "2026-01-26"
	// legacyResourceURIKey is the deprecated flat _meta key that older
	// servers set instead of _meta.ui.resourceUri (spec "Resource
	// Discovery", deprecation notice).
	legacyResourceURIKey = "ui/resourceUri"
)

// knownVersions are the view protocol versions a view may ask for and get
// back unchanged; any other is answered with ProtocolVersion.
var knownVersions = []string{"2026-01-26", "2025-11-21"}

// ClientCapability is the value a host declares under
// capabilities.extensions[ExtensionID] in its initialize request (spec
// "Client (Host) Capabilities": mimeTypes is required).
func ClientCapability() json.RawMessage {
	return json.RawMessage(`{"mimeTypes":["` + MIMEType + `"]}`)
}

// Visibility values of a tool (spec "Resource Discovery", "Visibility").
const (
	VisibleToModel = "model"
	VisibleToApp   = "app"
)

// ToolUI is what a tool's _meta says about its view (spec "Resource
// Discovery": McpUiToolMeta).
type ToolUI struct {
	// ResourceURI is the ui:// resource that renders the tool's results;
	// "" when the tool has no view.
	ResourceURI string
	// Visibility is the declared visibility, nil when not declared (the
	// default is ["model", "app"]).
	Visibility []string
}

// HasView reports whether the tool names a view.
func (u ToolUI) HasView() bool { return u.ResourceURI != "" }

// VisibleTo reports whether the tool is visible to who (VisibleToModel or
// VisibleToApp); an undeclared visibility means both.
func (u ToolUI) VisibleTo(who string) bool {
	return u.Visibility == nil || slices.Contains(u.Visibility, who)
}

// AppOnly reports whether the tool is for views only: a host must not
// list it to the model (spec "Visibility", "tools/list behavior").
func (u ToolUI) AppOnly() bool { return !u.VisibleTo(VisibleToModel) }

// Errors of ParseToolUI and Host.Open, matched with errors.Is.
var (
	// ErrNoView: the tool declares no ui:// resource.
	ErrNoView = errors.New("the tool has no view")
	// ErrBadMeta: the tool's or the resource's _meta.ui is malformed.
	ErrBadMeta = errors.New("malformed _meta.ui")
	// ErrResourceRead: resources/read of the view's resource failed.
	ErrResourceRead = errors.New("the view's resource could not be read")
	// ErrMIMEType: the resource is not text/html;profile=mcp-app.
	ErrMIMEType = errors.New("the view's resource has the wrong MIME type")
	// ErrInvalidHTML: the resource's content is not an HTML document.
	ErrInvalidHTML = errors.New("the view's resource is not a valid HTML document")
)

// ParseToolUI reads a tool definition's _meta.ui (and the deprecated flat
// "ui/resourceUri"). A tool without either has a zero ToolUI and no error.
func ParseToolUI(tool json.RawMessage) (ToolUI, error) {
	var t struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(tool, &t); err != nil {
		return ToolUI{}, fmt.Errorf("%w: the tool is not a JSON object: %v", ErrBadMeta, err)
	}
	var u ToolUI
	if raw, ok := t.Meta["ui"]; ok && string(raw) != "null" {
		var ui struct {
			ResourceURI *string   `json:"resourceUri"`
			Visibility  *[]string `json:"visibility"`
		}
		if err := json.Unmarshal(raw, &ui); err != nil {
			return ToolUI{}, fmt.Errorf("%w: the tool's _meta.ui: %v", ErrBadMeta, err)
		}
		if ui.ResourceURI != nil {
			u.ResourceURI = *ui.ResourceURI
		}
		if ui.Visibility != nil {
			u.Visibility = *ui.Visibility
			if u.Visibility == nil {
				u.Visibility = []string{}
			}
			for _, v := range u.Visibility {
				if v != VisibleToModel && v != VisibleToApp {
					return ToolUI{}, fmt.Errorf("%w: visibility %q is neither %q nor %q", ErrBadMeta, v, VisibleToModel, VisibleToApp)
				}
			}
		}
	}
	if u.ResourceURI == "" {
		if raw, ok := t.Meta[legacyResourceURIKey]; ok {
			if err := json.Unmarshal(raw, &u.ResourceURI); err != nil {
				return ToolUI{}, fmt.Errorf("%w: the tool's _meta[%q] is not a string", ErrBadMeta, legacyResourceURIKey)
			}
		}
	}
	if u.ResourceURI != "" && !strings.HasPrefix(u.ResourceURI, "ui://") {
		return ToolUI{}, fmt.Errorf("%w: resourceUri %q does not use the ui:// scheme", ErrBadMeta, u.ResourceURI)
	}
	return u, nil
}

// toolName returns a tool definition's name.
func toolName(tool json.RawMessage) string {
	var t struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(tool, &t)
	return t.Name
}

// resource is a view's checked HTML and its declarations.
type resource struct {
	uri  string
	html string
	uiDecl
	// declared says where uiDecl comes from.
	declared Declared
	// listingErr is why the resources/list entry, looked at for a content
	// item without _meta.ui, gave no declarations: nil when it was not
	// looked at, declared nothing or was used.
	listingErr error
}

// uiDecl is what a resource's _meta.ui declares (McpUiResourceMeta).
type uiDecl struct {
	csp         CSP
	permissions Permissions
	// refusedPermissions are the declared permissions not granted: names
	// the spec does not define, or values that are not objects.
	refusedPermissions []string
	prefersBorder      *bool
}

// resourceContent is one member of a resources/read result's contents.
type resourceContent struct {
	URI      string                     `json:"uri"`
	MIMEType string                     `json:"mimeType"`
	Text     *string                    `json:"text"`
	Blob     *string                    `json:"blob"`
	Meta     map[string]json.RawMessage `json:"_meta"`
}

// maxHTMLSize bounds a view's document.
const maxHTMLSize = 32 << 20

// parseResource checks the result of resources/read for uri against the
// spec's content requirements ("UI Resource Format", "Content
// Requirements"): the content for uri (or the only one), of MIME type
// text/html;profile=mcp-app, its HTML in text or base64 blob, a valid
// HTML5 document; and reads its _meta.ui.
func parseResource(uri string, result json.RawMessage) (resource, error) {
	var r struct {
		Contents []resourceContent `json:"contents"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return resource{}, fmt.Errorf("%w: %s: the result is not a resources/read result: %v", ErrResourceRead, uri, err)
	}
	if len(r.Contents) == 0 {
		return resource{}, fmt.Errorf("%w: %s: the result has no contents", ErrResourceRead, uri)
	}
	i := slices.IndexFunc(r.Contents, func(c resourceContent) bool { return c.URI == uri })
	if i < 0 {
		if len(r.Contents) > 1 {
			return resource{}, fmt.Errorf("%w: %s: none of the %d contents has this URI", ErrResourceRead, uri, len(r.Contents))
		}
		i = 0
	}
	c := r.Contents[i]
	if !isAppMIME(c.MIMEType) {
		return resource{}, fmt.Errorf("%w: %s is %q, not %q", ErrMIMEType, uri, c.MIMEType, MIMEType)
	}
	var html []byte
	switch {
	case c.Text != nil:
		html = []byte(*c.Text)
	case c.Blob != nil:
		b, err := base64.StdEncoding.DecodeString(*c.Blob)
		if err != nil {
			return resource{}, fmt.Errorf("%w: %s: blob is not base64: %v", ErrInvalidHTML, uri, err)
		}
		html = b
	default:
		return resource{}, fmt.Errorf("%w: %s has neither text nor blob", ErrInvalidHTML, uri)
	}
	if err := checkHTML(html); err != nil {
		return resource{}, fmt.Errorf("%w: %s: %v", ErrInvalidHTML, uri, err)
	}
	res := resource{uri: uri, html: string(html)}
	if raw, ok := c.Meta["ui"]; ok && string(raw) != "null" {
		decl, err := parseUIMeta(raw)
		if err != nil {
			return resource{}, fmt.Errorf("%w: %s: the resource's _meta.ui: %v", ErrBadMeta, uri, err)
		}
		res.uiDecl, res.declared = decl, DeclaredInContent
	}
	return res, nil
}

// parseUIMeta reads a resource's _meta.ui, of its resources/read content
// item or of its resources/list entry.
func parseUIMeta(raw json.RawMessage) (uiDecl, error) {
	var ui struct {
		CSP           *CSP                       `json:"csp"`
		Permissions   map[string]json.RawMessage `json:"permissions"`
		PrefersBorder *bool                      `json:"prefersBorder"`
	}
	if err := json.Unmarshal(raw, &ui); err != nil {
		return uiDecl{}, err
	}
	var d uiDecl
	if ui.CSP != nil {
		d.csp = *ui.CSP
	}
	// A permission is asked for by a member holding an object; other
	// members grant nothing, and are reported.
	asked := func(k string) bool {
		v, ok := ui.Permissions[k]
		return ok && len(v) > 0 && v[0] == '{'
	}
	d.permissions = Permissions{
		Camera: asked("camera"), Microphone: asked("microphone"),
		Geolocation: asked("geolocation"), ClipboardWrite: asked("clipboardWrite"),
	}
	for _, k := range slices.Sorted(maps.Keys(ui.Permissions)) {
		name := strconv.QuoteToASCII(clipString(k, 100))
		switch {
		case !slices.Contains([]string{"camera", "microphone", "geolocation", "clipboardWrite"}, k):
			d.refusedPermissions = append(d.refusedPermissions, fmt.Sprintf("permissions member %s: not a permission of the spec (camera, microphone, geolocation, clipboardWrite)", name))
		case !asked(k):
			d.refusedPermissions = append(d.refusedPermissions, fmt.Sprintf("permissions member %s: its value %s is not an object ({} asks for it)", name, clip(ui.Permissions[k])))
		}
	}
	d.prefersBorder = ui.PrefersBorder
	return d, nil
}

// isAppMIME reports whether t is text/html with profile=mcp-app, however
// spaced and cased.
func isAppMIME(t string) bool {
	mt, params, err := mime.ParseMediaType(t)
	return err == nil && mt == "text/html" && params["profile"] == "mcp-app"
}

// checkHTML is the host's sanity check of a view's document (spec
// "Content Requirements": "Content MUST be valid HTML5 document";
// "Predeclared Resource Review"): bounded, UTF-8 without NUL, and starting
// (after a byte order mark, white space and comments) with a doctype or
// an <html> element. Browsers render almost anything; this catches a
// resource that is not a document at all (JSON, an error text, a binary)
// with a clear message instead of an empty view.
func checkHTML(b []byte) error {
	switch {
	case len(b) == 0:
		return errors.New("the document is empty")
	case len(b) > maxHTMLSize:
		return fmt.Errorf("the document is %d bytes, more than %d", len(b), maxHTMLSize)
	case !utf8.Valid(b):
		return errors.New("the document is not valid UTF-8")
	case bytes.IndexByte(b, 0) >= 0:
		return errors.New("the document contains a NUL byte")
	}
	rest := bytes.TrimPrefix(b, []byte("\uFEFF"))
	for {
		rest = bytes.TrimLeft(rest, " \t\r\n\f")
		if !bytes.HasPrefix(rest, []byte("<!--")) {
			break
		}
		end := bytes.Index(rest, []byte("-->"))
		if end < 0 {
			return errors.New("the document starts with an unclosed comment")
		}
		rest = rest[end+3:]
	}
	lower := strings.ToLower(string(rest[:min(len(rest), 15)]))
	if strings.HasPrefix(lower, "<!doctype html") || strings.HasPrefix(lower, "<html") &&
		(len(lower) == 5 || strings.ContainsRune(" \t\r\n\f>", rune(lower[5]))) {
		return nil
	}
	return fmt.Errorf("the document does not start with <!DOCTYPE html> or <html> (it starts with %q)", clipString(string(rest), 40))
}
