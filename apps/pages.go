package apps

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// The pages are self-contained: no fetch leaves the two loopback origins.
//
//go:embed pages/host.html pages/host.js pages/host.css pages/sandbox.html pages/sandbox.js
var pages embed.FS

// The pages' templates are parsed on first use, not at start-up: every
// mcpx command links this package.
var (
	hostPage    = sync.OnceValue(func() *template.Template { return template.Must(template.ParseFS(pages, "pages/host.html")) })
	sandboxPage = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("sandbox").Parse(mustRead("pages/sandbox.html")))
	})
)

func mustRead(name string) string {
	b, err := pages.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// serveStatic serves one of the pages' scripts or style sheets.
func serveStatic(w http.ResponseWriter, name string) {
	b, err := pages.ReadFile("pages/" + name)
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	ct := "text/javascript; charset=utf-8"
	if strings.HasSuffix(name, ".css") {
		ct = "text/css; charset=utf-8"
	}
	hd := w.Header()
	hd.Set("Content-Type", ct)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b)
}

// servePage serves the host page, at its canonical address only: its
// origin is what the sandboxes admit as their parent (frame-ancestors and
// the proxy's origin checks), so a page opened as localhost:PORT is
// redirected to 127.0.0.1:PORT.
func (h *Host) servePage(w http.ResponseWriter, r *http.Request) {
	if "http://"+r.Host != h.hostOrigin {
		http.Redirect(w, r, h.URL(), http.StatusTemporaryRedirect)
		return
	}
	base := "/" + h.hostToken + "/"
	var b bytes.Buffer
	err := hostPage().Execute(&b, map[string]string{
		"SandboxOrigin": h.sandboxOrig,
		"Events":        base + "events",
		"Post":          base + "post",
		"MaxMessage":    strconv.FormatInt(h.opts.MaxMessageSize, 10),
		"MaxPost":       strconv.FormatInt(h.maxPost(), 10),
		"Rate":          strconv.FormatFloat(h.opts.RateLimit, 'g', -1, 64),
		"Burst":         strconv.Itoa(h.opts.RateBurst),
		"CSS":           base + "host.css",
		"JS":            base + "host.js",
	})
	if err != nil {
		http.Error(w, "host page", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	// The page runs only its own script, talks only to mcpx, frames only
	// the sandbox origin, and cannot be framed.
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "+
		"frame-src "+h.sandboxOrig+"; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b.Bytes())
}
