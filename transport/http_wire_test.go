package transport_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mcpx-dev/mcpx/transport"
)

// What --wire shows of an HTTP error answer: its status line ends with
// the start of its body, bounded, control characters escaped, and with
// the request's credentials (and anything that looks like one) redacted,
// as traces redact their text. mcpx used to show the status alone, and
// an inspector could not see what the server said.
func TestWireShowsErrorBodies(t *testing.T) {
	const token = "SECRET-TOKEN-1234"
	// The 2 KiB shown end among the secrets: one whole, which would be
	// cut, and one that only starts.
	long := strings.Repeat("x", 2020) + token + "yyyyy" + "SECRET-HEADER" + strings.Repeat("y", 8000)
	cases := []struct {
		name string
		// answer refuses tools/list.
		answer func(w http.ResponseWriter, id string)
		// line is what the status line of the refusal holds.
		line []string
		// err is what the error says; "" for no error.
		err string
	}{
		{
			name: "500 with control characters and secrets",
			answer: func(w http.ResponseWriter, id string) {
				http.Error(w, "boom \x1b[2J at Authorization: Bearer "+token+", key X-Api: SECRET-HEADER, api_key=sk-live-1 see http://x/?token=SECRET-Q from Origin: http://page.example", http.StatusInternalServerError)
			},
			// An -H header is a credential but for the standard ones.
			line: []string{"500 Internal Server Error text/plain; charset=utf-8 ← POST http://", " body: boom \\x1b[2J at Authorization: [redacted], key X-Api: [redacted], api_key=[redacted] see http://x/?token=[redacted] from Origin: http://page.example"},
			// The error quotes the body with the request's own credentials
			// redacted; the rest is the server's text.
			err: "HTTP 500 Internal Server Error: boom \\x1b[2J at Authorization: [redacted], key X-Api: [redacted], api_key=sk-live-1",
		},
		{
			name: "a long body is cut, never inside a secret",
			answer: func(w http.ResponseWriter, id string) {
				w.Header().Set("Content-Type", "text/plain")
				w.Header().Set("Content-Length", fmt.Sprint(len(long)))
				w.WriteHeader(http.StatusBadGateway)
				w.Write([]byte(long))
			},
			line: []string{"502 Bad Gateway text/plain ← POST http://", " body: xxxxxxxx", fmt.Sprintf("xxx… (%d bytes)", len(long))},
			err:  "HTTP 502 Bad Gateway: xxxxxxxx",
		},
		{
			name: "404 ending the session",
			answer: func(w http.ResponseWriter, id string) {
				http.Error(w, "no such session", http.StatusNotFound)
			},
			line: []string{"404 Not Found text/plain; charset=utf-8 ← POST http://", " body: no such session"},
			err:  "session expired",
		},
		{
			name: "401 challenge",
			answer: func(w http.ResponseWriter, id string) {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				http.Error(w, `{"error":"invalid_token","token":"`+token+`"}`, http.StatusUnauthorized)
			},
			line: []string{`401 Unauthorized text/plain; charset=utf-8 ← POST http://`, `(WWW-Authenticate: Bearer error="invalid_token") body: {"error":"invalid_token","token":"[redacted]"}`},
			err:  "HTTP 401",
		},
		{
			// A server that quotes the refused token in its challenge: the
			// challenge is shown, in --wire and in the error, without it.
			name: "401 challenge quoting the token",
			answer: func(w http.ResponseWriter, id string) {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="token `+token+` expired"`)
				http.Error(w, "expired", http.StatusUnauthorized)
			},
			line: []string{`401 Unauthorized text/plain; charset=utf-8 ← POST http://`, `(WWW-Authenticate: Bearer error="invalid_token", error_description="token [redacted] expired")`},
			err:  `WWW-Authenticate: Bearer error="invalid_token", error_description="token [redacted] expired"`,
		},
		{
			name: "a JSON-RPC answer is shown as its frame",
			answer: func(w http.ResponseWriter, id string) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"bad"}}`))
			},
			line: []string{"400 Bad Request application/json ← POST http://"},
			err:  "bad",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, bubble(func(t *testing.T) {
			f := &fake{}
			f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
				if s.RPC != "tools/list" {
					return false
				}
				tc.answer(w, s.ID)
				return true
			}
			rec := newRecorder()
			sess, _ := mustDial(t, transport.HTTPOptions{URL: startFake(t, f), Authorizer: transport.BearerToken(token),
				Header: http.Header{"X-Api": {"SECRET-HEADER"}, "Origin": {"http://page.example"}}}, rec)
			_, err := sess.Call(callCtx(t), "tools/list", nil)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err = %v, want it to say %q", err, tc.err)
			}
			var line string
			for _, l := range strings.Split(rec.eventText(transport.EventHTTP), "\n") {
				if strings.HasPrefix(l, tc.line[0]) {
					line = l
				}
			}
			for _, w := range tc.line {
				if !strings.Contains(line, w) {
					t.Errorf("status line %q\nwant it to hold %q", line, w)
				}
			}
			if tc.name == "a JSON-RPC answer is shown as its frame" && strings.Contains(line, "body:") {
				t.Errorf("status line %q repeats the frame", line)
			}
			if len(line) > 2<<10+300 {
				t.Errorf("status line of %d bytes", len(line))
			}
			wire := rec.eventText(transport.EventHTTP) + rec.eventText(transport.EventNote)
			for _, secret := range []string{"sk-live", "\x1b"} {
				if strings.Contains(wire, secret) {
					t.Errorf("%q shown:\n%s", secret, wire)
				}
			}
			all := wire
			if err != nil {
				all += err.Error()
			}
			if strings.Contains(all, "SECRET") {
				t.Errorf("a credential of the request shown:\n%s", all)
			}
			if strings.Contains(all, "SECRET-T") || strings.Contains(all, "xSEC") {
				t.Errorf("part of the token shown")
			}
		}))
	}
}

// Reading the start of an error body for --wire leaves the body whole
// for what reads it next: the error message quotes the same text with or
// without an observer.
func TestWireBodyReadsThrough(t *testing.T) { synctest.Test(t, testWireBodyReadsThrough) }

func testWireBodyReadsThrough(t *testing.T) {
	body := strings.Repeat("é", 1500) + "END" // longer than what --wire shows, cut inside a character
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/list" {
			return false
		}
		http.Error(w, body, http.StatusServiceUnavailable)
		return true
	}
	u := startFake(t, f)
	var msgs []string
	for _, observe := range []bool{true, false} {
		opts := transport.HTTPOptions{URL: u, Client: memClient(t, u)}
		if observe {
			opts.Observer = newRecorder().observe
		}
		conn, err := transport.NewHTTP(opts)
		if err != nil {
			t.Fatal(err)
		}
		err = conn.Write(callCtx(t), transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)})
		conn.Close()
		var he *transport.HTTPError
		if !errors.As(err, &he) {
			t.Fatalf("err = %v", err)
		}
		msgs = append(msgs, he.Body)
	}
	if msgs[0] != msgs[1] || !strings.HasPrefix(msgs[0], "éé") {
		t.Errorf("excerpt with --wire %q, without %q", msgs[0], msgs[1])
	}
}

// The credentials of the URL itself — its user info, which net/http sends
// as Basic credentials, and the values of its secret query parameters —
// are the request's too: an error answer that quotes them is shown, in
// the error and in --wire, without them, as one quoting the bearer token
// is. mcpx used to redact only the headers it set, and a server echoing
// the request showed "Basic dXNlcjpQVy1TRUNSRVQtOQ==" and "api_key=…" whole.
func TestErrorBodiesHideURLCredentials(t *testing.T) {
	synctest.Test(t, testErrorBodiesHideURLCredentials)
}

func testErrorBodiesHideURLCredentials(t *testing.T) {
	f := &fake{}
	f.post = func(w http.ResponseWriter, r *http.Request, s seen) bool {
		if s.RPC != "tools/list" {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="x", error_description="`+r.Header.Get("Authorization")+`"`)
		http.Error(w, "refused "+r.Header.Get("Authorization")+" for "+r.URL.RawQuery, http.StatusInternalServerError)
		return true
	}
	base := startFake(t, f)
	u := strings.Replace(base, "http://", "http://user:PW-SECRET-9@", 1) + "?api_key=Q-SECRET-7&x=1"
	rec := newRecorder()
	sess, _ := mustDial(t, transport.HTTPOptions{URL: u, Client: memClient(t, base)}, rec)
	_, err := sess.Call(callCtx(t), "tools/list", nil)
	if err == nil || !strings.Contains(err.Error(), "HTTP 500") || !strings.Contains(err.Error(), "refused Basic [redacted] for api_key=[redacted]&x=1") {
		t.Fatalf("err = %v, want the HTTP 500 quoting the request without its credentials", err)
	}
	all := err.Error() + rec.eventText(transport.EventHTTP) + rec.eventText(transport.EventNote)
	for _, secret := range []string{"PW-SECRET", "Q-SECRET", "dXNlcjpQVy1TRUNSRVQtOQ"} {
		if strings.Contains(all, secret) {
			t.Errorf("%q shown:\n%s", secret, all)
		}
	}
}
