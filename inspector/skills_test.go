package inspector

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

const skillsCaps = `{"resources":{},"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":true}}}`

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// await returns what fn returns in a goroutine, failing after wait.
func await[T any](t *testing.T, fn func() T) <-chan T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- fn() }()
	return ch
}

func got[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatal("the call did not return")
	}
	panic("unreachable")
}

type listOut struct {
	l   *ListResult
	err error
}

// TestSkillsRefusedUndeclared: skills/list, skills/get and
// resources/directory/read are not sent to a server that did not declare
// the extension (or directoryRead), and the error names what it declares.
func TestSkillsRefusedUndeclared(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			ctx := context.Background()
			s, srv, _ := openEra(t, era, `{"resources":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`, Options{})
			_, err := s.Skills(ctx, nil)
			var nd *ExtensionNotDeclaredError
			if !errors.As(err, &nd) || nd.Method != "skills/list" || nd.Setting != "" {
				t.Fatalf("Skills: %v", err)
			}
			if !strings.Contains(err.Error(), "declares only io.modelcontextprotocol/tasks") {
				t.Errorf("error %q does not name what the server declares", err)
			}
			if _, err := s.Skill(ctx, "skill://a/SKILL.md"); !errors.As(err, &nd) || nd.Method != "skills/get" {
				t.Fatalf("Skill: %v", err)
			}
			if _, err := s.ReadDirectory(ctx, "skill://a", nil); !errors.As(err, &nd) {
				t.Fatalf("ReadDirectory: %v", err)
			}
			srv.quietUntil(mark(t, s))
		})
	}
	t.Run("no directoryRead", func(t *testing.T) {
		s, srv, _ := openEra(t, "legacy", `{"resources":{},"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":false}}}`, Options{})
		_, err := s.ReadDirectory(context.Background(), "skill://a", nil)
		var nd *ExtensionNotDeclaredError
		if !errors.As(err, &nd) || nd.Setting != "directoryRead" || nd.Method != "resources/directory/read" {
			t.Fatalf("ReadDirectory: %v", err)
		}
		srv.quietUntil(mark(t, s))
	})
	t.Run("no extensions", func(t *testing.T) {
		s, srv, _ := openEra(t, "legacy", `{"tools":{}}`, Options{})
		_, err := s.Skills(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), "declares no extensions") {
			t.Fatalf("Skills: %v", err)
		}
		srv.quietUntil(mark(t, s))
	})
}

// TestSkillsListsEveryPage: Skills follows nextCursor in both eras.
func TestSkillsListsEveryPage(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			s, srv, _ := openEra(t, era, skillsCaps, Options{})
			ch := await(t, func() listOut { l, err := s.Skills(context.Background(), nil); return listOut{l, err} })
			srv.reply(srv.nextRequest("skills/list"), `{"skills":[{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"A"},"resources":"dynamic"}],"nextCursor":"p2"}`)
			req := srv.nextRequest("skills/list")
			var p struct{ Cursor string }
			_ = json.Unmarshal(req.Params, &p)
			if p.Cursor != "p2" {
				t.Fatalf("second page asked with %s", req.Params)
			}
			srv.reply(req, `{"skills":[{"uri":"skill://x/b/SKILL.md","frontmatter":{"name":"b","description":"B"},"resources":[]}]}`)
			r := got(t, ch)
			if r.err != nil || len(r.l.Items) != 2 {
				t.Fatalf("Skills: %v, %v", r.l, r.err)
			}
			sk, err := ParseSkill(r.l.Items[1])
			if err != nil || sk.Name != "b" || sk.Dynamic || sk.URI != "skill://x/b/SKILL.md" {
				t.Fatalf("second skill: %+v, %v", sk, err)
			}
		})
	}
}

// TestReadDirectoryPages: every page of resources/directory/read names
// the directory, and the later ones the cursor.
func TestReadDirectoryPages(t *testing.T) {
	s, srv, _ := openEra(t, "modern", skillsCaps, Options{})
	ch := await(t, func() listOut {
		l, err := s.ReadDirectory(context.Background(), "skill://a/templates", nil)
		return listOut{l, err}
	})
	req := srv.nextRequest("resources/directory/read")
	var p struct{ URI, Cursor string }
	_ = json.Unmarshal(req.Params, &p)
	if p.URI != "skill://a/templates" || p.Cursor != "" {
		t.Fatalf("first page asked with %s", req.Params)
	}
	srv.reply(req, `{"resultType":"complete","resources":[{"uri":"skill://a/templates/x.md","name":"x.md"}],"nextCursor":"2"}`)
	req = srv.nextRequest("resources/directory/read")
	p = struct{ URI, Cursor string }{}
	_ = json.Unmarshal(req.Params, &p)
	if p.URI != "skill://a/templates" || p.Cursor != "2" {
		t.Fatalf("second page asked with %s", req.Params)
	}
	srv.reply(req, `{"resultType":"complete","resources":[{"uri":"skill://a/templates/sub","name":"sub","mimeType":"inode/directory"}]}`)
	r := got(t, ch)
	if r.err != nil || len(r.l.Items) != 2 {
		t.Fatalf("ReadDirectory: %v, %v", r.l, r.err)
	}
	if !strings.Contains(string(r.l.JSON()), `"skill://a/templates/sub"`) || strings.Contains(string(r.l.JSON()), "nextCursor") {
		t.Errorf("merged result %s", r.l.JSON())
	}
}

type skillOut struct {
	r   *SkillResult
	err error
}

func TestSkillGet(t *testing.T) {
	s, srv, _ := openEra(t, "legacy", skillsCaps, Options{})
	get := func(result string) skillOut {
		t.Helper()
		ch := await(t, func() skillOut {
			r, err := s.Skill(context.Background(), "skill://acme/refunds/SKILL.md")
			return skillOut{r, err}
		})
		req := srv.nextRequest("skills/get")
		if !strings.Contains(string(req.Params), `"uri":"skill://acme/refunds/SKILL.md"`) {
			t.Fatalf("skills/get sent %s", req.Params)
		}
		srv.reply(req, result)
		return got(t, ch)
	}
	d := digestOf([]byte("x"))
	r := get(`{"skill":{"uri":"skill://acme/refunds/SKILL.md","frontmatter":{"name":"refunds","description":"R","license":"MIT"},"resources":[{"uri":"skill://acme/refunds/SKILL.md","digest":"` + d + `","size":1}]}}`)
	if r.err != nil || r.r.Skill.Name != "refunds" || len(r.r.Skill.Files) != 1 || r.r.Skill.Files[0].Size != 1 {
		t.Fatalf("Skill: %+v, %v", r.r, r.err)
	}
	if p := r.r.Skill.Problems(); len(p) != 0 {
		t.Errorf("problems of a good entry: %q", p)
	}
	for _, bad := range []string{
		`{"skill":{"uri":"skill://acme/refunds/SKILL.md","frontmatter":{"name":"refunds","description":"R"}}}`,
		`{"skill":{"uri":"skill://acme/refunds/SKILL.md","frontmatter":{"name":"refunds","description":"R"},"resources":"static"}}`,
		`{"skill":{"uri":"skill://acme/refunds/SKILL.md","frontmatter":{"name":"refunds","description":"R"},"resources":{}}}`,
		`{"nothing":1}`,
	} {
		if r := get(bad); r.err == nil || r.r == nil || r.r.Raw == nil {
			t.Errorf("%s: no error (%+v)", bad, r.r)
		}
	}
}

func TestSkillProblems(t *testing.T) {
	d := digestOf([]byte("x"))
	for _, tt := range []struct{ entry, want string }{
		{`{"uri":"skill://a/b/SKILL.md","frontmatter":{"name":"c","description":"d"},"resources":"dynamic"}`, `last segment "b" is not its name "c"`},
		{`{"uri":"skill://b/README.md","frontmatter":{"name":"b","description":"d"},"resources":"dynamic"}`, "does not end in /SKILL.md"},
		{`{"uri":"skill://b/SKILL.md","frontmatter":{"name":"b"},"resources":"dynamic"}`, "no string description"},
		{`{"uri":"skill://b/SKILL.md","frontmatter":{"name":"b","description":"d"},"resources":[]}`, "do not list its SKILL.md"},
		{`{"uri":"skill://b/SKILL.md","frontmatter":{"name":"b","description":"d"},"resources":[{"uri":"skill://b/SKILL.md","digest":"sha256:ABC","size":1}]}`, "is not sha256:"},
		{`{"uri":"skill://b/SKILL.md","frontmatter":{"name":"b","description":"d"},"resources":[{"uri":"skill://b/SKILL.md","digest":"` + d + `","size":1},{"uri":"skill://c/x","digest":"` + d + `","size":1}]}`, "not within the skill's directory"},
		{`{"uri":"skill://b/SKILL.md","frontmatter":{"name":"b","description":"d"},"resources":[{"uri":"skill://b/SKILL.md","digest":"` + d + `","size":16777217}]}`, "more than the 16777216"},
	} {
		sk, err := ParseSkill(json.RawMessage(tt.entry))
		if err != nil {
			t.Fatalf("%s: %v", tt.entry, err)
		}
		if p := strings.Join(sk.Problems(), "; "); !strings.Contains(p, tt.want) {
			t.Errorf("%s: problems %q, want %q", tt.entry, p, tt.want)
		}
	}
}

type bytesOut struct {
	b   []byte
	err error
}

// TestReadSkillFile: a file's content is returned only when its size and
// digest are the entry's; text and blobs alike; an oversized content is
// cut off, not held.
func TestReadSkillFile(t *testing.T) {
	s, srv, w := openEra(t, "legacy", skillsCaps, Options{})
	text := []byte("# Hi\n\u00e9\n")
	blob := []byte{0, 1, 0xfe, 0xff}
	read := func(f SkillFile, content string) bytesOut {
		t.Helper()
		ch := await(t, func() bytesOut { b, err := s.ReadSkillFile(context.Background(), f); return bytesOut{b, err} })
		srv.reply(srv.nextRequest("resources/read"), `{"contents":[`+content+`]}`)
		return got(t, ch)
	}
	tf := SkillFile{URI: "skill://a/SKILL.md", Digest: digestOf(text), Size: int64(len(text))}
	tc, _ := json.Marshal(map[string]string{"uri": tf.URI, "text": string(text)})
	if r := read(tf, string(tc)); r.err != nil || string(r.b) != string(text) {
		t.Fatalf("text: %q, %v", r.b, r.err)
	}
	bf := SkillFile{URI: "skill://a/x.bin", Digest: digestOf(blob), Size: 4}
	bc := fmt.Sprintf(`{"uri":%q,"blob":%q}`, bf.URI, base64.StdEncoding.EncodeToString(blob))
	if r := read(bf, bc); r.err != nil || string(r.b) != string(blob) {
		t.Fatalf("blob: %q, %v", r.b, r.err)
	}
	var mm *SkillMismatchError
	wrong := tf
	wrong.Digest = digestOf([]byte("other"))
	if r := read(wrong, string(tc)); !errors.As(r.err, &mm) || r.b != nil || mm.Got.Digest != tf.Digest {
		t.Fatalf("digest mismatch: %q, %v", r.b, r.err)
	}
	short := tf
	short.Size = 2
	if r := read(short, string(tc)); !errors.As(r.err, &mm) || mm.Got.Size != 3 || mm.Got.Digest != "" || !strings.Contains(r.err.Error(), "read 3 or more bytes") {
		t.Fatalf("oversized: %v", r.err)
	}
	long := tf
	long.Size = 100
	if r := read(long, string(tc)); !errors.As(r.err, &mm) || mm.Got.Size != int64(len(text)) {
		t.Fatalf("undersized: %v", r.err)
	}
	if _, err := s.ReadSkillFile(context.Background(), SkillFile{URI: "skill://a/big", Size: MaxSkillBytes + 1}); err == nil {
		t.Fatal("a file beyond the limit was read")
	}
	srv.quietUntil(mark(t, s))
	w.none()
}

func TestSkillFilePath(t *testing.T) {
	const sk = "skill://acme/billing/refunds/SKILL.md"
	for _, tt := range []struct{ uri, want string }{
		{"skill://acme/billing/refunds/SKILL.md", "SKILL.md"},
		{"skill://acme/billing/refunds/examples/email.md", "examples/email.md"},
		{"skill://acme/billing/refunds/a%20b.md", "a b.md"},
		{"skill://acme/billing/refunds/../../x", ""},
		{"skill://acme/billing/refunds/a/../../x", ""},
		{"skill://acme/billing/refunds/%2e%2e/x", ""},
		{"skill://acme/billing/refunds/a/%2E%2E/%2e%2e/x", ""},
		{"skill://acme/billing/refunds/./x", ""},
		{"skill://acme/billing/refunds//etc/passwd", ""},
		{"skill://acme/billing/refunds/%2fetc/passwd", ""},
		{"skill://acme/billing/refunds/a\\..\\..\\x", ""},
		{"skill://acme/billing/refunds/a%5c..%5cx", ""},
		{"skill://acme/billing/refunds/C:/x", ""},
		{"skill://acme/billing/refunds/x%00", ""},
		{"skill://acme/billing/refunds/x%zz", ""},
		{"skill://acme/billing/refunds/x?y", ""},
		{"skill://acme/billing/other/x", ""},
		{"skill://acme/billing/refundsx/y", ""},
		{"skill://acme/billing/refunds/", ""},
	} {
		got, err := SkillFilePath(sk, tt.uri)
		var unsafe *UnsafeSkillPathError
		switch {
		case tt.want == "" && !errors.As(err, &unsafe):
			t.Errorf("%s: got %q, %v; want refused", tt.uri, got, err)
		case tt.want != "" && (err != nil || got != tt.want):
			t.Errorf("%s: got %q, %v; want %q", tt.uri, got, err, tt.want)
		}
	}
	if _, err := SkillFilePath("skill://a/README.md", "skill://a/x"); err == nil {
		t.Error("a skill URI without /SKILL.md gave a path")
	}
}
