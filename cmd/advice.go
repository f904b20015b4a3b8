package cmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/oauthflow"
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
		if !errors.As(err, &e) {
			return ""
		}
		return ": use --protocol-era " + e.Looks + " (or auto)"
	},
	func(err error) string {
		var e *inspector.UnsupportedVersionError
		if !errors.As(err, &e) || !e.HandshakeEra() {
			return ""
		}
		return ": use --protocol-era legacy (or auto)"
	},
	// The server chose a version mcpx does not speak.
	func(err error) string {
		var e *inspector.VersionError
		if !errors.As(err, &e) {
			return ""
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
	// A tool, prompt or resource the server does not list.
	func(err error) string {
		var e *inspector.NotFoundError
		if !errors.As(err, &e) || len(e.Suggestions) > 0 {
			return ""
		}
		return fmt.Sprintf("; see `mcpx %ss list`", e.Kind)
	},
	// Arguments that do not match the tool's inputSchema.
	func(err error) string {
		var e *inspector.InvalidArgumentsError
		if !errors.As(err, &e) {
			return ""
		}
		return " (--no-validate sends the call anyway)"
	},
	// A tool that runs only as a task.
	func(err error) string {
		if !errors.Is(err, inspector.ErrTaskRequired) {
			return ""
		}
		return "; add --task"
	},
	// A list whose pages List stopped following.
	func(err error) string {
		var e *inspector.PaginationError
		if !errors.As(err, &e) {
			return ""
		}
		return " (use --cursor to fetch pages one by one)"
	},
	// A message longer than the limit.
	func(err error) string {
		if !errors.Is(err, transport.ErrFrameTooLarge) {
			return ""
		}
		return "; raise the limit with --max-message-size"
	},
	// No stored token, and no new authorization allowed.
	func(err error) string {
		var e *oauthflow.NoTokenError
		switch {
		case !errors.As(err, &e):
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
