// Package apps is an MCP Apps host: it shows the interactive views that
// tools declare (extension io.modelcontextprotocol/ui, SEP-1865,
// specification 2026-01-26, "MCP Apps") in the user's browser, and speaks
// the host side of the view protocol, every message of which it reports
// to an observer (mcpx's --wire and --record).
//
// # Design
//
// The spec's web host ("Sandbox proxy") is followed with two loopback
// listeners, on two loopback hosts and both under unguessable per-run
// paths:
//
//   - the host page (http://127.0.0.1:P1/<token>/), one page for the
//     session that shows every view opened, each in a frame of
//   - the sandbox origin (http://127.0.0.2:P2/<token>/view/<id>): the
//     view's sandbox proxy, served with the view's Content-Security-Policy
//     header (built from the resource's _meta.ui.csp — its resources/read
//     content item's, else its resources/list entry's — never looser than
//     declared, the spec's restrictive default without declarations, and
//     frame-ancestors naming the host page). The proxy writes the view's
//     HTML into an inner frame, which inherits that policy, and relays
//     postMessage both ways.
//
// Different origins keep the host page and the views from each other's
// documents; an IP literal avoids any doubt about what "localhost"
// resolves to. The sandbox has a loopback host of its own because
// browsers scope cookies by host, not port: on 127.0.0.1 a view would
// read the non-HttpOnly cookies of every local service reached as
// http://127.0.0.1:PORT (a developer's web app), and be same-site to
// them, SameSite cookies included. Where 127.0.0.2 cannot be listened on
// (macOS configures no such alias by default) the sandbox falls back to
// http://127.0.0.1:P2: another origin by its port, and views work, but
// without that isolation. Both listeners follow mcpx's local listener
// rule (internal/listenguard): requests for other Hosts (DNS rebinding)
// and from other Origins are refused.
//
// The page is a relay only: host→page messages arrive on a server-sent
// event stream, page→host messages are POSTed in order, batched, with a
// bounded queue. All protocol logic is in Go (view.go), where messages
// are checked, rate-limited, answered, proxied to the server through a
// Backend, or handed to the program through Handlers. The one exception
// is the rate limit: the sandbox and the page also drop a view's
// notifications over it before they are carried (the sandbox tells the
// page how many in ui/notifications/sandbox-dropped, a message of mcpx's
// own), so that a flood does not delay the answers mcpx waits for. The
// pages are embedded, fetch nothing from elsewhere, and put server-supplied text in
// the document only as text.
//
// Of the specification's draft, the host takes ui/download-file
// (download.go: the files are checked, decoded and named here, asked
// about and saved by the program through Handlers.DownloadFile and
// SaveDownload), a view's sampling/createMessage (answered by the
// program through Handlers.Sample, as a server's) and app-provided tools
// (apptools.go: listed with tools/list, again at the view's
// notifications/tools/list_changed, told to Handlers.ViewTools, called
// with View.CallTool). It never sends ui/notifications/tool-input-partial,
// which the draft makes optional: the host has no model streaming a
// call's arguments.
//
// JSON-RPC encoding and decoding of view messages is in wire.go only.
package apps
