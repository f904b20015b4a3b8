package tui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Skills lists the entries of a skills/list (extension
// io.modelcontextprotocol/skills): name, URI of its SKILL.md, its files
// (a count, or "dynamic"), and description, every text of the server's
// escaped. items are valid JSON, as inspector.Session.Skills returns them.
func (p *Printer) Skills(items []json.RawMessage) {
	if len(items) == 0 {
		p.say(p.st.dim("(no skills listed; a server may serve skills it does not list)"))
		return
	}
	t := &table{width: p.width}
	for _, it := range items {
		sk, err := inspector.ParseSkill(it)
		if sk == nil {
			t.add(styled(EscapeLine(rawjson.Excerpt(it, 60)), p.st.warn), plain(""), styled("(not a skill entry)", p.st.dim))
			continue
		}
		files := styled(skillFilesSummary(sk), p.st.dim)
		if err != nil {
			files = styled("(invalid resources)", p.st.warn)
		}
		t.add(p.nameCell(sk.Name), plain(EscapeName(sk.URI)), files, plain(firstLine(sk.Description)))
	}
	bw := bufio.NewWriterSize(p.w, 64<<10)
	t.write(bw)
	bw.Flush()
}

func skillFilesSummary(sk *inspector.Skill) string {
	if sk.Dynamic {
		return "dynamic"
	}
	var total int64
	for _, f := range sk.Files {
		total += max(f.Size, 0)
	}
	n := len(sk.Files)
	if n == 1 {
		return "1 file, " + HumanSize(total)
	}
	return fmt.Sprintf("%d files, %s", n, HumanSize(total))
}

// Skill shows one skill's entry (skills/get): its URI, its frontmatter
// member by member (values that are not strings as compact JSON), and its
// files with their sizes and digests, each path relative to the skill's
// directory when it is within it.
func (p *Printer) Skill(sk *inspector.Skill) {
	w := p.w
	fmt.Fprintf(w, "%s %s\n", p.st.head("Skill:"), p.st.name(EscapeName(sk.URI)))
	if fm, err := inspector.ParseObject(sk.Frontmatter); err == nil && len(fm.Keys()) > 0 {
		fmt.Fprintln(w, p.st.head("Frontmatter:"))
		t := &table{indent: "  ", width: p.width}
		for _, k := range fm.Keys() {
			v := fm.Get(k)
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(rawjson.Trim(v))
			}
			t.add(styled(EscapeLine(k), p.st.key), plain(EscapeLine(s)))
		}
		t.write(w)
	} else {
		fmt.Fprintln(w, p.st.warn("(no frontmatter object)"))
	}
	if sk.Dynamic {
		p.say(p.st.head("Files:") + " " + p.st.dim("dynamic (the server publishes no digests: nothing to verify)"))
		return
	}
	p.say(p.st.head("Files:") + " " + p.st.dim(skillFilesSummary(sk)))
	t := &table{indent: "  ", width: p.width}
	root := strings.TrimSuffix(sk.URI, "SKILL.md")
	for _, f := range sk.Files {
		name := f.URI
		if rel, ok := strings.CutPrefix(f.URI, root); ok && strings.HasSuffix(root, "/") {
			name = rel
		}
		t.add(plain(EscapeName(name)), plain(HumanSize(max(f.Size, 0))), styled(EscapeLine(f.Digest), p.st.dim))
	}
	t.write(w)
}

// SkillFiles reports the files of a skill that were read and found to
// match its entry, and where they were written (dir; "" when checked
// only).
func (p *Printer) SkillFiles(sk *inspector.Skill, paths []string, dir string) {
	var total int64
	for _, f := range sk.Files {
		total += max(f.Size, 0)
	}
	what := "verified"
	if dir != "" {
		what = "wrote"
	}
	for _, rel := range paths {
		fmt.Fprintf(p.w, "  %s\n", EscapeName(rel))
	}
	where := ""
	if dir != "" {
		where = " to " + EscapeLine(dir)
	}
	p.say(fmt.Sprintf("%s %d %s (%s, size and sha256 digest as the entry says)%s", what, len(paths), pluralWord(len(paths), "file"), HumanSize(total), where))
}

func pluralWord(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}
