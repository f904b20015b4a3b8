package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/tui"
)

// The skills commands: the Skills extension (io.modelcontextprotocol/
// skills), wherever a server declares it.

func newSkillsCmd(e *env) *cobra.Command {
	list := newListCmd(e, "list", "List the server's skills (all pages)", inspector.ListSkills, (*tui.Printer).Skills)
	list.Long = `List the skills the server publishes (skills/list, every page): each one's
name, the URI of its SKILL.md, its files (how many, or "dynamic" when the
server publishes no digests) and its description. A listing may be partial:
skills get and skills pull take the URI of a skill that is not listed too.`
	return groupCmd("skills", list, newSkillsGetCmd(e), newSkillsCheckCmd(e), newSkillsPullCmd(e))
}

func newSkillsGetCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "get URI [flags] -- <server command>",
		Short: "Show a skill's entry: its frontmatter and files (skills/get)",
		Long: `Show the entry of the skill whose SKILL.md is at URI (skills/get): its
frontmatter, and its files with their sizes and sha256 digests. No file is
read; skills check reads them, skills pull writes them.`,
		Example: `  mcpx skills get skill://git-workflow/SKILL.md -- node server.js
  mcpx skills get skill://acme/billing/refunds/SKILL.md --json -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			return e.withClient(c.Context(), server, func(cl *client) error {
				res, err := cl.sess.Skill(c.Context(), own[0])
				if res == nil {
					return err
				}
				e.emit(cl, res.Raw, func() {
					if res.Skill != nil {
						cl.out.WithWidth(e.ios.outWidth()).Skill(res.Skill)
					}
				})
				if res.Skill != nil {
					for _, p := range res.Skill.Problems() {
						cl.depart(c.Context(), "skills/get: the entry departs from the Skills extension: "+p)
					}
				}
				return err
			})
		},
	}
}

func newSkillsCheckCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "check URI [flags] -- <server command>",
		Short: "Read a skill's files and check them against its entry's digests and sizes",
		Long: `Ask for the entry of the skill whose SKILL.md is at URI (skills/get), read
every file it lists (resources/read) and check that each has the size and
sha256 digest the entry gives, and that the YAML frontmatter of its SKILL.md
is the entry's frontmatter. A file that does not match, or a SKILL.md
without frontmatter, is an error (exit 1); every file is read all the same.
A skill whose files are "dynamic" has no digests: only its SKILL.md is read,
and its frontmatter checked.

--json prints what was checked, not the skills/get result: {"uri", "ok",
"files": [{"uri", "size", "digest", "ok", "error"}]}, size and digest as
the entry gives them, error saying why a file did not verify ("dynamic":
true, and its SKILL.md the only file, for a dynamic skill). It is printed
on a failure too, before the error.`,
		Example: `  mcpx skills check skill://acme/billing/refunds/SKILL.md -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			return (&skillsPullOptions{e: e}).run(c.Context(), own[0], server)
		},
	}
}

type skillsPullOptions struct {
	e   *env
	dir string
}

func newSkillsPullCmd(e *env) *cobra.Command {
	o := &skillsPullOptions{e: e}
	c := &cobra.Command{
		Use:   "pull URI -o DIR [flags] -- <server command>",
		Short: "Fetch a skill's files into a directory, their digests verified",
		Long: `Fetch the skill whose SKILL.md is at URI into DIR: its entry (skills/get),
then every file it lists (resources/read), each checked against the size
and sha256 digest of the entry, and its SKILL.md's YAML frontmatter against
the entry's, before anything is written. DIR/SKILL.md is
its SKILL.md, and the other files keep their paths within the skill.

Every file is written whole (to a temporary file, then renamed), and only
once all of them matched: a mismatch writes nothing. A file whose URI would
place it outside DIR (a .. segment, a path outside the skill's directory)
is refused, whatever the server says. Files are written without execute
permission: a skill's scripts are the server's, to be read before they are
run. A skill whose files are "dynamic" has no digests and is not pulled.

--json prints what was checked and written, as skills check does, with
"dir" and each written file's "path" (DIR joined with its path within the
skill; none when nothing was written), and "error" when the files matched
but could not be written. A skill refused before any file is read (a path
refused, beyond the limits, "dynamic") prints only the error.`,
		Example: `  mcpx skills pull skill://acme/billing/refunds/SKILL.md -o refunds -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			if o.dir == "" {
				return usageErrorf("skills pull needs -o DIR, the directory to write the skill's files to")
			}
			return o.run(c.Context(), own[0], server)
		},
	}
	c.Flags().StringVarP(&o.dir, "output", "o", "", "write the skill's files under `DIR` (created if needed)")
	return c
}

// pulledFile is a skill's file read and verified, and where it goes.
type pulledFile struct {
	rel  string
	data []byte
}

// skillReport is what skills check and skills pull print with --json:
// what was checked, file by file, rather than the skills/get result.
type skillReport struct {
	// URI is the skill's SKILL.md's.
	URI string `json:"uri"`
	// Dir is pull's -o DIR.
	Dir string `json:"dir,omitempty"`
	// Dynamic is set for a skill whose files are "dynamic": only its
	// SKILL.md's frontmatter is checked (Files holds it alone).
	Dynamic bool `json:"dynamic,omitempty"`
	// OK is set when every file matched its entry (and, for pull, was
	// written).
	OK    bool              `json:"ok"`
	Files []skillFileReport `json:"files"`
	// Error is why pull did not write the files, when they all matched.
	Error string `json:"error,omitempty"`
}

// skillFileReport is one file of a skillReport: its URI, size and digest
// as the entry gives them, and whether the content read matched them (and,
// for SKILL.md, whether its frontmatter matched the entry's), or why not.
type skillFileReport struct {
	URI string `json:"uri"`
	// Path is where pull wrote it (DIR joined with its path within the
	// skill); absent when it was not written.
	Path   string `json:"path,omitempty"`
	Size   int64  `json:"size"`
	Digest string `json:"digest"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
}

// run checks the skill's files (dir "") or pulls them into dir. Every
// file is read even after one failed to verify, so that the report
// (--json) says what became of each; a failure of the connection ends
// the run there.
func (o *skillsPullOptions) run(ctx context.Context, uri string, server []string) error {
	if o.dir != "" {
		if fi, err := os.Stat(o.dir); err == nil && !fi.IsDir() {
			return usageErrorf("-o %s is not a directory", o.dir)
		}
	}
	return o.e.withClient(ctx, server, func(c *client) error {
		res, err := c.sess.Skill(ctx, uri)
		if err != nil {
			return err
		}
		sk := res.Skill
		for _, p := range sk.Problems() {
			c.depart(ctx, "skills/get: the entry departs from the Skills extension: "+p)
		}
		report := &skillReport{URI: sk.URI, Dir: o.dir, Files: []skillFileReport{}}
		if sk.Dynamic {
			if o.dir != "" {
				return fmt.Errorf("skill %s: its files are \"dynamic\" (the server publishes no digests), so they cannot be verified; not pulled (resources dir and resources read show them)", uri)
			}
			// No digests, but SKILL.md's frontmatter is still the entry's
			// to match (the extension's "Frontmatter Verification").
			report.Dynamic = true
			data, err := c.sess.ReadSkillMD(ctx, sk, c.withProgress(sk.URI))
			c.console.ClearProgress()
			if err == nil {
				err = sk.CheckFrontmatter(data)
			}
			fr := skillFileReport{URI: sk.URI, OK: err == nil}
			if err != nil {
				if code, _ := classify(err); code != ExitError && code != ExitServerError {
					return fmt.Errorf("skill %s: %w", uri, err)
				}
				fr.Error = err.Error()
				report.Files = append(report.Files, fr)
				return o.emitReport(c, report, func() {}, fmt.Errorf("skill %s: %w", uri, err))
			}
			report.Files = append(report.Files, fr)
			report.OK = true
			return o.emitReport(c, report, func() {
				fmt.Fprintf(o.e.ios.Out, "%s: its SKILL.md's frontmatter matches its entry's; its files are \"dynamic\" (the server publishes no digests): nothing more to check\n", tui.EscapeLine(uri))
			})
		}
		files, err := o.plan(sk)
		if err != nil {
			return err
		}
		var failed []error
		for i, f := range sk.Files {
			data, err := c.sess.ReadSkillFile(ctx, f, c.withProgress(f.URI))
			c.console.ClearProgress()
			if err == nil && f.URI == sk.URI {
				err = sk.CheckFrontmatter(data)
			}
			fr := skillFileReport{URI: f.URI, Size: f.Size, Digest: f.Digest, OK: err == nil}
			if err != nil {
				if code, _ := classify(err); code != ExitError && code != ExitServerError {
					// Not this file's: the connection's, a timeout, an
					// interruption.
					return fmt.Errorf("skill %s: %w", uri, err)
				}
				fr.Error = err.Error()
				failed = append(failed, err)
			}
			report.Files = append(report.Files, fr)
			files[i].data = data
		}
		if len(failed) > 0 {
			err := fmt.Errorf("skill %s: %w", uri, failed[0])
			if n := len(failed) - 1; n > 0 {
				err = fmt.Errorf("%w (and %d more of its files did not verify; --json lists each)", err, n)
			}
			return o.emitReport(c, report, func() {}, err)
		}
		if o.dir != "" {
			n, err := writeSkillFiles(ctx, o.dir, files)
			for i := range n {
				report.Files[i].Path = filepath.Join(o.dir, filepath.FromSlash(files[i].rel))
			}
			if err != nil {
				err = fmt.Errorf("-o %s: %w", o.dir, err)
				report.Error = err.Error()
				return o.emitReport(c, report, func() {}, err)
			}
		}
		report.OK = true
		paths := make([]string, len(files))
		for i, f := range files {
			paths[i] = f.rel
		}
		return o.emitReport(c, report, func() { c.out.SkillFiles(sk, paths, o.dir) })
	})
}

// emitReport prints report with --json, or calls human, and returns err
// (the first of errs, or nil).
func (o *skillsPullOptions) emitReport(c *client, report *skillReport, human func(), errs ...error) error {
	if o.e.cfg.out.json {
		b, err := json.Marshal(report)
		if err != nil {
			return err
		}
		c.out.JSON(b)
	} else {
		human()
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// plan returns where each of the skill's files goes, before any is read:
// a manifest over the limits every host accepts, a URI that is not a
// safe path within the skill, or two files at one path, is refused here.
func (o *skillsPullOptions) plan(sk *inspector.Skill) ([]pulledFile, error) {
	var total int64
	for _, f := range sk.Files {
		total += max(f.Size, 0)
	}
	if len(sk.Files) > inspector.MaxSkillFiles || total > inspector.MaxSkillBytes {
		return nil, fmt.Errorf("skill %s has %d files of %s in all, beyond the %d files and %s the Skills extension has every host accept; mcpx fetches no more", sk.URI, len(sk.Files), tui.HumanSize(total), inspector.MaxSkillFiles, tui.HumanSize(inspector.MaxSkillBytes))
	}
	files := make([]pulledFile, len(sk.Files))
	// Paths compared without case, as some file systems do.
	asFile, asDir := map[string]string{}, map[string]bool{}
	clash := func(f inspector.SkillFile, other string) error {
		return fmt.Errorf("skill %s: files %s and %s would be written at the same place; refusing to write either", sk.URI, f.URI, other)
	}
	for i, f := range sk.Files {
		rel, err := inspector.SkillFilePath(sk.URI, f.URI)
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(rel)
		if prev, ok := asFile[key]; ok {
			return nil, clash(f, prev)
		}
		if asDir[key] {
			return nil, clash(f, "a file within "+rel)
		}
		for d := path.Dir(key); d != "."; d = path.Dir(d) {
			if prev, ok := asFile[d]; ok {
				return nil, clash(f, prev)
			}
			asDir[d] = true
		}
		asFile[key] = f.URI
		files[i].rel = rel
	}
	return files, nil
}

// writeSkillFiles writes files under dir, which is created if need be,
// and returns how many of them (the first n) it wrote. Every file is opened through an os.Root of dir, which no path and no
// symbolic link leads out of, and written whole: to a temporary file in
// its directory, synced, then renamed over the file.
func writeSkillFiles(ctx context.Context, dir string, files []pulledFile) (int, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return i, err
		}
		if err := writeRootFile(root, f.rel, f.data); err != nil {
			return i, fmt.Errorf("%s: %w", f.rel, err)
		}
	}
	return len(files), nil
}

func writeRootFile(root *os.Root, rel string, data []byte) error {
	if d := path.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o777); err != nil {
			return err
		}
	}
	if fi, err := root.Lstat(rel); err == nil && fi.IsDir() {
		return errors.New("is a directory")
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp := path.Join(path.Dir(rel), ".mcpx-"+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}

func newResourcesDirCmd(e *env) *cobra.Command {
	o := &listOptions{e: e, method: mcp.MethodResourcesDirectoryRead, render: (*tui.Printer).Resources, arg: "URI",
		fetch: func(ctx context.Context, c *client, uri string, cursor *string) (*inspector.ListResult, error) {
			return c.sess.ReadDirectory(ctx, uri, cursor)
		}}
	c := o.command("dir", "List a directory resource's children (resources/directory/read)")
	c.Long = `List the direct children of the directory resource at URI
(resources/directory/read, every page): files, and subdirectories (type
inode/directory) to list in turn. A server offers it with the Skills
extension and directoryRead: true; mcpx sends it to no other server.`
	c.Example = `  mcpx resources dir skill://acme/billing/refunds -- node server.js
  mcpx resources dir skill://acme/billing/refunds/templates --json -- node server.js`
	return c
}
