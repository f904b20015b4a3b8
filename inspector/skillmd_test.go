package inspector

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCheckFrontmatter(t *testing.T) {
	const entry = `{"name":"refunds","description":"Process refunds","license":"Apache-2.0","metadata":{"version":"2.1","tier":2,"tags":["a","b"]}}`
	const same = "name: refunds\ndescription: Process refunds\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1\"\n  tier: 2.0\n  tags: [a, b]\n"
	cases := []struct {
		name, md string
		keys     []string // nil: equal, or Why below
		why      string
	}{
		{name: "equal", md: "---\n" + same + "---\n\n# Refunds\n"},
		{name: "CRLF, BOM, dots end, trailing space", md: "\ufeff--- \r\n" + strings.ReplaceAll(same, "\n", "\r\n") + "...\r\nbody"},
		{name: "no body, no final newline", md: "---\n" + same + "---"},
		{name: "a value differs", md: "---\n" + strings.Replace(same, "Process refunds", "Process refunds now", 1) + "---\n", keys: []string{"description"}},
		{name: "nested differs, one missing, one more", md: "---\nname: refunds\ndescription: Process refunds\nmetadata:\n  version: \"2.1\"\n  tier: 3\n  tags: [a, b]\nallowed-tools: Bash\n---\n",
			keys: []string{"allowed-tools", "license", "metadata"}},
		{name: "number is not string", md: "---\n" + strings.Replace(same, `"2.1"`, "2.1", 1) + "---\n", keys: []string{"metadata"}},
		{name: "no frontmatter", md: "# Refunds\n\nname: refunds\n", why: "does not begin with YAML frontmatter"},
		{name: "not closed", md: "---\n" + same, why: "no closing --- line"},
		{name: "invalid YAML", md: "---\nname: [refunds\n---\n", why: "not valid YAML"},
		{name: "duplicate key", md: "---\nname: a\nname: b\n---\n", why: "not valid YAML"},
		{name: "empty", md: "---\n---\n", why: "not a YAML mapping"},
		{name: "a list", md: "---\n- a\n---\n", why: "not a YAML mapping"},
		{name: "NaN", md: "---\nname: refunds\nx: .nan\n---\n", why: "a value JSON cannot"},
		{name: "non-string nested key", md: "---\nname: refunds\nx: {1: a}\n---\n", why: "a value JSON cannot"},
		{name: "too long", md: "---\nname: refunds\ndescription: " + strings.Repeat("x", MaxFrontmatterBytes) + "\n---\n", why: "longer than"},
	}
	sk := &Skill{URI: "skill://acme/refunds/SKILL.md", Frontmatter: []byte(entry)}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := sk.CheckFrontmatter([]byte(c.md))
			if c.keys == nil && c.why == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *SkillFrontmatterError
			if !errors.As(err, &fe) || fe.URI != sk.URI {
				t.Fatalf("err = %v, want a *SkillFrontmatterError", err)
			}
			if c.keys != nil && !slices.Equal(fe.Keys, c.keys) {
				t.Fatalf("Keys = %q, want %q (%v)", fe.Keys, c.keys, err)
			}
			if c.why != "" && (fe.Keys != nil || !strings.Contains(err.Error(), c.why)) {
				t.Fatalf("err = %v, want one saying %q", err, c.why)
			}
		})
	}
	t.Run("timestamps and bools as JSON has them", func(t *testing.T) {
		sk := &Skill{URI: sk.URI, Frontmatter: []byte(`{"name":"a","updated":"2024-01-02","beta":true,"n":null}`)}
		if err := sk.CheckFrontmatter([]byte("---\nname: a\nupdated: 2024-01-02\nbeta: true\nn: ~\n---\n")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("entry without frontmatter", func(t *testing.T) {
		err := (&Skill{URI: sk.URI, Frontmatter: []byte(`"x"`)}).CheckFrontmatter([]byte("---\nname: a\n---\n"))
		if err == nil || !strings.Contains(err.Error(), "no frontmatter object") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("message names the keys", func(t *testing.T) {
		err := sk.CheckFrontmatter([]byte("---\nname: other\ndescription: Process refunds\nlicense: MIT\nmetadata: {version: \"2.1\", tier: 2, tags: [a, b]}\n---\n"))
		want := "skill://acme/refunds/SKILL.md: its frontmatter differs from the skill's entry's in license, name: "
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("err = %v, want it to begin %q", err, want)
		}
	})
}
