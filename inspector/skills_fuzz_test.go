package inspector

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzSkillFilePath checks the one guard between a server's URIs and the
// files skills pull writes: a path it accepts is relative, has no empty,
// "." or ".." segment, no backslash, colon or control character, and,
// joined under a directory, stays in it.
func FuzzSkillFilePath(f *testing.F) {
	for _, s := range []string{"SKILL.md", "a/b.md", "../x", "a/%2e%2E/b", "%2F", "a%5cb", "a//b", "x%00", "C:/x", "a b/c%20d"} {
		f.Add("skill://acme/refunds/SKILL.md", "skill://acme/refunds/"+s)
	}
	f.Fuzz(func(t *testing.T, skill, uri string) {
		rel, err := SkillFilePath(skill, uri)
		if err != nil {
			return
		}
		if rel == "" || strings.HasPrefix(rel, "/") || strings.ContainsAny(rel, "\\:") {
			t.Fatalf("SkillFilePath(%q, %q) = %q", skill, uri, rel)
		}
		for seg := range strings.SplitSeq(rel, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("SkillFilePath(%q, %q) = %q: segment %q", skill, uri, rel, seg)
			}
		}
		for _, r := range rel {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("SkillFilePath(%q, %q) = %q: a control character", skill, uri, rel)
			}
		}
		dir := filepath.FromSlash("/base/dir")
		if p := filepath.Join(dir, filepath.FromSlash(rel)); !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("SkillFilePath(%q, %q) = %q leads out of %s: %s", skill, uri, rel, dir, p)
		}
	})
}

// FuzzFrontmatterBlock checks the hand-written cut of a SKILL.md's
// frontmatter: it never returns more than MaxFrontmatterBytes, and what
// it returns is a part of the input that follows a --- line.
func FuzzFrontmatterBlock(f *testing.F) {
	for _, s := range []string{"---\nname: a\n---\nbody", "\ufeff---\r\na: 1\r\n...\r\n", "---\n---", "---", "--- \nx\n", "# no\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, md []byte) {
		block, err := frontmatterBlock(md)
		if err != nil {
			return
		}
		if len(block) > MaxFrontmatterBytes {
			t.Fatalf("a block of %d bytes", len(block))
		}
		if !bytes.Contains(md, block) || !bytes.HasPrefix(bytes.TrimPrefix(md, []byte("\ufeff")), []byte("---")) {
			t.Fatalf("frontmatterBlock(%q) = %q", md, block)
		}
	})
}
