//go:build unix

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBadInput runs every command of mcpx's tree, found by walking mcpx
// help (so that a new command is covered without a word here), with
// hostile input: an unknown flag, a flag without its value, values of the
// wrong type, too many or too few arguments, empty and control-character
// arguments, missing, directory, unreadable and unwritable files, a server
// that does not exist, URLs that are not an MCP server's or carry
// credentials. Each run must end within a bound, fail (exit 2 for a usage
// error, as README's exit codes say), and say why in one line starting
// with "mcpx: ", with no stack trace, no raw control character and no
// secret.
func TestBadInput(t *testing.T) {
	t.Parallel()
	mcpx := filepath.Join(binDir, "mcpx")
	work := t.TempDir()
	fx := newBadFixtures(t, mcpx, work)
	tree := helpTree(t, fx, nil)
	if len(tree) < 40 {
		t.Fatalf("walked %d commands of mcpx help; want the whole tree", len(tree))
	}
	globals := globalFlags(t, fx)
	var cases []badCase
	for _, c := range tree {
		cases = append(cases, c.badCases(fx)...)
	}
	// Every global flag's bad values on one command that takes them all,
	// and each on one other command in turn.
	ping := findCmd(tree, "ping")
	var takers []*helpCmd
	for _, c := range tree {
		if c.allGlobals && c.server {
			takers = append(takers, c)
		}
	}
	for i, g := range globals {
		cases = append(cases, ping.flagCases(fx, g)...)
		if c := takers[i%len(takers)]; c != ping {
			cases = append(cases, c.flagCases(fx, g)...)
		}
	}
	if raceEnabled {
		// A -race mcpx starts several times slower: a third of the
		// cases, the same third each time (a test run without -race runs
		// them all).
		all := len(cases)
		cases = slices.DeleteFunc(cases, func(bc badCase) bool {
			h := fnv.New32a()
			h.Write([]byte(bc.name))
			return h.Sum32()%3 != 0
		})
		t.Logf("-race: %d of the %d cases", len(cases), all)
	}
	t.Logf("%d commands, %d runs", len(tree), len(cases))
	sem := make(chan struct{}, max(4, runtime.NumCPU()))
	t.Run("cases", func(t *testing.T) {
		for _, bc := range cases {
			t.Run(bc.name, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				fx.check(t, bc)
			})
		}
	})
}

// Expected outcomes of a case.
const (
	mayPass   = iota // whatever the status, a failure is reported well
	mustFail         // a non-zero status
	mustUsage        // exit 2
	mustWrite        // exit 1, output that could not be written
	// the same, if the command prints on stdout when it can (it is run
	// so first)
	mustWriteIfPrints
)

type badCase struct {
	name    string
	args    []string
	want    int
	secret  string   // must not appear in the output
	mention []string // the error must say one of these
	env     []string // more environment
	json    bool     // with --json
	absent  string   // a file that must not exist after a failure
	stdout  string   // a file for standard output (else a buffer)
}

// badFixtures are the files the cases point at and the environment they
// run in.
type badFixtures struct {
	mcpx       string
	env        []string
	dir        string // a directory
	missing    string // a file in a directory that does not exist
	unreadable string // mode 000 ("" as root, where modes do not apply)
	trace      string // a valid trace of testserver
	ctrlFile   string // a file of control characters (a script line, a trace, a key, …)
	work       string
}

func newBadFixtures(t *testing.T, mcpx, work string) *badFixtures {
	fx := &badFixtures{mcpx: mcpx, work: work}
	home := filepath.Join(work, "home")
	fx.dir = filepath.Join(work, "adir")
	for _, d := range []string{home, fx.dir, filepath.Join(work, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fx.missing = filepath.Join(work, "no-such-dir", "no-such-file")
	if os.Geteuid() != 0 {
		fx.unreadable = filepath.Join(work, "unreadable")
		if err := os.WriteFile(fx.unreadable, []byte("{}\n"), 0o000); err != nil {
			t.Fatal(err)
		}
	}
	fx.env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"MCPX_CONFIG_DIR="+filepath.Join(home, "mcpx"), "TMPDIR="+filepath.Join(work, "tmp"),
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
		"BROWSER=false", "MCPX_BEARER_TOKEN=", "MCPX_RECORD=", "MCPX_PROTOCOL_ERA=", "NO_COLOR=")
	fx.ctrlFile = filepath.Join(work, "ctrl")
	if err := os.WriteFile(fx.ctrlFile, []byte(ctrl+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fx.trace = filepath.Join(work, "t.jsonl")
	if r := fx.run(t, []string{"tools", "list", "--record", fx.trace, "--", "testserver"}, ""); r.err != nil {
		t.Fatalf("recording a trace: %v\n%s", r.err, r.stderr)
	}
	return fx
}

type badResult struct {
	code           int
	err            error // a failure to run, or the timeout
	stdout, stderr []byte
	took           time.Duration
}

// badBound is how long one bad invocation may take: each is answered
// before any server is asked anything, or by a server at hand.
const badBound = 10 * time.Second

func (fx *badFixtures) run(t *testing.T, args []string, stdout string) badResult {
	return fx.runFor(t, args, stdout, badBound)
}

func (fx *badFixtures) runFor(t *testing.T, args []string, stdout string, bound time.Duration) badResult {
	return fx.runEnv(t, args, stdout, bound, nil)
}

func (fx *badFixtures) runEnv(t *testing.T, args []string, stdout string, bound time.Duration, env []string) badResult {
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	defer cancel()
	c := exec.CommandContext(ctx, fx.mcpx, args...)
	// Each run in a directory of its own: a file that one case's
	// accepted input creates (-o, --record, --server-stderr) is not
	// another's argument.
	// and a home and TMPDIR of its own: what one case's accepted input
	// configures (servers add) or opens (connect) is not another's.
	dir := t.TempDir()
	home, tmp := filepath.Join(dir, ".home"), filepath.Join(dir, ".tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	c.Env = append(slices.Clip(fx.env), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"MCPX_CONFIG_DIR="+filepath.Join(home, "mcpx"), "TMPDIR="+tmp)
	c.Env, c.Dir = append(c.Env, env...), dir
	if args[0] == "connect" {
		// A session the run opened ends with it.
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			d := exec.CommandContext(ctx, fx.mcpx, "disconnect", "--all")
			d.Env, d.Dir = c.Env, dir
			if out, err := d.CombinedOutput(); err != nil {
				t.Errorf("mcpx disconnect --all: %v\n%s", err, out)
			}
		}()
	}
	c.WaitDelay = time.Second
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if stdout != "" {
		f, err := os.OpenFile(stdout, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		c.Stdout = f
	}
	start := time.Now()
	err := c.Run()
	r := badResult{stdout: out.Bytes(), stderr: errb.Bytes(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.err = fmt.Errorf("still running after %v (a hang)", bound)
	case errors.As(err, &ee) && ee.Exited():
		r.code = ee.ExitCode()
	case err != nil:
		r.err = err
	}
	return r
}

// beforeError are the lines that may come before the error on stderr:
// warnings (README: "reported as a warning: on stderr"), the server's
// stderr (--server-stderr show), and the notes of what mcpx did before it
// failed.
var beforeError = []string{
	"warning: ",
	"server| ",
	"mcpx: watching notifications from ",
	"mcpx: nothing was recorded; ",
}

var badOutput = regexp.MustCompile(`panic|goroutine |runtime error|\.go:\d+`)

func (fx *badFixtures) check(t *testing.T, bc badCase) {
	if bc.want == mustWriteIfPrints {
		r := fx.runFor(t, bc.args, "", 3*time.Second)
		if r.err != nil || r.code != 0 || len(r.stdout) == 0 {
			t.Skipf("mcpx %s does not end at once, fails or prints nothing (exit %d, %v)", quoteArgs(bc.args), r.code, r.err)
		}
		bc.want = mustWrite
	}
	r := fx.runEnv(t, bc.args, bc.stdout, badBound, bc.env)
	show := func() string {
		return fmt.Sprintf("mcpx %s\nexit %d after %v\nstderr: %q\nstdout: %.300q", quoteArgs(bc.args), r.code, r.took.Round(time.Millisecond), r.stderr, r.stdout)
	}
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, show())
	}
	switch {
	case bc.want >= mustFail && r.code == 0:
		t.Errorf("succeeded; want a failure\n%s", show())
	case bc.want == mustUsage && r.code != 2:
		t.Errorf("want exit 2 (a usage error)\n%s", show())
	case bc.want == mustWrite && r.code != 1:
		t.Errorf("want exit 1 (output that could not be written)\n%s", show())
	}
	for what, b := range map[string][]byte{"stdout": r.stdout, "stderr": r.stderr} {
		if m := badOutput.Find(b); m != nil {
			t.Errorf("%s has %q\n%s", what, m, show())
		}
		if i := bytes.IndexAny(b, "\x1b\a\r\x00"); i >= 0 {
			t.Errorf("%s has a raw control character %q\n%s", what, b[i], show())
		}
		if bc.secret != "" && bytes.Contains(b, []byte(bc.secret)) {
			t.Errorf("%s has the secret %q\n%s", what, bc.secret, show())
		}
	}
	if r.code != 0 {
		lines := strings.Split(strings.TrimSuffix(string(r.stderr), "\n"), "\n")
		last := lines[len(lines)-1]
		if bc.json {
			// README: "With --json, a non-zero exit also prints one JSON
			// line as the last line of stderr".
			var v struct {
				Error struct {
					Code     string
					ExitCode *int
					Message  string
				}
			}
			if err := json.Unmarshal([]byte(last), &v); err != nil || v.Error.Code == "" || v.Error.ExitCode == nil || *v.Error.ExitCode != r.code || len(v.Error.Message) < 10 {
				t.Errorf("with --json, want {\"error\":{\"code\",\"exitCode\":%d,\"message\"}} as the last line of stderr (%v)\n%s", r.code, err, show())
			}
			if strings.ContainsAny(v.Error.Message, "\x1b\a\r\n") {
				t.Errorf("the JSON error's message has a raw control character: %q\n%s", v.Error.Message, show())
			}
			last = v.Error.Message
		} else if !strings.HasPrefix(last, "mcpx: ") || len(last) < len("mcpx: ")+10 {
			t.Errorf("want the error in one line on stderr, starting with \"mcpx: \"\n%s", show())
		}
		for _, l := range lines[:len(lines)-1] {
			if !slices.ContainsFunc(beforeError, func(p string) bool { return strings.HasPrefix(l, p) }) {
				t.Errorf("stderr line %q before the error is neither a warning, the server's nor a note of mcpx's\n%s", l, show())
			}
		}
		if bc.mention != nil && !slices.ContainsFunc(bc.mention, func(m string) bool { return strings.Contains(last, m) }) {
			t.Errorf("the error names none of %q\n%s", bc.mention, show())
		}
		if bc.absent != "" {
			if _, err := os.Lstat(bc.absent); err == nil {
				t.Errorf("failed, but left %s behind\n%s", bc.absent, show())
			}
		}
	}
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$\x1b\r\a") {
			q[i] = fmt.Sprintf("%q", a)
		}
	}
	return strings.Join(q, " ")
}

// helpCmd is one command of the tree, as its help describes it.
type helpCmd struct {
	path       []string
	required   []string // the placeholders of its required arguments
	maxArgs    int      // -1: any number
	server     bool     // it takes a server command after --
	atFile     bool     // an optional argument may be @file.json
	flags      []helpFlag
	allGlobals bool     // "Global flags (…): see mcpx help flags"
	globals    []string // else those it names ("Global flags it takes:")
	groups     []string // and the groups of global flags it names
}

type helpFlag struct {
	long, short, value string // value: its placeholder, "" for a switch
	desc               string
	group              string
}

func findCmd(tree []*helpCmd, path string) *helpCmd {
	for _, c := range tree {
		if strings.Join(c.path, " ") == path {
			return c
		}
	}
	panic("no command " + path)
}

var (
	helpFlagLine = regexp.MustCompile(`^  (?:-(\w), )?\s*--([\w-]+)(?: ([^ ].*?))?\s{2,}(\S.*)`)
	helpCmdLine  = regexp.MustCompile(`^  ([a-z][\w-]*)\s{2,}\S`)
	helpHeading  = regexp.MustCompile(`^([A-Z][\w ,()]*):$`)
)

func (fx *badFixtures) help(t *testing.T, args ...string) string {
	r := fx.run(t, append([]string{"help"}, args...), "")
	if r.err != nil || r.code != 0 {
		t.Fatalf("mcpx help %s: exit %d %v\n%s", strings.Join(args, " "), r.code, r.err, r.stderr)
	}
	return string(r.stdout)
}

// helpTree walks mcpx help from path down: every command that runs
// (the help command itself and the group commands without a Run of
// their own left out).
func helpTree(t *testing.T, fx *badFixtures, path []string) []*helpCmd {
	text := fx.help(t, path...)
	var cmds []*helpCmd
	section, usage := "", ""
	c := &helpCmd{path: path}
	for _, line := range strings.Split(text, "\n") {
		if m := helpHeading.FindStringSubmatch(line); m != nil && (section != "" || m[1] == "Usage") {
			section = m[1]
			continue
		}
		switch {
		case section == "":
		case section == "Usage":
			u := strings.TrimSpace(line)
			if usage == "" && strings.HasPrefix(u, "mcpx ") && !strings.HasSuffix(u, "[command]") {
				usage = u
			}
		case section == "Flags":
			if m := helpFlagLine.FindStringSubmatch(line); m != nil && m[2] != "help" && m[2] != "version" {
				c.flags = append(c.flags, helpFlag{long: m[2], short: m[1], value: m[3], desc: m[4]})
			}
		case section == "Examples" || section == "Additional help topics" || section == "Aliases":
		default:
			if m := helpCmdLine.FindStringSubmatch(line); m != nil && m[1] != "help" {
				cmds = append(cmds, helpTree(t, fx, append(slices.Clip(path), m[1]))...)
			}
		}
		if rest, ok := strings.CutPrefix(line, "Global flags it takes: "); ok {
			rest, _, _ = strings.Cut(rest, " (see")
			for _, part := range strings.Split(rest, "; ") {
				if g, ok := strings.CutPrefix(part, "the "); ok {
					g = strings.TrimSuffix(g, " flags")
					for _, name := range strings.Split(g, ", ") {
						c.groups = append(c.groups, name)
					}
					continue
				}
				for _, f := range strings.Split(part, ", ") {
					c.globals = append(c.globals, strings.TrimLeft(f, "-"))
				}
			}
		} else if strings.HasPrefix(line, "Global flags (") {
			c.allGlobals = true
		}
	}
	if usage == "" || len(path) == 0 {
		return cmds // a group (mcpx tools), or mcpx itself (the REPL: see mcpx repl)
	}
	c.parseUsage(strings.TrimPrefix(usage, "mcpx "+strings.Join(path, " ")))
	return append([]*helpCmd{c}, cmds...)
}

// parseUsage reads the arguments of a usage line (after the command's
// path): NAME is required, [NAME] optional, NAME... or [x ...] any number;
// flags (-o DIR, (--prompt NAME | …)) are not arguments.
func (c *helpCmd) parseUsage(u string) {
	c.server = strings.Contains(u, "-- <server command>")
	c.atFile = strings.Contains(u, "@file.json")
	depth, flagValue := 0, false
	for _, tok := range strings.Fields(u) {
		if tok == "[flags]" || tok == "|" || tok == "--" {
			break
		}
		open := strings.Count(tok, "[") + strings.Count(tok, "(")
		isFlag := strings.HasPrefix(strings.TrimLeft(tok, "[("), "-")
		switch {
		case flagValue:
			flagValue = false
		case isFlag:
			flagValue = !strings.ContainsAny(tok, "])")
		case depth > 0 || open > 0:
			if strings.Contains(tok, "...") {
				c.maxArgs = -1
			} else if c.maxArgs >= 0 && depth == 0 {
				c.maxArgs++
			}
		default:
			c.required = append(c.required, tok)
			if strings.HasSuffix(tok, "...") {
				c.maxArgs = -1
			} else if c.maxArgs >= 0 {
				c.maxArgs++
			}
		}
		depth += open - strings.Count(tok, "]") - strings.Count(tok, ")")
	}
}

// globalFlags reads mcpx help flags.
func globalFlags(t *testing.T, fx *badFixtures) []helpFlag {
	var flags []helpFlag
	group := ""
	for _, line := range strings.Split(fx.help(t, "flags"), "\n") {
		if line != "" && line[0] != ' ' && strings.HasSuffix(line, ":") {
			group = strings.ToLower(line)
			continue
		}
		if m := helpFlagLine.FindStringSubmatch(line); m != nil && group != "" {
			flags = append(flags, helpFlag{long: m[2], short: m[1], value: m[3], desc: m[4], group: group})
		}
	}
	if len(flags) < 30 {
		t.Fatalf("mcpx help flags: %d flags read", len(flags))
	}
	return flags
}

// connects reports whether c connects to its server (rather than only
// naming it: auth status, servers add).
func (c *helpCmd) connects() bool {
	return c.allGlobals || c.takes(helpFlag{long: "timeout", group: "session and protocol:"})
}

// takes reports whether c takes the global flag g.
func (c *helpCmd) takes(g helpFlag) bool {
	if c.allGlobals || slices.Contains(c.globals, g.long) || slices.Contains(c.globals, g.short) {
		return true
	}
	for _, name := range c.groups {
		if strings.HasPrefix(g.group, strings.ToLower(name)) {
			return true
		}
	}
	return false
}

// validArgs are arguments that the command accepts (with testserver as
// its server), so that what is wrong in a case is only the case's.
var validArgs = map[string][]string{
	"tools call":          {"echo", "message=hi"},
	"tools schema":        {"echo"},
	"prompts get":         {"plain"},
	"resources read":      {"test://docs/a"},
	"resources subscribe": {"test://docs/a"},
	"call":                {"tools/list"},
	"notify":              {"notifications/roots/list_changed"},
	"complete":            {"name=A"},
}

// usualFlags are flags a command needs besides its arguments.
var usualFlags = map[string][]string{
	"complete":     {"--prompt", "greet"},
	"trace export": {"--html", "/dev/null"},
	"skills pull":  {"-o", "pulled"}, // in the run's own directory
}

// serverModes are the modes of testserver that serve what a command
// asks for.
var serverModes = map[string]string{"skills": "skills", "tasks": "tasks"}

// args returns the command line of c with positional arguments pos
// (nil: its usual ones), the extra arguments, and its server.
func (c *helpCmd) args(fx *badFixtures, pos []string, extra ...string) []string {
	if pos == nil {
		pos = c.usualArgs(fx)
	}
	a := append(slices.Clone(c.path), pos...)
	a = append(a, usualFlags[strings.Join(c.path, " ")]...)
	a = append(a, extra...)
	if c.server {
		a = append(a, "--", "testserver")
		if mode, ok := serverModes[c.path[0]]; ok {
			a = append(a, mode)
		}
	}
	return a
}

func (c *helpCmd) usualArgs(fx *badFixtures) []string {
	if v, ok := validArgs[strings.Join(c.path, " ")]; ok {
		return v
	}
	var pos []string
	for _, r := range c.required {
		switch {
		case isPathPlaceholder(r):
			pos = append(pos, fx.trace)
		case strings.Contains(r, "="):
			pos = append(pos, "k=v")
		default:
			pos = append(pos, "x")
		}
	}
	return pos
}

func isPathPlaceholder(p string) bool {
	p = strings.TrimSuffix(p, "...")
	return p == "FILE" || p == "OLD" || p == "NEW" || p == "OUT" || p == "DIR"
}

func (c *helpCmd) name(what string) string {
	return strings.Join(c.path, "_") + "/" + what
}

const ctrl = "\x1b[31mred\r\x07x"

// badCases are the cases of c's arguments, its own flags, its server and
// the URL, credentials and global flags it takes.
func (c *helpCmd) badCases(fx *badFixtures) []badCase {
	cases := []badCase{
		{name: c.name("unknown-flag"), args: c.args(fx, nil, "--no-such-flag"), want: mustUsage},
		{name: c.name("unknown-shorthand"), args: c.args(fx, nil, "-Z"), want: mustUsage},
		{name: c.name("ctrl-flag"), args: c.args(fx, nil, "--"+ctrl), want: mustUsage},
	}
	usual := c.usualArgs(fx)
	if len(c.required) > 0 {
		cases = append(cases, badCase{name: c.name("too-few"), args: c.args(fx, usual[:len(c.required)-1]), want: mustUsage})
	}
	if c.maxArgs >= 0 {
		extra := append(slices.Clone(usual), "extra")
		for len(extra) <= c.maxArgs {
			extra = append(extra, "extra")
		}
		cases = append(cases, badCase{name: c.name("too-many"), args: c.args(fx, extra), want: mustUsage})
	}
	for i, r := range c.required {
		for what, v := range map[string]string{"empty": "", "ctrl": ctrl} {
			pos := slices.Clone(usual)
			pos[i] = v
			want := mustFail
			if c.path[0] == "notify" {
				// Sent to the server as it is (README: "except where it
				// is sent to the server as it is"), which does not answer
				// a notification.
				want = mayPass
			}
			cases = append(cases, badCase{name: c.name(fmt.Sprintf("arg%d-%s", i, what)), args: c.args(fx, pos), want: want})
		}
		if isPathPlaceholder(r) {
			if r != "DIR" {
				pos := slices.Clone(usual)
				pos[i] = fx.ctrlFile
				cases = append(cases, badCase{name: c.name(fmt.Sprintf("arg%d-ctrl-content", i)), args: c.args(fx, pos), want: mayPass})
			}
			for what, p := range fx.badPaths(r == "DIR") {
				pos := slices.Clone(usual)
				pos[i] = p
				cases = append(cases, badCase{name: c.name(fmt.Sprintf("arg%d-%s", i, what)), args: c.args(fx, pos), want: mustFail, mention: []string{p}})
			}
		}
	}
	if c.atFile {
		// An optional argument that may be @file.json.
		for what, p := range fx.badPaths(false) {
			pos := append(slices.Clone(usual), "@"+p)
			cases = append(cases, badCase{name: c.name("at-" + what), args: c.args(fx, pos), want: mustFail, mention: []string{p}})
		}
	}
	// Standard output that cannot be written (a full disk): a command
	// that prints fails, exit 1 (README: "output that could not be
	// written (stdout, …)").
	if _, err := os.Stat("/dev/full"); err == nil {
		cases = append(cases, badCase{name: c.name("stdout-dev-full"), args: c.args(fx, nil), stdout: "/dev/full", want: mustWriteIfPrints})
	}
	for _, f := range c.flags {
		cases = append(cases, c.flagCases(fx, f)...)
	}
	if c.server {
		// servers add stores the command, which may be installed later.
		want := mayPass
		if c.connects() {
			want = mustFail
		}
		cases = append(cases,
			badCase{name: c.name("no-such-server-command"), args: append(c.own(fx), "--", filepath.Join(fx.work, "no-such-server")), want: want},
			badCase{name: c.name("no-such-named-server"), args: c.urlArgs(fx, "-s", "no-such-server"), want: mustFail})
	}
	if c.takes(helpFlag{long: "url", group: "http"}) {
		// A command that connects fails to reach port 1; one that only
		// names the server (auth status, servers add) may succeed, but
		// never shows the credentials.
		connects := mayPass
		if c.connects() {
			connects = mustFail
		}
		cases = append(cases,
			badCase{name: c.name("url-not-a-url"), args: c.urlArgs(fx, "--url", "not a url"), want: mustUsage},
			badCase{name: c.name("url-ftp"), args: c.urlArgs(fx, "--url", "ftp://127.0.0.1/mcp"), want: mustUsage},
			badCase{name: c.name("url-ctrl"), args: c.urlArgs(fx, "--url", "http://127.0.0.1:1/"+ctrl), want: mustFail},
			badCase{name: c.name("url-userinfo"), args: c.urlArgs(fx, "--url", "http://user:hunter2@127.0.0.1:1/mcp"), want: connects, secret: "hunter2"},
			badCase{name: c.name("url-userinfo-ftp"), args: c.urlArgs(fx, "--url", "ftp://user:hunter2@127.0.0.1/mcp"), want: mustUsage, secret: "hunter2"},
			badCase{name: c.name("url-userinfo-bad-port"), args: c.urlArgs(fx, "--url", "http://user:hunter2@127.0.0.1:99999/mcp"), want: mustFail, secret: "hunter2"},
			badCase{name: c.name("url-userinfo-bad-host"), args: c.urlArgs(fx, "--url", "http://user:hunter2@bad host/mcp"), want: mustFail, secret: "hunter2"},
			badCase{name: c.name("url-query-token"), args: c.urlArgs(fx, "--url", "http://127.0.0.1:1/mcp?access_token=hunter2"), want: connects, secret: "hunter2"},
		)
		if c.takes(helpFlag{long: "bearer", group: "http"}) {
			cases = append(cases,
				badCase{name: c.name("bearer"), args: c.urlArgs(fx, "--url", "http://127.0.0.1:1/mcp", "--bearer", "hunter2"), want: connects, secret: "hunter2"},
				// A token read from a file with its line ending.
				badCase{name: c.name("bearer-crlf"), args: c.urlArgs(fx, "--url", "http://127.0.0.1:1/mcp", "--bearer", "hunter2\r\n"), want: mustUsage, secret: "hunter2", mention: []string{"--bearer"}},
				badCase{name: c.name("bearer-env-crlf"), args: c.urlArgs(fx, "--url", "http://127.0.0.1:1/mcp"), env: []string{"MCPX_BEARER_TOKEN=hunter2\r\n"}, want: mustUsage, secret: "hunter2", mention: []string{"MCPX_BEARER_TOKEN"}})
		}
	}
	if !c.allGlobals && !c.takes(helpFlag{long: "timeout", group: "session and protocol:"}) {
		cases = append(cases, badCase{name: c.name("global-not-taken"), args: c.args(fx, nil, "--timeout", "5s"), want: mustUsage})
	}
	// With --json, the error is a JSON line instead.
	if c.allGlobals || c.takes(helpFlag{long: "json"}) {
		for _, bc := range slices.Clone(cases) {
			if bc.want < mustFail || bc.json || !slices.ContainsFunc(jsonCases, func(s string) bool { return strings.HasSuffix(bc.name, "/"+s) }) {
				continue
			}
			bc.name += "-json"
			bc.args = slices.Insert(slices.Clone(bc.args), len(c.path), "--json")
			bc.json = true
			cases = append(cases, bc)
		}
	}
	return cases
}

// own is c's command line without a server.
func (c *helpCmd) own(fx *badFixtures) []string {
	a := append(slices.Clone(c.path), c.usualArgs(fx)...)
	return append(a, usualFlags[strings.Join(c.path, " ")]...)
}

// jsonCases are the cases also run with --json.
var jsonCases = []string{"unknown-flag", "ctrl-flag", "too-few", "too-many", "arg0-ctrl", "arg0-missing",
	"no-such-server-command", "url-userinfo", "url-ctrl", "bearer-env-crlf", "stdout-dev-full"}

// urlArgs is c's command line with flags in place of its server command.
func (c *helpCmd) urlArgs(fx *badFixtures, flags ...string) []string {
	return append(c.own(fx), flags...)
}

// badPaths are paths a file argument or flag cannot be.
func (fx *badFixtures) badPaths(isDir bool) map[string]string {
	m := map[string]string{"missing": fx.missing}
	if !isDir {
		m["directory"] = fx.dir
	}
	if fx.unreadable != "" {
		m["unreadable"] = fx.unreadable
	}
	return m
}

// outputFlags write files: a failed command leaves none behind, and a
// write that fails is an error.
var outputFlags = map[string]bool{"output": true, "record": true, "junit": true, "har": true, "html": true}

// flagCases are the cases of one flag of c.
func (c *helpCmd) flagCases(fx *badFixtures, f helpFlag) []badCase {
	if f.value == "" {
		// A switch given a value.
		return []badCase{{name: c.name(f.long + "=value"), args: c.args(fx, nil, "--"+f.long+"=nosuch"), want: mustUsage}}
	}
	with := func(what string, want int, v string) badCase {
		bc := badCase{name: c.name(f.long + "-" + what), args: c.args(fx, nil, "--"+f.long, v), want: want}
		if want >= mustFail {
			// The error names the flag (or the file it names).
			bc.mention = []string{"--" + f.long, v}
			if f.short != "" {
				bc.mention = append(bc.mention, "-"+f.short+" ")
			}
		}
		return bc
	}
	missing := c.own(fx)
	cases := []badCase{
		{name: c.name(f.long + "-no-value"), args: append(missing, "--"+f.long), want: mustUsage},
		with("ctrl", mayPass, ctrl),
		with("empty", mayPass, ""),
	}
	switch v := strings.TrimSuffix(strings.TrimPrefix(f.value, "`"), "`"); v {
	case "DURATION":
		cases = append(cases, with("abc", mustUsage, "abc"), with("negative", mustUsage, "-1s"),
			with("huge", mustUsage, "99999999999999999999h"))
	case "N", "SIZE":
		cases = append(cases, with("x", mustUsage, "x"), with("negative", mustUsage, "-5"), with("zero", mustUsage, "0"),
			with("huge", mustUsage, "99999999999999999999"))
	case "WHEN", "ERA", "TRANSPORT", "GRANT", "THEME", "LEVEL", "MODE":
		cases = append(cases, with("nosuch", mustUsage, "nosuch"))
	case "POLICY":
		cases = append(cases, with("nosuch", mustUsage, "nosuch"), with("file-missing", mustUsage, "file:"+fx.missing))
		// An answer file that never ends is refused, not read into
		// memory.
		if _, err := os.Stat("/dev/zero"); err == nil {
			cases = append(cases, with("file-endless", mustUsage, "file:/dev/zero"))
		}
	case "URL", "UPSTREAM":
		cases = append(cases, with("not-a-url", mustUsage, "not a url"),
			with("userinfo", mustFail, "ftp://user:hunter2@127.0.0.1/x"))
		cases[len(cases)-1].secret = "hunter2"
	case "recorded":
		cases = append(cases, with("nosuch", mustUsage, "nosuch"), with("bad-factor", mustUsage, "recorded*x"))
	case "SELECTOR:ACTION":
		cases = append(cases, with("nosuch", mustUsage, "nosuch"), with("bad-action", mustUsage, "tools/call:nosuch"))
	case "ADDR":
		cases = append(cases, with("bad-port", mustUsage, "127.0.0.1:99999"), with("not-an-addr", mustUsage, "not an addr"))
	case "ORIGIN":
		cases = append(cases, with("nosuch", mustUsage, "nosuch"))
	case "KEY=VALUE", "ID=VALUE", "k=v", "RE=PLACEHOLDER":
		cases = append(cases, with("no-equals", mustUsage, "novalue"))
	case "'Name: value'":
		cases = append(cases, with("no-colon", mustUsage, "novalue"))
	case "[METHOD:]JSONPATH", "JSONPATH":
		cases = append(cases, with("bad-path", mustUsage, "$["))
	case "JSON":
		cases = append(cases, with("not-json", mustUsage, "{"))
		for what, p := range fx.badPaths(false) {
			bc := with("at-"+what, mustFail, "@"+p)
			bc.mention = append(bc.mention, p)
			cases = append(cases, bc)
		}
	case "FILE", "DIR", "OUT":
		for what, p := range fx.badPaths(v == "DIR") {
			if what == "missing" && strings.Contains(f.desc, "created if needed") {
				continue
			}
			bc := with(what, mustFail, p)
			bc.mention = append(bc.mention, p)
			cases = append(cases, bc)
		}
		if !outputFlags[f.long] && v == "FILE" {
			// What the file holds is shown escaped, if at all.
			cases = append(cases, with("ctrl-content", mayPass, fx.ctrlFile))
		}
		if outputFlags[f.long] && v != "DIR" {
			fresh := filepath.Join(fx.work, "out", strings.Join(c.path, "-")+"-"+f.long)
			os.MkdirAll(filepath.Dir(fresh), 0o755)
			if c.server && f.long != "junit" {
				// The server fails: nothing is written (but a JUnit
				// report, which reports the failure).
				bc := badCase{name: c.name(f.long + "-server-fails"), want: mustFail, absent: fresh,
					args: append(c.own(fx), "--"+f.long, fresh, "--", filepath.Join(fx.work, "no-such-server"))}
				cases = append(cases, bc)
			}
			if _, err := os.Stat("/dev/full"); err == nil {
				cases = append(cases, with("dev-full", mustWrite, "/dev/full"))
			}
		}
	}
	return cases
}
