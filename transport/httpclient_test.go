package transport

import (
	"net/http"
	"reflect"
	"testing"
)

// The transport mcpx builds is set as http.DefaultTransport is (dialing
// with dialTCP): the same proxies, timeouts, pool sizes and HTTP/2 (the
// TLS configuration offering it is made on first use: compared on
// clones, made after it).
func TestNewTransportIsDefaultTransport(t *testing.T) {
	got := reflect.ValueOf(newTransport().Clone()).Elem()
	want := reflect.ValueOf(http.DefaultTransport.(*http.Transport).Clone()).Elem()
	for i := range got.NumField() {
		f := got.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		g, w := got.Field(i), want.Field(i)
		if f.Type.Kind() == reflect.Func {
			if g.IsNil() != w.IsNil() {
				t.Errorf("%s: set %v, http.DefaultTransport's %v", f.Name, !g.IsNil(), !w.IsNil())
			}
			continue
		}
		if !reflect.DeepEqual(g.Interface(), w.Interface()) {
			t.Errorf("%s = %v, http.DefaultTransport's %v", f.Name, g.Interface(), w.Interface())
		}
	}
	if p := reflect.ValueOf(newTransport().Proxy).Pointer(); p != reflect.ValueOf(http.ProxyFromEnvironment).Pointer() {
		t.Error("the proxies are not the environment's")
	}
}

// Building the client of a connection leaves http.DefaultTransport alone:
// cloning it set up HTTP/2 on a transport mcpx never uses (issue 13).
// (Not parallel: it swaps the process's default transport.)
func TestNewHTTPClientLeavesDefaultTransport(t *testing.T) {
	saved := http.DefaultTransport
	t.Cleanup(func() { http.DefaultTransport = saved })
	var used bool
	http.DefaultTransport = roundTripperFunc(func(*http.Request) (*http.Response, error) {
		used = true
		return nil, http.ErrNotSupported
	})
	c, own, err := newHTTPClient(HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if own == nil || c.Transport != own {
		t.Fatalf("the client's transport is %T, not one of its own", c.Transport)
	}
	if used {
		t.Fatal("the default transport was used")
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
