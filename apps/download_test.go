package apps

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// A name a view suggests names a file in the directory it is saved in,
// visible, portable, and nothing else.
func TestSanitizeFileName(t *testing.T) {
	long := strings.Repeat("é", 150) + ".json" // 300 bytes of stem
	for _, tc := range []struct{ in, want string }{
		{"export.json", "export.json"},
		{"../../x", "_.._x"},
		{"a/b", "a_b"},
		{`a\b`, "a_b"},
		{"..", "download"},
		{".", "download"},
		{"", "download"},
		{".bashrc", "bashrc"},
		{"  .hidden ", "hidden"},
		{"report. ", "report"},
		{"a\x00b\nc\x1bd\x7fe\u0085f", "a_b_c_d_e_f"},
		{"invoice\u202egpj.exe", "invoice_gpj.exe"},
		{"zero\u200bwidth", "zero_width"},
		{`w<i>n:d"o|w?s*`, "w_i_n_d_o_w_s_"},
		{"-rf", "_rf"},
		{"NUL", "_NUL"},
		{"con.txt", "_con.txt"},
		{"com1.log", "_com1.log"},
		{"LPT²", "_LPT²"},
		{"console.log", "console.log"},
		{"bad\xffutf8", "bad_utf8"},
		{"résumé 2026.pdf", "résumé 2026.pdf"},
	} {
		if got := SanitizeFileName(tc.in); got != tc.want {
			t.Errorf("SanitizeFileName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	got := SanitizeFileName(long)
	if len(got) > maxFileName || !strings.HasSuffix(got, ".json") || !strings.HasPrefix(got, "éé") || !utf8Valid(got) {
		t.Errorf("a 305-byte name became %q (%d bytes)", got, len(got))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// The name is the last segment of the resource's uri (draft spec:
// "derive the filename from the last segment of resource.uri"), an
// escaped slash staying in it, sanitised.
func TestFileNameFromURI(t *testing.T) {
	for in, want := range map[string]string{
		"file:///export.json":                  "export.json",
		"file:///dir/sub/chart.svg?x=1#frag":   "chart.svg",
		"file:///../../x":                      "x",
		"file:///a%2Fb":                        "a_b",
		"file:///..%2F..%2Fetc%2Fpasswd":       "_.._etc_passwd",
		"file:///dir/":                         "download",
		"ui://server/report%20Q4.csv":          "report Q4.csv",
		"urn:x:y":                              "x_y",
		"export.json":                          "export.json",
		"file:///bad%zzname":                   "bad%zzname",
		"file:///%2e%2e":                       "download",
		"file:///C:%5CUsers%5Cme%5Cevil.lnk":   "C__Users_me_evil.lnk",
		"https://example.com/a/b/c.tar.gz?q#f": "c.tar.gz",
	} {
		if got := fileNameFromURI(in); got != want {
			t.Errorf("fileNameFromURI(%q) = %q, want %q", in, got, want)
		}
	}
}

// A download is written whole under its name, never over a file: a
// taken name gets " (1)", " (2)", ...; past " (99)" it fails. No
// temporary file is left, whatever happens.
func TestSaveDownload(t *testing.T) {
	dir := t.TempDir()
	data := []byte("{\"a\":1}\n")
	p, err := SaveDownload(dir, Download{Name: "export.json", Data: data})
	if err != nil || p != filepath.Join(dir, "export.json") {
		t.Fatalf("SaveDownload: %q, %v", p, err)
	}
	if got, _ := os.ReadFile(p); string(got) != string(data) {
		t.Errorf("content %q", got)
	}
	// Taken: a suffix, the first file intact.
	p2, err := SaveDownload(dir, Download{Name: "export.json", Data: []byte("second")})
	if err != nil || p2 != filepath.Join(dir, "export (1).json") {
		t.Fatalf("second SaveDownload: %q, %v", p2, err)
	}
	if got, _ := os.ReadFile(p); string(got) != string(data) {
		t.Errorf("the first file became %q", got)
	}
	if got, _ := os.ReadFile(p2); string(got) != "second" {
		t.Errorf("the second file is %q", got)
	}
	// A name that is not sanitised (a caller's mistake) is sanitised
	// again: nothing is written outside dir.
	p3, err := SaveDownload(dir, Download{Name: "../escape", Data: []byte("x")})
	if err != nil || filepath.Dir(p3) != dir {
		t.Fatalf("SaveDownload(../escape): %q, %v", p3, err)
	}
	// Every name taken.
	for n := 1; n <= maxNameSuffix; n++ {
		if err := os.WriteFile(filepath.Join(dir, withSuffix("full.txt", n)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "full.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := SaveDownload(dir, Download{Name: "full.txt", Data: []byte("new")}); !errors.Is(err, ErrNameTaken) {
		t.Errorf("every name taken: %v, want ErrNameTaken", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "full.txt")); string(got) != "keep" {
		t.Errorf("full.txt became %q", got)
	}
	// A directory that is not there: an error, nothing written.
	if _, err := SaveDownload(filepath.Join(dir, "missing"), Download{Name: "a", Data: []byte("x")}); err == nil {
		t.Error("SaveDownload into a missing directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".part") || strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if runtime.GOOS != "windows" && os.Getuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		if _, err := SaveDownload(ro, Download{Name: "a", Data: []byte("x")}); err == nil {
			t.Error("SaveDownload into a read-only directory succeeded")
		}
	}
}

// On a file system without hard links, the name is taken exclusively
// and the content moved onto it: still never over a file.
func TestSaveDownloadWithoutLinks(t *testing.T) {
	dir := t.TempDir()
	noLinks := func(string, string) error { return &os.LinkError{Op: "link", Err: errors.ErrUnsupported} }
	for i, want := range []string{"a.txt", "a (1).txt", "a (2).txt"} {
		p, err := saveDownload(dir, Download{Name: "a.txt", Data: []byte(fmt.Sprint(i))}, noLinks)
		if err != nil || p != filepath.Join(dir, want) {
			t.Fatalf("save %d: %q, %v; want %s", i, p, err, want)
		}
		if got, _ := os.ReadFile(p); string(got) != fmt.Sprint(i) {
			t.Errorf("%s holds %q", p, got)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("%d files in the directory, want 3", len(entries))
	}
}

// Downloads saved at once under the same name each get a name of their
// own: none is lost or replaced.
func TestSaveDownloadConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	paths := make([]string, 8)
	for i := range paths {
		wg.Go(func() {
			p, err := SaveDownload(dir, Download{Name: "same.txt", Data: []byte(fmt.Sprint(i))})
			if err != nil {
				t.Error(err)
			}
			paths[i] = p
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, p := range paths {
		if got, _ := os.ReadFile(p); string(got) != fmt.Sprint(i) || seen[p] {
			t.Errorf("download %d: %s holds %q", i, p, got)
		}
		seen[p] = true
	}
}

// downloadRecorder is a Handlers.DownloadFile that keeps what it was
// given and answers err.
type downloadRecorder struct {
	mu    sync.Mutex
	got   [][]Download
	err   error
	asked chan struct{}
}

func (d *downloadRecorder) handler(ctx context.Context, v ViewInfo, files []Download) error {
	d.mu.Lock()
	d.got = append(d.got, files)
	err := d.err
	d.mu.Unlock()
	select {
	case d.asked <- struct{}{}:
	default:
	}
	return err
}

func (d *downloadRecorder) calls() [][]Download {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.got)
}

func downloadRequest(id int, contents string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ui/download-file","params":{"contents":%s}}`, id, contents)
}

// ui/download-file (draft spec): the host declares downloadFile, hands
// the checked, decoded files to the program (which asks the person) and
// answers as the draft says; what it refuses by itself never reaches the
// person.
func TestDownloadFile(t *testing.T) {
	rec := newRecorder()
	dl := &downloadRecorder{asked: make(chan struct{}, 16)}
	o := rec.options(newFakeBackend(minimalHTML))
	o.Handlers.DownloadFile = dl.handler
	o.MaxDownloadSize = 1000
	h := newTestHost(t, o)
	v := openShow(t, h, `{}`)
	p := connectPage(t, h)
	p.next("view")
	id := v.Info().ID
	init := p.handshake(id)
	p.rpc() // tool-input
	if caps, _ := init["hostCapabilities"].(map[string]any); caps["downloadFile"] == nil {
		t.Errorf("hostCapabilities %v lack downloadFile", caps)
	}

	blob := []byte{0, 1, 2, 0xff, 0xfe, '\n', 'x'}
	p.post(id, downloadRequest(2, `[
		{"type":"resource","resource":{"uri":"file:///export.json","mimeType":"application/json","text":"{ \"é\": 1 }\n"}},
		{"type":"resource","resource":{"uri":"file:///..%2F..%2Fimage.png","mimeType":"image/png","blob":"`+base64.StdEncoding.EncodeToString(blob)+`"}}]`))
	if m := p.rpc(); m["id"] != float64(2) || m["result"] == nil || len(m["result"].(map[string]any)) != 0 {
		t.Fatalf("accepted download: %v", m)
	}
	calls := dl.calls()
	if len(calls) != 1 || len(calls[0]) != 2 {
		t.Fatalf("handler given %v", calls)
	}
	if f := calls[0][0]; f.Name != "export.json" || f.MIMEType != "application/json" || string(f.Data) != "{ \"é\": 1 }\n" || f.URI != "file:///export.json" {
		t.Errorf("text file %+v", f)
	}
	if f := calls[0][1]; f.Name != "_.._image.png" || string(f.Data) != string(blob) {
		t.Errorf("blob file %+v", f)
	}

	// Denied by the person.
	dl.mu.Lock()
	dl.err = fmt.Errorf("%w: said no", ErrDenied)
	dl.mu.Unlock()
	p.post(id, downloadRequest(3, `[{"type":"resource","resource":{"uri":"file:///a.txt","text":"a"}}]`))
	if e, _ := p.rpc()["error"].(map[string]any); e == nil || e["code"] != float64(CodeRefused) || e["message"] != "Download denied by user" {
		t.Fatalf("denied download: %v", e)
	}
	// Failed to save: the view is not told where or why.
	dl.mu.Lock()
	dl.err = errors.New("saving /home/me/secret/a.txt: disk full")
	dl.mu.Unlock()
	p.post(id, downloadRequest(4, `[{"type":"resource","resource":{"uri":"file:///a.txt","text":"a"}}]`))
	if e, _ := p.rpc()["error"].(map[string]any); e == nil || e["code"] != float64(CodeRefused) || strings.Contains(fmt.Sprint(e["message"]), "/home") ||
		!strings.HasPrefix(fmt.Sprint(e["message"]), "Download failed") {
		t.Fatalf("failed download: %v", e)
	}
	asked := len(dl.calls())

	// Refused before the person is asked.
	for _, tc := range []struct {
		contents, code, message string
	}{
		{`[{"type":"resource_link","uri":"https://example.com/q4.pdf","name":"Q4","mimeType":"application/pdf"}]`, "-32000", "Policy violation: this host does not fetch resource links"},
		{`[{"type":"resource","resource":{"uri":"file:///big.txt","text":"` + strings.Repeat("a", 1001) + `"}}]`, "-32000", "Policy violation: the download is larger than 1000 bytes"},
		{`[{"type":"resource","resource":{"uri":"file:///a","text":"` + strings.Repeat("a", 600) + `"}},{"type":"resource","resource":{"uri":"file:///b","blob":"` + base64.StdEncoding.EncodeToString(make([]byte, 600)) + `"}}]`, "-32000", "Policy violation: the download is larger than 1000 bytes"},
		{`[{"type":"resource","resource":{"uri":"file:///big.bin","blob":"` + base64.StdEncoding.EncodeToString(make([]byte, 1001)) + `"}}]`, "-32000", "Policy violation: the download is larger than 1000 bytes"},
		{`[` + strings.TrimSuffix(strings.Repeat(`{"type":"resource","resource":{"uri":"file:///a","text":"a"}},`, 17), ",") + `]`, "-32000", "Policy violation: more than 16 files"},
		{`[]`, "-32602", "Invalid content"},
		{`"x"`, "-32602", "Invalid content"},
		{`[{"type":"text","text":"hi"}]`, "-32602", "Invalid content: contents[0] is of type \"text\""},
		{`[{"type":"resource","resource":{"uri":"file:///a"}}]`, "-32602", "Invalid content: contents[0].resource needs a uri and either text or blob"},
		{`[{"type":"resource","resource":{"uri":"file:///a","text":"a","blob":"YQ=="}}]`, "-32602", "Invalid content"},
		{`[{"type":"resource","resource":{"text":"a"}}]`, "-32602", "Invalid content"},
		{`[{"type":"resource","resource":{"uri":"file:///a","blob":"not base64!"}}]`, "-32602", "Invalid content: contents[0].resource.blob is not base64"},
	} {
		p.post(id, downloadRequest(5, tc.contents))
		e, _ := p.rpc()["error"].(map[string]any)
		if e == nil || fmt.Sprint(e["code"]) != tc.code || !strings.HasPrefix(fmt.Sprint(e["message"]), tc.message) {
			t.Errorf("%.80s: %v, want %s %q", tc.contents, e, tc.code, tc.message)
		}
	}
	if n := len(dl.calls()); n != asked {
		t.Errorf("the person was asked %d more times about refused downloads", n-asked)
	}
	rec.waitFor(t, "the resource link refused", func(r *recorder) bool {
		return r.hasProblem(ErrRefused, "ui/download-file: Policy violation: this host does not fetch resource links")
	})
}

// Without Handlers.DownloadFile the host does not declare downloadFile
// and refuses every download.
func TestNoDownloadHandler(t *testing.T) {
	rec := newRecorder()
	h := newTestHost(t, rec.options(newFakeBackend(minimalHTML)))
	v := openShow(t, h, `{}`)
	p := connectPage(t, h)
	p.next("view")
	id := v.Info().ID
	if caps, _ := p.handshake(id)["hostCapabilities"].(map[string]any); caps["downloadFile"] != nil {
		t.Errorf("hostCapabilities %v declare downloadFile", caps)
	}
	p.rpc() // tool-input
	p.post(id, downloadRequest(2, `[{"type":"resource","resource":{"uri":"file:///a.txt","text":"a"}}]`))
	if e, _ := p.rpc()["error"].(map[string]any); e == nil || e["code"] != float64(CodeRefused) || e["message"] != "Policy violation: this host does not download files" {
		t.Fatalf("download without a handler: %v", e)
	}
}

// One download question at a time per view, as for links.
func TestOneDownloadQuestionAtATime(t *testing.T) {
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	asked := make(chan []Download, 4)
	answer := make(chan error)
	o.Handlers.DownloadFile = func(ctx context.Context, v ViewInfo, files []Download) error {
		asked <- files
		select {
		case err := <-answer:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	h := newTestHost(t, o)
	_, p, id := handshaken(t, h)
	one := `[{"type":"resource","resource":{"uri":"file:///a.txt","text":"a"}}]`
	wait := func() {
		t.Helper()
		select {
		case <-asked:
		case <-time.After(testwait.Bound):
			t.Fatal("the person was not asked")
		}
	}
	p.post(id, downloadRequest(1, one))
	wait()
	p.post(id, downloadRequest(2, one))
	if m := p.rpc(); m["id"] != float64(2) || m["error"] == nil {
		t.Fatalf("a download while another is asked about: %v", m)
	}
	answer <- nil
	if m := p.rpc(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("the download asked about: %v", m)
	}
	p.post(id, downloadRequest(3, one))
	wait()
	answer <- ErrDenied
	if m := p.rpc(); m["id"] != float64(3) || m["error"] == nil {
		t.Fatalf("the denied download: %v", m)
	}
	rec.waitFor(t, "the refused download reported", func(r *recorder) bool {
		return r.hasProblem(ErrRefused, "still asked about another download")
	})
}
