package oauthflow

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// rotatingAS is an authorization server's token endpoint that rotates
// refresh tokens (RFC 6749 section 10.4): each refresh token is taken
// once, and a reused one is refused with invalid_grant. The first
// refresh request is held until hold is closed (when hold is set), so
// that another run can try to refresh meanwhile.
type rotatingAS struct {
	*httptest.Server
	hold    chan struct{}
	arrived chan struct{} // one value per refresh request

	mu        sync.Mutex
	current   string // the refresh token it takes
	gen       int
	refreshes atomic.Int32
	reused    atomic.Int32
}

func newRotatingAS(t *testing.T, hold bool) *rotatingAS {
	as := &rotatingAS{current: "rt-0", arrived: make(chan struct{}, 16)}
	if hold {
		as.hold = make(chan struct{})
	}
	as.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/token" || r.ParseForm() != nil || r.PostForm.Get("grant_type") != "refresh_token" {
			http.Error(w, "not here", http.StatusBadRequest)
			return
		}
		n := as.refreshes.Add(1)
		as.arrived <- struct{}{}
		if n == 1 && as.hold != nil {
			select {
			case <-as.hold:
			case <-r.Context().Done():
				return
			}
		}
		as.mu.Lock()
		defer as.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("refresh_token") != as.current {
			as.reused.Add(1)
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_grant","error_description":"refresh token already used"}`)
			return
		}
		as.gen++
		as.current = fmt.Sprintf("rt-%d", as.gen)
		fmt.Fprintf(w, `{"access_token":"at-%d","token_type":"Bearer","expires_in":3600,"refresh_token":%q}`, as.gen, as.current)
	}))
	t.Cleanup(as.Server.Close)
	return as
}

// storeExpiring stores, in dir, a token for as's server that is about to
// expire, with the refresh token as takes.
func storeExpiring(t *testing.T, dir string, as *rotatingAS) {
	t.Helper()
	now := time.Now()
	rec := &TokenRecord{
		Resource: as.URL + "/mcp", Issuer: as.URL, TokenEndpoint: as.URL + "/token", Grant: "authorization_code",
		Client:      Client{ID: "c1", AuthMethod: "none", Source: "dynamic registration"},
		AccessToken: "at-0", TokenType: "Bearer", RefreshToken: "rt-0",
		Expiry: now.Add(10 * time.Second), Obtained: now.Add(-time.Hour), Updated: now.Add(-time.Hour),
	}
	if err := NewStore(dir).SaveToken(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
}

// refreshRun is one mcpx run (mcpx auth token) using the store in dir, a
// Store of its own: it returns the access token, and tells note what it
// narrates.
func refreshRun(ctx context.Context, dir, serverURL string, note func(string)) (string, error) {
	az, err := New(Config{ServerURL: serverURL, Store: NewStore(dir), StoredOnly: true, Observer: func(e transport.Event) {
		if e.Kind == transport.EventNote {
			note(e.Text)
		}
	}})
	if err != nil {
		return "", err
	}
	tok, _, err := az.Token(ctx)
	return tok, err
}

const waitingNote = "; waiting for it"

// removeLockFiles: the last holder of a lock removes its file, except on
// Windows, where a file another process has open cannot be removed.
var removeLockFiles = runtime.GOOS != "windows"

// Two runs refresh the same stored token at the very same moment, with an
// authorization server that rotates refresh tokens: the second waits for
// the first (holding the lock of the stored token), then finds the token
// it stored and does not refresh. Before, both sent the same refresh
// token, and the second got invalid_grant (and needed the browser again).
// Each run has a Store of its own, as two processes have.
func TestConcurrentRefreshOnce(t *testing.T) {
	as := newRotatingAS(t, true)
	dir := t.TempDir()
	storeExpiring(t, dir, as)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	type result struct {
		tok string
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		tok, err := refreshRun(ctx, dir, as.URL+"/mcp", func(string) {})
		first <- result{tok, err}
	}()
	select {
	case <-as.arrived:
	case <-ctx.Done():
		t.Fatal("the first run sent no refresh request")
	}
	waiting := make(chan struct{})
	var once sync.Once
	go func() {
		tok, err := refreshRun(ctx, dir, as.URL+"/mcp", func(s string) {
			if strings.Contains(s, waitingNote) {
				once.Do(func() { close(waiting) })
			}
		})
		second <- result{tok, err}
	}()
	// The first refresh is answered once the second run waits for it,
	// or (as it did before) refreshes with the same refresh token.
	select {
	case <-waiting:
	case <-as.arrived:
		t.Error("the second run sent a refresh request while the first one's was under way")
	case <-ctx.Done():
		t.Fatal("the second run neither waited nor refreshed")
	}
	close(as.hold)
	for i, ch := range []chan result{first, second} {
		r := <-ch
		if r.err != nil || r.tok != "at-1" {
			t.Errorf("run %d: token %q, err %v; want at-1", i+1, r.tok, r.err)
		}
	}
	if n, reused := as.refreshes.Load(), as.reused.Load(); n != 1 || reused != 0 {
		t.Errorf("%d refresh requests (%d with a reused refresh token), want 1", n, reused)
	}
	checkStored(t, dir, as, "at-1", "rt-1")
}

func checkStored(t *testing.T, dir string, as *rotatingAS, access, refresh string) {
	t.Helper()
	rec, err := NewStore(dir).Token(as.URL+"/mcp", as.URL)
	if err != nil || rec == nil || rec.AccessToken != access || rec.RefreshToken != refresh {
		t.Errorf("stored: %+v, %v; want %s and %s", rec, err, access, refresh)
	}
	if _, err := os.Stat(rec.File() + ".lock"); err == nil && removeLockFiles {
		t.Errorf("the lock file %s.lock is left behind", rec.File())
	}
}

// The same with two processes (this test binary run as a helper: mcpx auth
// token in each): the lock is one between processes.
func TestConcurrentRefreshOnceProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	as := newRotatingAS(t, true)
	dir := t.TempDir()
	storeExpiring(t, dir, as)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	start := func() (*exec.Cmd, *strings.Builder, io.ReadCloser) {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRefreshHelper$")
		cmd.Env = append(os.Environ(), "OAUTHFLOW_REFRESH_HELPER="+dir, "OAUTHFLOW_REFRESH_URL="+as.URL+"/mcp")
		out := &strings.Builder{}
		cmd.Stdout = out
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, out, stderr
	}
	cmd1, out1, err1 := start()
	go io.Copy(io.Discard, err1)
	select {
	case <-as.arrived:
	case <-ctx.Done():
		t.Fatal("the first run sent no refresh request")
	}
	cmd2, out2, err2 := start()
	waiting := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(err2)
		seen := false
		for sc.Scan() {
			if !seen && strings.Contains(sc.Text(), waitingNote) {
				seen = true
				close(waiting)
			}
		}
	}()
	select {
	case <-waiting:
	case <-as.arrived:
		t.Error("the second run sent a refresh request while the first one's was under way")
	case <-ctx.Done():
		t.Fatal("the second run neither waited nor refreshed")
	}
	close(as.hold)
	for i, c := range []struct {
		cmd *exec.Cmd
		out *strings.Builder
	}{{cmd1, out1}, {cmd2, out2}} {
		err := c.cmd.Wait()
		if got := strings.TrimSpace(c.out.String()); err != nil || !strings.Contains(got, "token at-1") {
			t.Errorf("run %d: %v; output %q, want token at-1", i+1, err, got)
		}
	}
	if n, reused := as.refreshes.Load(), as.reused.Load(); n != 1 || reused != 0 {
		t.Errorf("%d refresh requests (%d with a reused refresh token), want 1", n, reused)
	}
	checkStored(t, dir, as, "at-1", "rt-1")
}

// TestRefreshHelper is a run of TestConcurrentRefreshOnceProcesses: it
// prints the token on stdout and its narration on stderr.
func TestRefreshHelper(t *testing.T) {
	dir := os.Getenv("OAUTHFLOW_REFRESH_HELPER")
	if dir == "" {
		t.Skip("a helper of TestConcurrentRefreshOnceProcesses")
	}
	tok, err := refreshRun(t.Context(), dir, os.Getenv("OAUTHFLOW_REFRESH_URL"), func(s string) { fmt.Fprintln(os.Stderr, s) })
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("token %s\n", tok)
}

// A run that finds the lock of the stored token held longer than it may
// wait fails with one line naming the file, and sends no refresh.
func TestRefreshLockHeld(t *testing.T) {
	as := newRotatingAS(t, false)
	dir := t.TempDir()
	storeExpiring(t, dir, as)
	unlock, err := NewStore(dir).LockToken(t.Context(), as.URL+"/mcp", as.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	defer func(w time.Duration) { storeLockWait = w }(storeLockWait)
	storeLockWait = 200 * time.Millisecond
	_, err = refreshRun(t.Context(), dir, as.URL+"/mcp", func(string) {})
	file := NewStore(dir).tokenFile(as.URL+"/mcp", as.URL)
	if err == nil || !strings.Contains(err.Error(), file+".lock") || strings.Contains(err.Error(), "\n") ||
		!errors.Is(err, ErrStoreLocked) || !errors.Is(err, ErrAuthorization) {
		t.Errorf("err = %v; want ErrStoreLocked naming %s.lock, on one line", err, file)
	}
	if n := as.refreshes.Load(); n != 0 {
		t.Errorf("%d refresh requests, want none", n)
	}

	// The command's --timeout ends the wait first: the error says what
	// was waited for, with the context's error (the exit code).
	storeLockWait = time.Minute
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = refreshRun(ctx, dir, as.URL+"/mcp", func(string) {})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), file+".lock") {
		t.Errorf("err = %v; want the wait for %s.lock, with context.DeadlineExceeded", err, file)
	}
}

// Runs storing the tokens of different servers at once lose none: each
// token is a file of its own.
func TestConcurrentStoresLoseNothing(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := NewStore(dir) // a run of its own
			for j := range 5 {
				rec := &TokenRecord{Resource: fmt.Sprintf("https://mcp%d.example/mcp", i), Issuer: "https://as.example",
					AccessToken: fmt.Sprintf("at-%d-%d", i, j), Updated: time.Now()}
				if err := s.SaveToken(t.Context(), rec); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	recs, err := NewStore(dir).Tokens()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range recs {
		got[r.Resource] = r.AccessToken
	}
	for i := range n {
		if res := fmt.Sprintf("https://mcp%d.example/mcp", i); got[res] != fmt.Sprintf("at-%d-4", i) {
			t.Errorf("%s: stored %q, want at-%d-4", res, got[res], i)
		}
	}
	if len(recs) != n {
		t.Errorf("%d tokens stored, want %d", len(recs), n)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "token-") || !strings.HasSuffix(e.Name(), ".json") {
			if removeLockFiles || !strings.HasSuffix(e.Name(), ".lock") {
				t.Errorf("left in the store: %s", e.Name())
			}
		}
	}
}

// A token removed from the store (mcpx auth logout) while a run uses it is
// refreshed for that run only, and not stored again: before, the refresh
// put back the token the person had just removed.
func TestRefreshAfterLogoutNotStored(t *testing.T) {
	as := newRotatingAS(t, false)
	dir := t.TempDir()
	storeExpiring(t, dir, as)
	now := time.Now().Add(-time.Hour) // the stored token expires in an hour
	var notes strings.Builder
	az, err := New(Config{ServerURL: as.URL + "/mcp", Store: NewStore(dir), StoredOnly: true, Now: func() time.Time { return now },
		Observer: func(e transport.Event) { notes.WriteString(e.Text + "\n") }})
	if err != nil {
		t.Fatal(err)
	}
	if tok, _, err := az.Token(t.Context()); err != nil || tok != "at-0" {
		t.Fatalf("token %q, %v", tok, err)
	}
	rec, _ := NewStore(dir).Token(as.URL+"/mcp", as.URL)
	if err := NewStore(dir).DeleteToken(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if tok, _, err := az.Token(t.Context()); err != nil || tok != "at-1" {
		t.Fatalf("token %q, %v; want the refreshed at-1", tok, err)
	}
	if recs, err := NewStore(dir).Tokens(); err != nil || len(recs) != 0 {
		t.Errorf("stored after the logout: %d token(s), %v", len(recs), err)
	}
	if !strings.Contains(notes.String(), "without storing it again") {
		t.Errorf("notes:\n%s", notes.String())
	}
}
