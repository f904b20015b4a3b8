package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxFrontmatterBytes bounds the YAML frontmatter of a SKILL.md that
// CheckFrontmatter parses. The Agent Skills format keeps it short (a name,
// a description of at most 1024 characters, a few more fields); a longer
// block is not parsed, so that a server's file decides no amount of work.
const MaxFrontmatterBytes = 64 << 10

// SkillFrontmatterError reports a SKILL.md whose YAML frontmatter is not
// what the skill's entry says it is ("Frontmatter Verification": a
// discrepancy is a verification failure equivalent to a digest mismatch,
// and the skill must not be loaded), or that has none that can be
// compared (the format requires SKILL.md to begin with it).
type SkillFrontmatterError struct {
	// URI is the SKILL.md's.
	URI string
	// Keys are the top-level keys whose values differ, or that only one
	// of the two has, sorted; nil when the frontmatter could not be
	// compared at all (Why says why).
	Keys []string
	// Why says what is wrong when Keys is nil.
	Why string
}

func (e *SkillFrontmatterError) Error() string {
	if e.Keys != nil {
		return fmt.Sprintf("%s: its frontmatter differs from the skill's entry's in %s: the content is not the skill's (stale, or tampered with)", e.URI, strings.Join(e.Keys, ", "))
	}
	return fmt.Sprintf("%s: %s, so it cannot be checked against the skill's entry's frontmatter", e.URI, e.Why)
}

// CheckFrontmatter compares the YAML frontmatter of skillMD, the skill's
// SKILL.md as read, with the entry's frontmatter, as JSON values, key by
// key ("Frontmatter": the object "MUST be identical in content to the
// frontmatter of the SKILL.md it describes"; "Frontmatter Verification").
// A difference, a SKILL.md without frontmatter, or frontmatter that is not
// a YAML mapping that JSON can hold, is a *SkillFrontmatterError.
func (sk *Skill) CheckFrontmatter(skillMD []byte) error {
	fail := func(format string, args ...any) error {
		return &SkillFrontmatterError{URI: sk.URI, Why: fmt.Sprintf(format, args...)}
	}
	block, err := frontmatterBlock(skillMD)
	if err != nil {
		return fail("%v", err)
	}
	var node yaml.Node
	err = yaml.Unmarshal(block, &node)
	var doc any
	if err == nil {
		timestampsAsStrings(&node)
		err = node.Decode(&doc)
	}
	if err != nil {
		return fail("its frontmatter is not valid YAML (%s)", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if _, ok := doc.(map[string]any); !ok {
		return fail("its frontmatter is not a YAML mapping with string keys")
	}
	// Through JSON, so that both sides are the same kinds of values (a
	// YAML integer and a JSON number compare as numbers).
	b, err := json.Marshal(doc)
	if err != nil {
		return fail("its frontmatter holds a value JSON cannot (%v)", err)
	}
	var got, want map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		return fail("its frontmatter holds a value JSON cannot (%v)", err)
	}
	if err := json.Unmarshal(sk.Frontmatter, &want); err != nil || want == nil {
		return fail("the skill's entry has no frontmatter object")
	}
	keys := []string{}
	for k, v := range got {
		if w, ok := want[k]; !ok || !reflect.DeepEqual(v, w) {
			keys = append(keys, k)
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	return &SkillFrontmatterError{URI: sk.URI, Keys: keys}
}

// timestampsAsStrings retags the timestamps under n as strings: JSON has
// no dates, and a server renders an unquoted 2024-01-02 as the string it
// is (YAML 1.2's core schema has no timestamps), not as the instant a
// YAML 1.1 reader makes of it. Aliases are not followed: each node is
// visited once.
func timestampsAsStrings(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!timestamp" {
		n.Tag = "!!str"
	}
	for _, c := range n.Content {
		timestampsAsStrings(c)
	}
}

// frontmatterBlock returns the YAML between the --- line that begins
// skillMD and the next --- line (a line of three dashes, or of three dots,
// YAML's end of document; CRLF line ends are taken). A byte order mark
// before the first line is skipped.
func frontmatterBlock(skillMD []byte) ([]byte, error) {
	rest := bytes.TrimPrefix(skillMD, []byte("\ufeff"))
	first, rest, more := cutLine(rest)
	if !more || !isMarker(first, "---") {
		return nil, errors.New("it does not begin with YAML frontmatter (a --- line)")
	}
	start := rest
	for {
		line, next, more := cutLine(rest)
		if isMarker(line, "---") || isMarker(line, "...") {
			return start[:len(start)-len(rest)], nil
		}
		if !more {
			return nil, errors.New("its frontmatter has no closing --- line")
		}
		rest = next
		if len(start)-len(rest) > MaxFrontmatterBytes {
			return nil, fmt.Errorf("its frontmatter is longer than %d bytes (mcpx parses no more)", MaxFrontmatterBytes)
		}
	}
}

// isMarker reports whether line is marker, trailing spaces and tabs
// aside.
func isMarker(line []byte, marker string) bool {
	return string(bytes.TrimRight(line, " \t")) == marker
}

// cutLine returns the first line of b without its line end (\n or \r\n),
// and what follows; more is false when b has no line end.
func cutLine(b []byte) (line, rest []byte, more bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.TrimSuffix(b, []byte("\r")), nil, false
	}
	return bytes.TrimSuffix(b[:i], []byte("\r")), b[i+1:], true
}
