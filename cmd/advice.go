package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpx-dev/mcpx/apps"
	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/servers"
	"github.com/mcpx-dev/mcpx/sessiond"
	"github.com/mcpx-dev/mcpx/transport"
)

// The libraries' errors state what happened and carry the facts in their
// types; what to do about it with mcpx's flags and commands is said here,
// and only here. Each entry of adviceTable recognises one kind of error
// (errors.As over the error chain) and returns the advice to follow its
// text, or "".
var adviceTable = []func(error) string{
	// The server speaks the other protocol era.
	func(err error) string {
		var e *inspector.EraError
		if !errors.As(err, &e) || e.Other != nil {
			// Other: both eras were tried; neither flag helps.
			return ""
		}
		var ve *versionEraError
		if errors.As(err, &ve) {
			return ve.advice()
		}
		return ": use --protocol-era " + e.Looks + " (or auto)"
	},
	// The auto era's probe failed in a way that says nothing of the era.
	func(err error) string {
		var e *inspector.ProbeError
		if !errors.As(err, &e) {
			return ""
		}
		return "; --protocol-era legacy or modern opens the session without it"
	},
	func(err error) string {
		var e *inspector.UnsupportedVersionError
		if !errors.As(err, &e) || !e.HandshakeEra() {
			return ""
		}
		var ve *versionEraError
		if errors.As(err, &ve) {
			return ve.advice()
		}
		return ": use --protocol-era legacy (or auto)"
	},
	// The server chose a version mcpx does not speak.
	func(err error) string {
		var e *inspector.VersionError
		if !errors.As(err, &e) || e.Got == "" {
			return ""
		}
		if slices.Contains(mcp.ModernVersions, e.Got) {
			// A stateless revision mcpx speaks, in the other era: no
			// version offered in initialize gets it.
			return ": use --protocol-era modern (or auto)"
		}
		return "; try --protocol-version with one the server supports"
	},
	// The server needs a client capability mcpx did not declare.
	func(err error) string {
		var e *inspector.MissingCapabilityError
		if !errors.As(err, &e) {
			return ""
		}
		var hints []string
		for _, n := range e.Capabilities() {
			switch {
			case strings.HasPrefix(n, "roots"):
				hints = append(hints, "--root PATH declares roots")
			case strings.HasPrefix(n, "sampling"):
				hints = append(hints, "sampling is declared unless --no-sampling")
			case strings.HasPrefix(n, "elicitation"):
				hints = append(hints, "elicitation is declared unless --no-elicitation")
			}
		}
		if len(hints) == 0 {
			return ""
		}
		return " (" + strings.Join(slices.Compact(hints), "; ") + ")"
	},
	// A request of the Skills extension to a server that does not declare
	// it, or does not declare directoryRead with it.
	func(err error) string {
		var e *inspector.ExtensionNotDeclaredError
		switch {
		case !errors.As(err, &e) || e.Extension != mcp.SkillsExtension:
			return ""
		case e.Setting == mcp.SkillsDirectoryRead:
			return "; `mcpx skills get URI` lists a skill's files"
		}
		// Skills extension, "Capability Negotiation": to a client without
		// the extension, skill:// resources are ordinary resources.
		return "; any skill files it serves are ordinary resources (`mcpx resources list`, `mcpx resources read URI`)"
	},
	// A server name no configuration file defines.
	func(err error) string {
		var e *servers.NotFoundError
		if !errors.As(err, &e) {
			return ""
		}
		if len(e.Ref) > 1 && e.Ref[0] == '@' {
			// mcpx repl @dev, mcpx -s @dev: a session's name, which is
			// read only as mcpx's first argument (takeSessionArg).
			return "; a session of mcpx connect is named by @NAME as mcpx's first argument (mcpx @NAME repl, mcpx @NAME tools list)"
		}
		var meant string
		if near := inspector.Suggest(e.Ref, e.Names, 3); len(near) > 0 {
			meant = " (did you mean " + strings.Join(near, ", ") + "?)"
		}
		if len(e.Problems) > 0 {
			return meant + "; `mcpx servers -v` lists the servers found and the problems met (or give the server command after --, or --url URL)"
		}
		return meant + "; `mcpx servers` lists the servers found (or give the server command after --, or --url URL)"
	},
	// A configured server's ${input:ID} without a value.
	func(err error) string {
		var e *servers.MissingInputError
		if !errors.As(err, &e) {
			return ""
		}
		return fmt.Sprintf(": give it with --input %s=VALUE", e.Input.ID)
	},
	// A tool, prompt or resource the server does not list.
	func(err error) string {
		var e *inspector.NotFoundError
		if !errors.As(err, &e) || len(e.Suggestions) > 0 {
			return ""
		}
		if e.Template {
			// The variables as key=value after the template expand it.
			words := []string{"mcpx", "resources", "read", e.Name}
			_, vars, _ := inspector.ExpandURITemplate(e.Name, nil)
			for _, v := range vars {
				words = append(words, v+"=VALUE")
			}
			return fmt.Sprintf("; give its variables values after it (%s), or see `mcpx resources templates`", shellJoin(words))
		}
		return fmt.Sprintf("; see `mcpx %ss list`", e.Kind)
	},
	// An MCP Apps view that no browser showed, or that did not start.
	func(err error) string {
		if errors.Is(err, apps.ErrNoPage) || errors.Is(err, apps.ErrNoInitialize) {
			return " (--ui-timeout waits longer)"
		}
		return ""
	},
	// Arguments that do not match the tool's inputSchema.
	func(err error) string {
		var e *inspector.InvalidArgumentsError
		if !errors.As(err, &e) {
			return ""
		}
		return " (--no-validate sends the call anyway)"
	},
	// Prompt arguments the prompt does not declare, or required ones missing.
	func(err error) string {
		var e *inspector.PromptArgumentsError
		if !errors.As(err, &e) {
			return ""
		}
		return " (--no-validate sends the request anyway)"
	},
	// Arguments with a number too large to check against the inputSchema,
	// a string too long to match against its patterns, or a schema whose
	// check of them would not end.
	func(err error) string {
		var e *inspector.NumberRangeError
		var pe *inspector.PatternWorkError
		var we *inspector.CheckWorkError
		if !errors.As(err, &e) && !errors.As(err, &pe) && !errors.As(err, &we) {
			return ""
		}
		return " (--no-validate sends the call as typed)"
	},
	// A tool that runs only as a task.
	func(err error) string {
		if !errors.Is(err, inspector.ErrTaskRequired) {
			return ""
		}
		return "; add --task"
	},
	// A task mcpx stopped waiting for.
	func(err error) string {
		var e *inspector.TaskTimeoutError
		switch {
		case !errors.As(err, &e):
			return ""
		case e.Max:
			return " (--max-timeout waits longer)"
		}
		return " (a longer --timeout waits longer between status changes; --timeout 0, as long as --max-timeout)"
	},
	// A list that stopped before its end.
	func(err error) string {
		var e *inspector.IncompleteListError
		var cf *checkFailure
		if !errors.As(err, &e) || e.Cursor == nil || errors.Is(err, context.Canceled) || errors.As(err, &cf) {
			return ""
		}
		return " (use --cursor to fetch pages one by one)"
	},
	// A message longer than the limit (an SSE field has a cap of its own,
	// unless the limit is smaller; an open session's limit is its own,
	// below).
	func(err error) string {
		var fe *transport.SSEFieldTooLongError
		var ae *sessiond.AnswerTooLargeError
		if !errors.Is(err, transport.ErrFrameTooLarge) || (errors.As(err, &fe) && !fe.MessageSize) || errors.As(err, &ae) {
			return ""
		}
		return "; raise the limit with --max-message-size"
	},
	// A message longer than the open session (@NAME) takes, or an answer
	// longer than it took: its limit was set when it opened.
	func(err error) string {
		var e *sessiond.MessageTooLargeError
		var ae *sessiond.AnswerTooLargeError
		name := ""
		switch {
		case errors.As(err, &e):
			name = e.Name
		case errors.As(err, &ae):
			name = ae.Name
		default:
			return ""
		}
		return fmt.Sprintf(" (mcpx disconnect %s, then mcpx connect %s --max-message-size SIZE opens it with a larger limit)", name, name)
	},
	// A step-up no person could authorize here: a login elsewhere must ask
	// for the scopes, or it stores a token refused the same way.
	func(err error) string {
		var e *oauthflow.StepUpError
		if !errors.As(err, &e) {
			return ""
		}
		return fmt.Sprintf(" (run `mcpx auth login --url %s --scope '%s'` in a terminal first: it stores a token with them)", e.ServerURL, strings.Join(e.Scopes, " "))
	},
	// No stored token, and no new authorization allowed.
	func(err error) string {
		var e *oauthflow.NoTokenError
		var su *oauthflow.StepUpError
		switch {
		case !errors.As(err, &e), errors.As(err, &su):
			return ""
		case e.StoredOnly:
			return fmt.Sprintf(" (--stored-auth-only forbids a new authorization: run `mcpx auth login --url %s` first)", e.ServerURL)
		}
		return fmt.Sprintf(" (run `mcpx auth login --url %s`)", e.ServerURL)
	},
	// No client mcpx could register by itself.
	func(err error) string {
		var e *oauthflow.ClientError
		if !errors.As(err, &e) {
			return ""
		}
		metadata := ""
		if e.MetadataDocuments {
			metadata = ", or pass --client-metadata-url with the HTTPS URL of a client ID metadata document you host"
		}
		switch e.Problem {
		case oauthflow.NoRegistration:
			return " (pass the client ID of the client you register there with --client-id ID, with --client-secret SECRET for a confidential client; --callback-url fixes the redirect URI" + metadata + ")"
		case oauthflow.RegistrationRefused:
			return " (register a client by hand and pass --client-id instead" + metadata + ")"
		case oauthflow.UnsupportedAuthMethods:
			return " (pre-register a client and use --client-id with --private-key for private_key_jwt)"
		case oauthflow.NeedsStaticClient:
			return ": give --client-id (or --client-metadata-url where it supports client ID metadata documents)"
		case oauthflow.ClientMoved:
			return " and pass that client's --client-id"
		}
		return ""
	},
}

// versionEraError marks an *inspector.EraError of a session that offered
// --protocol-version version, a version of the era that failed: the
// advice to use the other era must say to leave the version out, or
// following it is a usage error.
type versionEraError struct {
	err     error
	version string
	looks   string // the era the server looks like it speaks
}

func (e *versionEraError) Error() string { return e.err.Error() }
func (e *versionEraError) Unwrap() error { return e.err }

// advice is the era's advice: --protocol-era LOOKS with the version given
// is refused as a contradiction, so the version goes too.
func (e *versionEraError) advice() string {
	return ": use --protocol-era " + e.looks + " without --protocol-version " + e.version + ", a version of the other era (or --protocol-era auto)"
}

// markVersionEra returns err marked as a versionEraError when it says the
// server speaks another era (an *inspector.EraError, or an
// *inspector.UnsupportedVersionError naming handshake-era versions only)
// than that of version, given with --protocol-version.
func markVersionEra(err error, version string) error {
	var ee *inspector.EraError
	var ue *inspector.UnsupportedVersionError
	looks := ""
	switch {
	case version == "":
	case errors.As(err, &ee) && ee.Other == nil:
		looks = ee.Looks
	case errors.As(err, &ue) && ue.HandshakeEra():
		looks = eraLegacy
	}
	if era := inspector.VersionEra(version); looks == "" || era == "" || era == looks {
		return err
	}
	return &versionEraError{err: err, version: version, looks: looks}
}

// advice returns what the person can do about err on mcpx's command line,
// to follow the error's own text: the advice of every kind of error in
// its chain, in the order of adviceTable ("" when there is none).
func advice(err error) string {
	var b strings.Builder
	for _, a := range adviceTable {
		b.WriteString(a(err))
	}
	return b.String()
}

// hintFacts are what the advice after an HTTP failure depends on.
type hintFacts struct {
	bearer     bool // a bearer token was sent
	authHeader bool // -H gave an Authorization header
	// entryAuth is the configured server's entry that gave the
	// Authorization header sent ("FILE entry NAME"), "" for none.
	entryAuth string
	narrated  bool   // -v or --wire shows the authorization steps
	login     bool   // the command is mcpx auth login
	era       string // --protocol-era as settled (legacy, auto, modern)
	// mode is the HTTP transport asked for (--transport, or a named
	// server's type), "" for a server command; modeReason what chose it.
	mode       transport.HTTPMode
	modeReason string
}

// hintFacts returns the facts of the connection d describes, shown as out
// says.
func (d connDesc) hintFacts(out output) hintFacts {
	f := hintFacts{bearer: d.http.sentBearer() != "", authHeader: d.http.url != "" && d.http.oauthOff() != "",
		entryAuth: d.http.authFrom, narrated: out.verbose || out.wire, era: d.session.era}
	if d.http.url != "" {
		f.mode, f.modeReason = d.http.mode, orDefault(d.http.modeReason, "chosen with --transport "+string(d.http.mode))
	}
	return f
}

// secrets are the secrets of the run's connection, or of its
// configuration when it made none through env.session (verify, proxy).
func (e *env) secrets() *record.Secrets {
	if e.run != nil && e.run.secrets != nil {
		return e.run.secrets
	}
	return e.cfg.conn.knownSecrets()
}

// hintFacts are the facts of the run's connection: e's configuration, and
// the configured server it resolved to (-s NAME), which the configuration
// does not hold.
func (e *env) hintFacts() hintFacts {
	f := e.cfg.conn.hintFacts(e.cfg.out)
	if f.entryAuth == "" {
		f.entryAuth = e.run.entryAuth
	}
	f.login = e.run.login
	return f
}

// httpHint says what to do about an HTTP failure, after its message.
func httpHint(err error, f hintFacts) string {
	if errors.Is(err, oauthflow.ErrNoResponse) && errors.Is(err, context.DeadlineExceeded) {
		if f.login {
			return " (the browser authorization took longer than --timeout; raise it to wait longer, e.g. --timeout 15m)"
		}
		return " (the browser authorization took longer than --timeout; run `mcpx auth login --url URL`, which waits 5 minutes, or raise --timeout)"
	}
	if errors.Is(err, transport.ErrUnauthorized) || errors.Is(err, oauthflow.ErrAuthorization) {
		var ue *transport.UnauthorizedError
		switch {
		case errors.As(err, &ue) && ue.LeftOrigin:
			// The credentials were never sent where they were refused.
			return " (a redirect led to another origin, which mcpx sends no credentials to; if that is the server's own address, give it as --url)"
		case f.bearer:
			return " (the server refused the bearer token)"
		case f.entryAuth != "":
			return " (the Authorization header from " + f.entryAuth + " was rejected; -H 'Authorization: …' or --bearer TOKEN replaces it)"
		case f.authHeader:
			return " (the server refused the Authorization header given with -H)"
		case errors.As(err, &ue) && transport.IsSocketURL(ue.URL):
			// No OAuth over a socket (socketNoOAuth): nothing to narrate.
			return " (mcpx does not use OAuth over a socket; --bearer TOKEN or -H 'Authorization: …' sends credentials)"
		case errors.Is(err, oauthflow.ErrInteraction), f.narrated:
			return ""
		case errors.Is(err, oauthflow.ErrAuthorization):
			return " (-v shows every authorization step)"
		}
		if errors.As(err, &ue) && ue.Status == http.StatusForbidden && ue.CredentialID == "" && ue.Challenge == "" {
			// Not an authorization matter: the request carried no
			// credentials and the server asked for none.
			return " (the server refused the request without asking for credentials)"
		}
		if errors.As(err, &ue) && ue.Status == http.StatusForbidden {
			return " (the server refuses this request to the authorized client; -v shows the authorization steps)"
		}
		return " (-v shows the authorization steps; --bearer TOKEN sends a token of your own)"
	}
	if errors.Is(err, transport.ErrConnect) && notTLS(err) {
		// No certificate was offered: --ca-cert cannot help.
		return " (the server does not speak TLS at that address; for a plain HTTP server, use an http:// URL)"
	}
	if errors.Is(err, transport.ErrConnect) && isTLSError(err) {
		return " (if the server's certificate comes from a private CA, trust it with --ca-cert FILE)"
	}
	// The transport asked for may be the wrong one (spec 2025-03-26:
	// basic/transports, "Backwards Compatibility"): a Streamable HTTP
	// server refuses the legacy transport's opening GET (405 as the spec
	// has it, 400 without a session, as the TypeScript SDK does, or 404),
	// and a legacy server's stream URL takes no POST.
	var he *transport.HTTPError
	if errors.As(err, &he) && (he.Status == http.StatusBadRequest || he.Status == http.StatusNotFound || he.Status == http.StatusMethodNotAllowed) {
		switch {
		case f.mode == transport.ModeSSE && he.Method == http.MethodGet:
			return " (the URL was reached as a legacy HTTP+SSE server, " + f.modeReason + "; for a Streamable HTTP server use --transport http, or auto to find out)"
		case f.mode == transport.ModeStreamable && he.Method == http.MethodPost && he.Status != http.StatusBadRequest:
			return " (the URL was reached as a Streamable HTTP server, " + f.modeReason + "; for a legacy HTTP+SSE server use --transport sse, or auto to find out)"
		case f.mode == transport.ModeAuto && he.Method == http.MethodGet && he.Status == http.StatusNotFound:
			// Both transports were tried, and the legacy one's GET found
			// nothing there either: the path is the likelier mistake.
			return " (nothing answers MCP at that URL's path: check it; a server's endpoint is often /mcp, or /sse for HTTP+SSE)"
		}
	}
	return ""
}

// notTLS reports a TLS connection refused because the server answered
// with something else than TLS (plain HTTP, most often).
func notTLS(err error) bool {
	var recErr tls.RecordHeaderError
	return errors.As(err, &recErr) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}

// sessionHint says what to do about a session that did not open, after
// its message: a handshake that got no answer at all may have been sent
// to a server that speaks only 2026-07-28, which need not answer
// initialize (spec 2026-07-28: basic/versioning, "Compatibility Matrix":
// a legacy client fails against a modern server). A server that answered
// the POST with a stream did answer, only not with the result: that is
// said instead.
func sessionHint(err error, f hintFacts) string {
	var te *inspector.TimeoutError
	// (Not over HTTP+SSE, which 2026-07-28 does not run over.)
	if f.era == eraLegacy && f.mode != transport.ModeSSE && errors.As(err, &te) && te.Method == mcp.MethodInitialize && te.Waiting == "" && te.Unended == "" {
		if te.Awaiting != "" {
			return " (" + te.Awaiting + ")"
		}
		return " (a server that speaks only 2026-07-28 may not answer initialize at all: --protocol-era auto finds out)"
	}
	return ""
}

// isTLSError reports a failure to verify the server's certificate or to
// speak TLS with it.
func isTLSError(err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidErr x509.CertificateInvalidError
	var recErr tls.RecordHeaderError
	return errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) ||
		errors.As(err, &invalidErr) || errors.As(err, &recErr)
}
