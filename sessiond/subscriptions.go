package sessiond

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/mcp"
)

// A resource subscription (resources/subscribe) belongs to the server's
// session, which the commands share: the server keeps one subscription per
// URI for the held session, however many commands asked for it. So the
// daemon counts the commands subscribed to each URI: a command's
// resources/unsubscribe reaches the server only when no other attached
// command is subscribed to that URI (otherwise it is answered here, and
// the others go on getting its updates), and a command that goes away
// subscribed (Ctrl-C, killed) is unsubscribed for, when it was the last.

// unsubscribeTimeout bounds the unsubscribe sent for a command that went
// away subscribed.
const unsubscribeTimeout = 5 * time.Second

// subscriptionURI returns params.uri, "" when there is none.
func subscriptionURI(params json.RawMessage) string {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	return p.URI
}

// subscribe counts a as subscribed to uri.
func (d *Daemon) subscribe(a *attachment, uri string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.subs[uri] == nil {
		d.subs[uri] = map[*attachment]struct{}{}
	}
	d.subs[uri][a] = struct{}{}
}

// unsubscribe counts a as no longer subscribed to uri and reports whether
// another command still is (then the server's subscription stays).
func (d *Daemon) unsubscribe(a *attachment, uri string) (others bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	holders := d.subs[uri]
	delete(holders, a)
	if len(holders) == 0 {
		delete(d.subs, uri)
		return false
	}
	return true
}

// releaseSubscriptions unsubscribes, at the server, from the URIs a
// command that went away was the last to be subscribed to.
func (d *Daemon) releaseSubscriptions(a *attachment) {
	var last []string
	d.mu.Lock()
	for uri, holders := range d.subs {
		if _, ok := holders[a]; !ok {
			continue
		}
		delete(holders, a)
		if len(holders) == 0 {
			delete(d.subs, uri)
			last = append(last, uri)
		}
	}
	d.mu.Unlock()
	sess := d.sess.Load()
	if len(last) == 0 || sess == nil || d.ctx.Err() != nil {
		return // (a session that ends ends its subscriptions)
	}
	ctx, cancel := context.WithTimeout(d.ctx, unsubscribeTimeout)
	defer cancel()
	for _, uri := range last {
		if _, err := sess.Call(ctx, mcp.MethodResourcesUnsubscribe, map[string]string{"uri": uri}, inspector.Raw()); err != nil {
			d.note("unsubscribing from %s, which no command attached is subscribed to any more: %v", uri, err)
		}
	}
}
