package oauthflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/transport"
)

// Token requests (RFC 6749 sections 3.2, 4.1.3, 4.4.2 and 6; RFC 7523;
// RFC 8693) are made and read here rather than by golang.org/x/oauth2:
// what a broken or hostile token endpoint answers (a login page with 200,
// JSON without an access_token or with members of the wrong type, an
// echo of the request) must be said in one line naming the endpoint and
// what was wrong, with the request's secrets redacted, where x/oauth2
// returns Go's terms ("oauth2: cannot parse json: invalid character '<'
// looking for beginning of value") and keeps the body of a 200 to itself.

// tokenResponse is a successful token response (RFC 6749 section 5.1).
type tokenResponse struct {
	AccessToken  string
	TokenType    string
	RefreshToken string
	// ExpiresIn is the token's lifetime in seconds, when HasExpiry (a
	// response without expires_in, or with 0, says nothing about it).
	ExpiresIn int64
	HasExpiry bool
	// Scope is the granted scope, nil when the response names none (the
	// requested scope was granted: RFC 6749 section 5.1).
	Scope []string
	// IssuedTokenType is RFC 8693's issued_token_type.
	IssuedTokenType string
}

// maxExpiresIn bounds expires_in (68 years, as x/oauth2 did): a larger
// value would overflow a time.Duration.
const maxExpiresIn = math.MaxInt32

// tokenRequest POSTs a token request to tokenURL with params (grant_type
// among them, client_credentials when not), scopes and the client's authentication (clientAuth), with
// a DPoP proof of key when it is not nil, and reads the answer
// (readTokenResponse). audience is the authorization server's issuer, the
// audience of a private_key_jwt assertion.
func (a *Authorizer) tokenRequest(ctx context.Context, tokenURL, audience string, c *Client, params url.Values, scopes []string, key *dpopKey) (*tokenResponse, error) {
	p := url.Values{}
	for k, v := range params {
		p[k] = v
	}
	if p.Get("grant_type") == "" {
		p.Set("grant_type", "client_credentials")
	}
	if len(scopes) > 0 {
		p.Set("scope", strings.Join(scopes, " "))
	}
	extra, err := a.clientAssertion(ctx, c, audience)
	if err != nil {
		return nil, err
	}
	for k, v := range extra {
		p[k] = v
	}
	basic := false
	switch c.AuthMethod {
	case "client_secret_basic":
		basic = true
	case "client_secret_post":
		p.Set("client_id", c.ID)
		p.Set("client_secret", c.Secret)
	default: // none, private_key_jwt: the client_id in the body
		if c.ID != "" {
			p.Set("client_id", c.ID)
		}
	}
	secrets := requestSecrets(c, p)

	rctx, cancel := a.requestContext(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, tokenURL, strings.NewReader(p.Encode()))
	if err != nil {
		return nil, fmt.Errorf("the token endpoint %s: %w", quoted(tokenURL), err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if a.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", a.cfg.UserAgent)
	}
	if basic {
		// RFC 6749 section 2.3.1: the client id and secret form-encoded,
		// then in Basic.
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	}
	resp, err := a.tokenClient(key).Do(req)
	if err != nil {
		return nil, requestFailed("token request to "+transport.ShortURL(tokenURL), "the OAuth token endpoint "+transport.ShortURL(tokenURL), ctx, rctx, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	if err != nil {
		return nil, requestFailed("token request to "+transport.ShortURL(tokenURL)+" (reading the answer)", "the OAuth token endpoint "+transport.ShortURL(tokenURL), ctx, rctx, err)
	}
	if len(body) > maxMetadata {
		return nil, fmt.Errorf("the token endpoint %s answered HTTP %d with more than %s: no token response is that large",
			transport.ShortURL(tokenURL), resp.StatusCode, transport.FormatSize(maxMetadata))
	}
	return readTokenResponse(tokenURL, resp, body, secrets)
}

// readTokenResponse reads a token endpoint's answer: a token response
// (RFC 6749 section 5.1) from a 2xx answer with a JSON object (or, as
// some servers send, form-encoded parameters), an error response (section
// 5.2) otherwise. Every other answer is an error that says what the
// endpoint sent: its OAuth error, the start of a body that is not JSON,
// the member that is missing or of the wrong type. The bodies quoted are
// bounded, escaped, and have the request's secrets (and anything shaped
// like a credential) redacted: an endpoint or a proxy's error page may
// echo the request, and a body mcpx cannot read may still hold a token.
func readTokenResponse(endpoint string, resp *http.Response, body []byte, secrets []string) (*tokenResponse, error) {
	at := fmt.Sprintf("the token endpoint %s answered HTTP %d", transport.ShortURL(endpoint), resp.StatusCode)
	redact := func(s string) string { return transport.RedactCredentials(transport.RedactSecrets(s, secrets)) }
	excerpt := func(s string) string {
		// Redacted before white space is collapsed: a secret may hold spaces.
		return transport.Excerpt(strings.Join(strings.Fields(redact(s)), " "))
	}
	bodyExcerpt := func() string { return bodyExcerpt(body, resp.Header.Get("Content-Type"), redact) }
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	fields, perr := parseTokenFields(body, mt)
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if perr == nil {
		// RFC 6749 section 5.2; some servers send it with 200.
		if code, _ := fields.str("error"); code != "" {
			msg := at + ": " + excerpt(code)
			if d, _ := fields.str("error_description"); d != "" {
				msg += ": " + excerpt(d)
			}
			return nil, errors.New(msg)
		}
	}
	if !ok {
		if len(bytes.TrimSpace(body)) == 0 {
			return nil, errors.New(at + " with no body")
		}
		return nil, errors.New(at + ": " + bodyExcerpt())
	}
	if perr != nil {
		what := "no Content-Type"
		if mt != "" {
			what = mt
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return nil, fmt.Errorf("%s (%s) with no body, not a token response", at, what)
		}
		return nil, fmt.Errorf("%s with %s that is not a token response (%s): %s", at, what, perr, bodyExcerpt())
	}
	var (
		tr  tokenResponse
		err error
	)
	bad := func(e error) (*tokenResponse, error) {
		return nil, fmt.Errorf("%s with a token response mcpx cannot use: %w", at, e)
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"access_token", &tr.AccessToken}, {"token_type", &tr.TokenType}, {"refresh_token", &tr.RefreshToken}, {"issued_token_type", &tr.IssuedTokenType}} {
		if *f.dst, err = fields.str(f.name); err != nil {
			return bad(err)
		}
	}
	if tr.AccessToken == "" {
		if names := fields.names(); len(names) > 0 {
			return bad(fmt.Errorf("it has no access_token (its members: %s)", transport.Excerpt(strings.Join(names, ", "))))
		}
		return bad(errors.New("it has no access_token (it is empty)"))
	}
	if tr.ExpiresIn, tr.HasExpiry, err = fields.seconds("expires_in"); err != nil {
		return bad(err)
	}
	tr.Scope = fields.scope("scope")
	return &tr, nil
}

// bodyExcerpt quotes body, an answer of Content-Type contentType that
// mcpx cannot use, on one bounded line with its control characters
// escaped (transport.Excerpt) and what redact hides hidden: an HTML page
// (a proxy's error page, a login form) by its title, as transport names
// an MCP server's pages (transport.HTMLSummary), anything else as it is,
// its white space collapsed. A page is redacted before it is summarised
// (a secret may hold spaces, which the summary collapses) and after (its
// entities decoded may spell one).
func bodyExcerpt(body []byte, contentType string, redact func(string) string) string {
	r := redact(string(body))
	if sum, ok := transport.HTMLSummary([]byte(r), contentType); ok {
		return transport.Excerpt(redact(sum))
	}
	return transport.Excerpt(strings.Join(strings.Fields(r), " "))
}

// tokenFields are the members of a token endpoint's answer, each as JSON
// (a form-encoded answer's values become JSON strings).
type tokenFields map[string]json.RawMessage

// parseTokenFields parses a token endpoint's answer of media type mt: a JSON
// object, or form-encoded parameters when it says so (or text/plain, as
// some servers label them) and does not look like JSON. The error says,
// in JSON's terms, why the body is neither.
func parseTokenFields(body []byte, mt string) (tokenFields, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n\xef\xbb\xbf")
	if (mt == "application/x-www-form-urlencoded" || mt == "text/plain") && !bytes.HasPrefix(trimmed, []byte("{")) {
		vals, err := url.ParseQuery(strings.TrimSpace(string(body)))
		if err != nil || len(vals) == 0 || !strings.Contains(string(body), "=") {
			return nil, errors.New("it is neither JSON nor form-encoded parameters")
		}
		f := tokenFields{}
		for k, v := range vals {
			b, _ := json.Marshal(v[0])
			f[k] = b
		}
		return f, nil
	}
	var f tokenFields
	if err := json.Unmarshal(trimmed, &f); err != nil {
		return nil, errors.New(rawjson.DecodeProblem(err))
	}
	if f == nil {
		return nil, errors.New("it is null, not an object")
	}
	return f, nil
}

// str returns the string member name, "" when it is absent or null.
func (f tokenFields) str(name string) (string, error) {
	v, ok := f[name]
	if !ok || rawjson.IsNull(v) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("its %s is %s, not a string", name, rawjson.Kind(v))
	}
	return s, nil
}

// seconds returns the member name as a number of seconds: a JSON number
// (a fraction is dropped) or a string holding one, as servers send both.
// Absent, null or 0 is no value.
func (f tokenFields) seconds(name string) (int64, bool, error) {
	v, ok := f[name]
	if !ok || rawjson.IsNull(v) {
		return 0, false, nil
	}
	text := string(rawjson.Trim(v))
	if rawjson.IsString(v) {
		json.Unmarshal(v, &text)
		text = strings.TrimSpace(text)
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, false, fmt.Errorf("its %s is %s, not a number of seconds", name, rawjson.Kind(v))
	}
	n = math.Trunc(math.Max(math.Min(n, maxExpiresIn), -maxExpiresIn))
	return int64(n), n != 0, nil
}

// scope returns the member name as scopes: a space-separated string (RFC
// 6749 section 3.3), or the array of strings some servers send; nil when
// it is absent or neither.
func (f tokenFields) scope(name string) []string {
	v, ok := f[name]
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return strings.Fields(s)
	}
	var list []string
	if json.Unmarshal(v, &list) == nil {
		return slices.DeleteFunc(list, func(s string) bool { return strings.TrimSpace(s) == "" })
	}
	return nil
}

// names returns the member names, sorted.
func (f tokenFields) names() []string {
	out := make([]string, 0, len(f))
	for k := range f {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
