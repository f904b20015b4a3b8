package inspector

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/mcp"
)

// The Skills extension (io.modelcontextprotocol/skills): a server serves
// Agent Skills as resources, and lists them with skills/list, describes
// one with skills/get, and may list a directory's children with
// resources/directory/read. The extension is specified against
// 2026-07-28; a handshake-era server declares it the same way, under
// capabilities.extensions of its initialize result, and mcpx uses it
// wherever it is declared. Sections named here are the extension's
// specification's.

// Limits every host must accept of one skill ("Limits"). mcpx accepts no
// more when it fetches a skill: they bound the memory a fetch holds.
const (
	MaxSkillFiles = 512
	MaxSkillBytes = 16 << 20
)

// ExtensionNotDeclaredError reports a request of an extension that the
// server did not declare, or a setting of it that the server did not turn
// on; the request was not sent. The Skills extension's "Capability
// Negotiation" has clients issue skills/list and skills/get only after
// observing the server's declaration, and forbids resources/directory/read
// without directoryRead: true.
type ExtensionNotDeclaredError struct {
	Extension string
	// Setting is the extension's setting that is missing ("" when the
	// extension itself is).
	Setting string
	// Method is the request that was not sent.
	Method string
	// Declared are the extensions the server declares, sorted.
	Declared []string
}

func (e *ExtensionNotDeclaredError) Error() string {
	if e.Setting != "" {
		return fmt.Sprintf("the server declares the %s extension without %s: true, so %s may not be sent to it", e.Extension, e.Setting, e.Method)
	}
	declared := "declares no extensions"
	if len(e.Declared) > 0 {
		declared = "declares only " + strings.Join(e.Declared, ", ")
	}
	return fmt.Sprintf("the server does not declare the %s extension (it %s), so %s is not sent", e.Extension, declared, e.Method)
}

// declaredExtensions returns the identifiers under the server's
// capabilities.extensions, sorted (the server's text: whoever prints
// them escapes them).
func (s *Session) declaredExtensions() []string {
	info := s.Server()
	if info == nil {
		return nil
	}
	caps, err := ParseObject(info.Capabilities)
	if err != nil {
		return nil
	}
	ext, err := ParseObject(caps.Get("extensions"))
	if err != nil {
		return nil
	}
	var out []string
	for _, k := range ext.Keys() {
		if v := string(ext.Get(k)); v != "null" && v != "false" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// requireSkills refuses method unless the server declares the Skills
// extension (and setting, when not "", set to true).
func (s *Session) requireSkills(method, setting string) error {
	if !s.Server().Declares("extensions", mcp.SkillsExtension) {
		return &ExtensionNotDeclaredError{Extension: mcp.SkillsExtension, Method: method, Declared: s.declaredExtensions()}
	}
	if setting != "" && !s.Server().Declares("extensions", mcp.SkillsExtension, setting) {
		return &ExtensionNotDeclaredError{Extension: mcp.SkillsExtension, Setting: setting, Method: method}
	}
	return nil
}

// DeclaresSkills reports whether the server declares the Skills
// extension, and whether it declares resources/directory/read with it.
func (s *Session) DeclaresSkills() (skills, directoryRead bool) {
	info := s.Server()
	return info.Declares("extensions", mcp.SkillsExtension), info.Declares("extensions", mcp.SkillsExtension, mcp.SkillsDirectoryRead)
}

// SkillFile is one file of a skill's manifest ("Skill Entries":
// SkillResource): its resource URI, and the sha256 digest and size of its
// raw bytes.
type SkillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Skill is a skill entry as skills/list and skills/get return it ("Skill
// Entries").
type Skill struct {
	// URI is the resource URI of the skill's SKILL.md.
	URI string
	// Name and Description are the frontmatter's (the spec requires
	// both; "" when the server left one out).
	Name, Description string
	// Frontmatter is the SKILL.md frontmatter as a JSON object, as
	// received.
	Frontmatter json.RawMessage
	// Dynamic is set for "resources": "dynamic": the server publishes
	// no digests, and there is nothing to check.
	Dynamic bool
	// Files is the manifest (when not Dynamic), in the server's order.
	Files []SkillFile
}

// ParseSkill reads a skill entry. An entry whose uri is not a string, or
// whose resources is neither an array of files nor "dynamic", is an error:
// hosts must not load it ("Resources").
func ParseSkill(raw json.RawMessage) (*Skill, error) {
	var e struct {
		URI         *string         `json:"uri"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Resources   json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, violationf("skill entry is not an object with string uri: %w", err)
	}
	if e.URI == nil || *e.URI == "" {
		return nil, violation(errors.New("skill entry has no uri"))
	}
	sk := &Skill{URI: *e.URI, Frontmatter: e.Frontmatter}
	var fm struct {
		Name        any `json:"name"`
		Description any `json:"description"`
	}
	if json.Unmarshal(e.Frontmatter, &fm) == nil {
		sk.Name, _ = fm.Name.(string)
		sk.Description, _ = fm.Description.(string)
	}
	res := rawjson.Trim(e.Resources)
	switch {
	case len(res) == 0 || rawjson.IsNull(res):
		return sk, violationf("skill %s has no resources (an array of its files, or \"dynamic\"): hosts must not load it", sk.URI)
	case string(res) == `"dynamic"`:
		sk.Dynamic = true
	case res[0] == '[':
		if err := json.Unmarshal(res, &sk.Files); err != nil {
			return sk, violationf("skill %s: resources is not an array of {uri, digest, size}: %w", sk.URI, err)
		}
	default:
		return sk, violationf("skill %s: resources is %s, neither an array of its files nor \"dynamic\": hosts must not load it", sk.URI, rawjson.Excerpt(res, 40))
	}
	return sk, nil
}

// Problems lists where the entry departs from the extension's rules
// ("Resource Mapping", "Frontmatter", "Resources", "Limits"), each a
// phrase for a warning.
func (sk *Skill) Problems() []string {
	var out []string
	if sk.Name == "" {
		out = append(out, "its frontmatter has no string name")
	}
	if sk.Description == "" {
		out = append(out, "its frontmatter has no string description")
	}
	root, ok := strings.CutSuffix(sk.URI, "/SKILL.md")
	if !ok {
		out = append(out, "its uri does not end in /SKILL.md")
	} else if last := root[strings.LastIndexByte(root, '/')+1:]; sk.Name != "" && last != sk.Name {
		out = append(out, fmt.Sprintf("its uri's last segment %q is not its name %q", last, sk.Name))
	}
	if sk.Dynamic {
		return out
	}
	var total int64
	seen := map[string]bool{}
	for _, f := range sk.Files {
		if seen[f.URI] {
			out = append(out, fmt.Sprintf("file %s is listed twice", f.URI))
		}
		seen[f.URI] = true
		if !validDigest(f.Digest) {
			out = append(out, fmt.Sprintf("file %s: digest %q is not sha256: and 64 lowercase hex digits", f.URI, f.Digest))
		}
		if f.Size < 0 {
			out = append(out, fmt.Sprintf("file %s: size %d is negative", f.URI, f.Size))
		}
		total += max(f.Size, 0)
		if ok && f.URI != sk.URI && !strings.HasPrefix(f.URI, root+"/") {
			out = append(out, fmt.Sprintf("file %s is not within the skill's directory %s", f.URI, root))
		}
	}
	if !seen[sk.URI] {
		out = append(out, "its resources do not list its SKILL.md")
	}
	if len(sk.Files) > MaxSkillFiles {
		out = append(out, fmt.Sprintf("it has %d files, more than the %d every host accepts", len(sk.Files), MaxSkillFiles))
	}
	if total > MaxSkillBytes {
		out = append(out, fmt.Sprintf("its files total %d bytes, more than the %d every host accepts", total, MaxSkillBytes))
	}
	return out
}

func validDigest(d string) bool {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Skills lists the server's skills, every page (or the page at cursor,
// when not nil), as List does ("Listing Skills"). A listing may be empty
// or partial: it is no proof that the server has no other skills.
func (s *Session) Skills(ctx context.Context, cursor *string, opts ...CallOption) (*ListResult, error) {
	return s.List(ctx, ListSkills, cursor, opts...)
}

// SkillResult is a skills/get result: Raw as received, Skill its entry.
type SkillResult struct {
	Raw   json.RawMessage
	Skill *Skill
}

// Skill asks for the entry of the skill whose SKILL.md is uri, with
// skills/get ("Getting a Skill"); the server answers for every skill it
// serves, listed or not. An entry that cannot be loaded is an error, with
// the result still returned.
func (s *Session) Skill(ctx context.Context, uri string, opts ...CallOption) (*SkillResult, error) {
	if err := s.requireSkills(mcp.MethodSkillsGet, ""); err != nil {
		return nil, err
	}
	raw, err := s.Call(ctx, mcp.MethodSkillsGet, map[string]string{"uri": uri}, append(opts, withSubject(uri))...)
	if err != nil {
		return nil, err
	}
	out := &SkillResult{Raw: raw}
	var r struct {
		Skill json.RawMessage `json:"skill"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Skill) == 0 || rawjson.IsNull(r.Skill) {
		return out, violationf("%s %q: the result has no skill object", mcp.MethodSkillsGet, uri)
	}
	out.Skill, err = ParseSkill(r.Skill)
	if err != nil {
		return out, fmt.Errorf("%s %q: %w", mcp.MethodSkillsGet, uri, err)
	}
	return out, nil
}

// ReadDirectory lists the direct children of the directory resource uri
// with resources/directory/read, every page (or the page at cursor),
// as List does ("Reading Directories"). It is refused, and nothing sent,
// unless the server declares the Skills extension with directoryRead:
// true, as clients must not call it otherwise.
func (s *Session) ReadDirectory(ctx context.Context, uri string, cursor *string, opts ...CallOption) (*ListResult, error) {
	method := mcp.MethodResourcesDirectoryRead
	if err := s.requireSkills(method, mcp.SkillsDirectoryRead); err != nil {
		return nil, err
	}
	return s.list(ctx, method, ListKey(method), map[string]string{"uri": uri}, cursor, append(opts, withSubject(uri)))
}

// SkillMismatchError reports a file of a skill whose content is not what
// the skill's entry describes: another size or another digest
// ("Integrity and Verification": the content must not be used).
type SkillMismatchError struct {
	URI string
	// Want is the entry's; Got what was read (Got.Digest is "" when the
	// read was cut off at a size the entry rules out).
	Want, Got SkillFile
}

func (e *SkillMismatchError) Error() string {
	if e.Got.Size != e.Want.Size {
		more := ""
		if e.Got.Digest == "" {
			more = " or more"
		}
		return fmt.Sprintf("%s: read %d%s bytes, but the skill's entry says %d: the content is not the skill's (stale, corrupted or tampered with)", e.URI, e.Got.Size, more, e.Want.Size)
	}
	return fmt.Sprintf("%s: the content's digest is %s, but the skill's entry says %s: the content is not the skill's (stale, corrupted or tampered with)", e.URI, e.Got.Digest, e.Want.Digest)
}

// ReadSkillFile reads one file of a skill's manifest with resources/read
// and returns its raw bytes after checking their size and sha256 digest
// against f ("Verification on Read"): a mismatch is a *SkillMismatchError,
// and nothing of the content is returned. The read is cut off one byte
// past f.Size, so that memory stays bounded whatever the server sends.
func (s *Session) ReadSkillFile(ctx context.Context, f SkillFile, opts ...CallOption) ([]byte, error) {
	if f.Size < 0 || f.Size > MaxSkillBytes {
		return nil, fmt.Errorf("%s: the skill's entry gives it %d bytes, outside 0 to %d", f.URI, f.Size, MaxSkillBytes)
	}
	data, over, err := s.readSkillBytes(ctx, f.URI, f.Size, opts...)
	if err != nil {
		return nil, err
	}
	got := SkillFile{URI: f.URI, Size: int64(len(data))}
	if over {
		return nil, &SkillMismatchError{URI: f.URI, Want: f, Got: got}
	}
	sum := sha256.Sum256(data)
	got.Digest = "sha256:" + hex.EncodeToString(sum[:])
	if got.Size != f.Size || got.Digest != f.Digest {
		return nil, &SkillMismatchError{URI: f.URI, Want: f, Got: got}
	}
	return data, nil
}

// ReadSkillMD reads the SKILL.md of a skill whose files are "dynamic":
// there is no digest to check it against, but its frontmatter is still
// the entry's to match (CheckFrontmatter; the extension's "Frontmatter
// Verification" holds for dynamic skills too). It is bounded by
// MaxSkillBytes.
func (s *Session) ReadSkillMD(ctx context.Context, sk *Skill, opts ...CallOption) ([]byte, error) {
	data, over, err := s.readSkillBytes(ctx, sk.URI, MaxSkillBytes, opts...)
	if err != nil {
		return nil, err
	}
	if over {
		return nil, fmt.Errorf("%s: longer than the %d bytes a skill may hold in all", sk.URI, MaxSkillBytes)
	}
	return data, nil
}

// readSkillBytes reads uri with resources/read and returns the raw bytes
// of its content item, at most limit of them: over says there were more
// (those after the first limit+1 were not kept).
func (s *Session) readSkillBytes(ctx context.Context, uri string, limit int64, opts ...CallOption) (data []byte, over bool, err error) {
	res, err := s.ReadResource(ctx, uri, opts...)
	if err != nil {
		return nil, false, err
	}
	contents, err := DecodeContents(res)
	if err != nil {
		return nil, false, fmt.Errorf("%s %q: %w", mcp.MethodResourcesRead, uri, err)
	}
	i := slices.IndexFunc(contents, func(c ResourceContent) bool { return c.URI == uri })
	if i < 0 {
		if len(contents) != 1 {
			return nil, false, violationf("%s %q: the result has %d contents, none of them for that URI", mcp.MethodResourcesRead, uri, len(contents))
		}
		i = 0
	}
	c := contents[i]
	if err := c.Check(); err != nil {
		return nil, false, fmt.Errorf("%s %q: %w", mcp.MethodResourcesRead, uri, err)
	}
	var buf bytes.Buffer
	w := &cappedWriter{w: &buf, left: limit + 1}
	if _, err := c.WriteTo(w); err != nil && !errors.Is(err, errCapped) {
		return nil, false, fmt.Errorf("%s %q: %w", mcp.MethodResourcesRead, uri, err)
	}
	return buf.Bytes(), w.over, nil
}

var errCapped = errors.New("content longer than expected")

// cappedWriter passes on at most left bytes, then fails.
type cappedWriter struct {
	w    io.Writer
	left int64
	over bool
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		n, _ := c.w.Write(p[:c.left])
		c.left = 0
		c.over = true
		return n, errCapped
	}
	c.left -= int64(len(p))
	return c.w.Write(p)
}

// UnsafeSkillPathError reports a file of a skill whose URI does not name
// a path within the skill's directory that is safe to write under a
// directory of the user's: it would leave it ("..", an absolute path) or
// is not a plain path (an empty segment, a backslash, a control
// character, a percent-encoding that does not decode).
type UnsafeSkillPathError struct {
	Skill, URI, Why string
}

func (e *UnsafeSkillPathError) Error() string {
	return fmt.Sprintf("file %s of skill %s: %s; refusing to write it", e.URI, e.Skill, e.Why)
}

// SkillFilePath returns the path of file uri relative to the skill's
// root directory, the directory of its SKILL.md (skillURI): "SKILL.md",
// "references/GUIDE.md" ("Resource Mapping", "Relative References"), with
// / as separator. A URI that is not within the root, or whose path could
// lead out of a directory it is written under, is an
// *UnsafeSkillPathError: a server's URIs decide no file's place outside
// the directory the user chose.
func SkillFilePath(skillURI, uri string) (string, error) {
	bad := func(why string) (string, error) {
		return "", &UnsafeSkillPathError{Skill: skillURI, URI: uri, Why: why}
	}
	root, ok := strings.CutSuffix(skillURI, "/SKILL.md")
	if !ok {
		return bad("the skill's uri does not end in /SKILL.md")
	}
	rel, ok := strings.CutPrefix(uri, root+"/")
	if !ok {
		return bad("it is not within the skill's directory " + root)
	}
	if strings.ContainsAny(rel, "?#") {
		return bad("its URI has a query or fragment")
	}
	dec, err := url.PathUnescape(rel)
	if err != nil {
		return bad("its path's percent-encoding does not decode")
	}
	for _, r := range dec {
		if r < 0x20 || r == 0x7f || r == '\\' || r == ':' {
			return bad("its path holds a control character, a backslash or a colon")
		}
	}
	for seg := range strings.SplitSeq(dec, "/") {
		switch seg {
		case "":
			return bad("its path has an empty segment")
		case ".", "..":
			return bad("its path has a " + seg + " segment")
		}
	}
	return dec, nil
}
