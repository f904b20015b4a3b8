package cmd

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/transport"
)

// Which flags a command takes. The global flags are persistent flags of
// the root, so cobra accepts each of them on every command; a command
// that connects to no server reads only a few, and the others would be
// ignored without a word (mcpx servers list --wire, mcpx trace show
// --timeout 5s). Such a command says which it reads (readsGlobals), and
// checkFlags refuses the others, as it refuses an empty value and the
// recording flags without --record, before anything runs.

// globalsAnnotation is the command annotation readsGlobals sets: the
// global flags the command reads, space-separated; globalsWhyAnnotation
// says what the command does instead of connecting, for the refusal.
const (
	globalsAnnotation    = "mcpx-globals"
	globalsWhyAnnotation = "mcpx-globals-why"
)

// readsGlobals says that c reads only the global flags names (a name
// "@group" stands for every flag of that group of mcpx help flags) and
// why, as the end of "--wire does not apply to mcpx sessions, which …".
// Every command reads alwaysRead's. A command that does not call it reads
// every global flag: it connects.
func readsGlobals(c *cobra.Command, why string, names ...string) *cobra.Command {
	var flags []string
	for _, n := range names {
		if id, ok := strings.CutPrefix(n, "@"); ok {
			for _, g := range flagGroups {
				if g.id == id {
					flags = append(flags, g.flags...)
				}
			}
			continue
		}
		flags = append(flags, n)
	}
	slices.Sort(flags)
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[globalsAnnotation] = strings.Join(flags, " ")
	c.Annotations[globalsWhyAnnotation] = why
	return c
}

// alwaysRead are the global flags every command takes: --json makes an
// error one JSON line on stderr, --color says how mcpx colours whatever it
// prints (and is often given by an alias).
var alwaysRead = map[string]bool{"json": true, "color": true, "help": true}

// emptyAllowed are the flags whose empty value means something: --cursor
// "" asks for the first page.
var emptyAllowed = map[string]bool{"cursor": true}

// checkFlags refuses, as usage errors, the flags c was given that it
// would ignore: a global flag c does not read (see readsGlobals), and an
// empty value ("--url "$URL"" with URL unset), which every flag but
// emptyAllowed's would take as not given, silently.
func checkFlags(c *cobra.Command) error {
	globals := c.Root().PersistentFlags()
	reads, restricted := c.Annotations[globalsAnnotation]
	var unread, empty []string
	var flagLike error
	fs := c.Flags()
	fs.Visit(func(f *pflag.Flag) {
		// (Visit also visits what an earlier REPL line set: Changed is
		// this parse's.)
		if !f.Changed {
			return
		}
		if _, session := f.Annotations[sessionFlagAnnotation]; session {
			return // a REPL line's: checkLine refuses it
		}
		if restricted && !alwaysRead[f.Name] && globals.Lookup(f.Name) == f && !slices.Contains(strings.Fields(reads), f.Name) {
			unread = append(unread, flagName(f))
		}
		if !emptyAllowed[f.Name] && givenEmpty(f) {
			empty = append(empty, flagName(f))
		}
		if v := flagLikeValue(fs, f); v != "" && flagLike == nil {
			arg, _ := pflag.UnquoteUsage(f)
			if v == "--" {
				flagLike = &usageError{err: valueBeforeDash(flagName(f), arg)}
			} else {
				flagLike = usageErrorf("%s %s: that is a flag, not the %s %s takes (was the value left out?)", flagName(f), transport.QuoteExcerpt(v), arg, flagName(f))
			}
		}
	})
	if flagLike != nil {
		return flagLike
	}
	if len(unread) > 0 {
		msg := strings.Join(unread, ", ") + " does not apply to " + c.CommandPath()
		if len(unread) > 1 {
			msg = strings.Join(unread, ", ") + " do not apply to " + c.CommandPath()
		}
		if why := c.Annotations[globalsWhyAnnotation]; why != "" {
			msg += ", which " + why
		}
		// A short list is said here; the help lists every one.
		if n := len(strings.Fields(reads)); n > 0 && n <= 4 {
			var names []string
			for _, n := range strings.Fields(reads) {
				if f := globals.Lookup(n); f != nil { // (a REPL line takes a few)
					names = append(names, flagName(f))
				}
			}
			if len(names) > 0 {
				msg += " (it takes " + strings.Join(names, ", ") + ")"
			}
		}
		return usageErrorf("%s", msg)
	}
	switch len(empty) {
	case 0:
	case 1:
		return usageErrorf("%s is empty: give a value, or leave the flag out (is a variable unset?)", empty[0])
	default:
		return usageErrorf("%s are empty: give values, or leave the flags out (is a variable unset?)", strings.Join(empty, ", "))
	}
	return nil
}

// flagLikeValue returns the value of f, a flag that takes a string,
// that is one of fs's flags (--record --json, --cwd -v: the value was
// left out, and the next flag taken for it) or "--" (mcpx tools list
// --record -- node server.js: pflag takes the -- for the value, and the
// server command becomes mcpx's arguments), "" when there is none.
func flagLikeValue(fs *pflag.FlagSet, f *pflag.Flag) string {
	var values []string
	switch f.Value.Type() {
	case "string":
		values = []string{f.Value.String()}
	case "stringArray", "stringSlice":
		if s, ok := f.Value.(pflag.SliceValue); ok {
			values = s.GetSlice()
		}
	}
	for _, v := range values {
		if v == "--" {
			return v
		}
		if name, ok := strings.CutPrefix(v, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			if fs.Lookup(name) != nil {
				return v
			}
		} else if len(v) == 2 && v[0] == '-' && fs.ShorthandLookup(v[1:]) != nil {
			return v
		}
	}
	return ""
}

// valueBeforeDash is the usage error for a flag name whose value was
// left out right before the -- that starts the server command: the --
// was taken for the value, so the error would otherwise be about the
// server command read as mcpx's arguments ("wrong number of arguments").
func valueBeforeDash(name, arg string) error {
	return fmt.Errorf("%s needs a value before --: %s %s (the -- was taken for its value)", name, name, arg)
}

// checkArgs refuses an empty argument before -- (mcpx trace show "$F"
// with F unset), which would be reported as a file "" that does not
// exist, or taken as no server name. The protocol methods' arguments are
// sent as given, an empty one too: what a server does with an empty tool
// name or method is for mcpx's user to see (the server's error names it).
func checkArgs(c *cobra.Command, args []string) error {
	if isCompletion(c) || protocolMethod(c) {
		return nil // (the word being completed is often "")
	}
	own, _ := splitServer(c, args)
	for i, a := range own {
		if strings.TrimSpace(a) == "" {
			return usageErrorf("%s: argument %d is empty: give a value (is a variable unset?)", c.CommandPath(), i+1)
		}
	}
	return nil
}

// protocolMethod reports whether c is one of the protocol methods'
// commands (mcpx tools call, mcpx call, …).
func protocolMethod(c *cobra.Command) bool {
	for ; c != nil; c = c.Parent() {
		if c.GroupID == "methods" {
			return true
		}
	}
	return false
}

// unknownHelpTarget returns the command args name and, when they ask for
// help (-h, --help) after a word that names no command of it (mcpx toolz
// --help, mcpx tools bogus -h), the usage error that says so: cobra
// prints the help of the command before the word, with exit 0, as if the
// word were right.
func unknownHelpTarget(root *cobra.Command, args []string) (*cobra.Command, error) {
	if !onlyPrints(args) || slices.Contains(args, "--version") {
		return nil, nil
	}
	c, rest, err := root.Find(args)
	if err != nil || c == nil || !c.HasSubCommands() {
		return nil, nil
	}
	words := positionals(c, rest)
	if len(words) == 0 {
		return nil, nil
	}
	word := []string{rest[words[0]]}
	if !c.HasParent() && c.Args != nil {
		return c, c.Args(c, word) // (the root's says "did you mean")
	}
	return c, needSubcommand(c, word)
}

// isCompletion reports whether c is cobra's hidden command that completes
// a shell's words (mcpx __complete …), whose arguments are the words.
func isCompletion(c *cobra.Command) bool {
	return c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd
}

// flagName is f as a person types it: -s for a flag with a shorthand that
// is better known (-s, -H, -v, -o, -f), else --name.
func flagName(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "-" + f.Shorthand
	}
	return "--" + f.Name
}

// givenEmpty reports whether f, given, holds an empty value: a string
// flag given "", or a repeatable one given "" once.
func givenEmpty(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "string":
		return f.Value.String() == ""
	case "stringArray", "stringSlice":
		if s, ok := f.Value.(pflag.SliceValue); ok {
			return slices.Contains(s.GetSlice(), "")
		}
	}
	return false
}

// ownsRecordingFlags is the annotation of a command that reads the
// recording flags without --record (verify: --ignore and --normalize in
// its comparisons, --stable with --update; replay and trace diff, which
// compare too), and of the REPL, whose :record starts a recording later.
const ownsRecordingFlags = "mcpx-owns-recording-flags"

// ownsRecording marks c as reading the recording flags on its own terms
// (ownsRecordingFlags).
func ownsRecording(c *cobra.Command) {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[ownsRecordingFlags] = ""
}

// recordingFlags shape a recording; with --record absent they would do
// nothing.
var recordingFlags = []string{"force", "stable", "redact", "no-redact", "ignore", "normalize"}

// checkRecording refuses the recording flags given to c without
// --record (mcpx ping --ignore '$.x' --, mcpx tools list --force --),
// unless c reads them on its own terms (ownsRecordingFlags).
func checkRecording(c *cobra.Command, rec recordDesc) error {
	if rec.file != "" {
		return nil
	}
	if _, own := c.Annotations[ownsRecordingFlags]; own {
		return nil
	}
	return refuseGiven(c.Root().PersistentFlags(), recordingFlags,
		"applies to a recording: give --record FILE, or leave it out",
		"apply to a recording: give --record FILE, or leave them out")
}

// pflag's words for a flag that could not be parsed.
var (
	invalidFlagArg = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^invalid argument ("(?:[^"\\]|\\.)*") for "(?:-\w, )?--([^"]+)" flag: (.*)$`)
	})
	unknownFlag      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^unknown flag: --([^=\s]+)$`) })
	unknownShorthand = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^unknown shorthand flag: '(.)' in (-\S+)$`) })
	needsArgument    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^flag needs an argument: (?:--(\S+)|'(.)' in -\S+)$`)
	})
)

// flagError rewords the error pflag gave parsing c's flags for a person:
// what was wrong with which flag and what it takes, in mcpx's words
// rather than Go's ('invalid argument "x" for "--parallel" flag:
// strconv.ParseInt: parsing "x": invalid syntax'), and the flags of c
// that a mistyped one is closest to. It returns err's text unchanged
// where it does not recognise it.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	fs := c.Flags()
	if m := invalidFlagArg().FindStringSubmatch(msg); m != nil {
		value, uerr := strconv.Unquote(m[1])
		f := fs.Lookup(m[2])
		if uerr != nil || f == nil {
			return err
		}
		name := flagName(f)
		if f.Shorthand != "" && strings.HasPrefix(msg[len("invalid argument ")+len(m[1]):], ` for "--`) {
			name = "--" + f.Name
		}
		if value == "--" {
			arg, _ := pflag.UnquoteUsage(f)
			return valueBeforeDash(name, arg)
		}
		switch f.Value.Type() {
		case "duration":
			return fmt.Errorf("%s %s is not a duration: give a number with a unit, e.g. 30s, 1m30s or 500ms", name, transport.QuoteExcerpt(value))
		case "int", "int64", "int32", "uint", "uint64":
			if strings.Contains(m[3], "out of range") {
				return fmt.Errorf("%s %s is too large", name, transport.QuoteExcerpt(value))
			}
			return fmt.Errorf("%s %s is not a whole number", name, transport.QuoteExcerpt(value))
		case "bool":
			return fmt.Errorf("%s is a switch: give it without a value (or %s=false), not %s=%s", name, name, name, transport.Excerpt(value))
		}
		return fmt.Errorf("%s: %s", name, m[3])
	}
	if m := needsArgument().FindStringSubmatch(msg); m != nil {
		f := fs.Lookup(m[1])
		if m[2] != "" {
			f = fs.ShorthandLookup(m[2])
		}
		if f != nil {
			arg, _ := pflag.UnquoteUsage(f)
			name := "--" + f.Name
			if m[2] != "" {
				name = "-" + m[2]
			}
			return fmt.Errorf("%s needs a value: %s %s", name, name, arg)
		}
	}
	var typed string
	if m := unknownFlag().FindStringSubmatch(msg); m != nil {
		typed = m[1]
	} else if m := unknownShorthand().FindStringSubmatch(msg); m != nil {
		msg = "unknown flag: " + m[2]
		if len(m[2]) > 2 && !strings.HasPrefix(m[2], "--") {
			// -json: a long flag with one dash.
			typed = m[2][1:]
			if f := fs.Lookup(typed); f != nil && !f.Hidden {
				return fmt.Errorf("%s (flags with long names take two dashes: --%s)", msg, typed)
			}
		}
		if typed == "" {
			return errors.New(msg)
		}
	}
	if typed == "version" && c.HasParent() {
		return fmt.Errorf("%s (the version is mcpx's own: mcpx --version)", msg)
	}
	if typed != "" {
		var names []string
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		s := inspector.Suggest(typed, names, 2)
		for i := range s {
			s[i] = "--" + s[i]
		}
		if strings.Contains(c.Use, "[key=value") {
			// mcpx tools call echo --message hi: an argument as a flag.
			s = append(s, "the argument "+typed+"=VALUE")
		}
		if len(s) > 0 {
			msg += " (did you mean " + strings.Join(s, " or ") + "?)"
		}
		return errors.New(msg)
	}
	return err
}

// checkOneDash refuses a long flag typed with one dash that pflag took
// for a shorthand with its value attached: -output x is -o "utput" (and
// x an argument), -server NAME is -s "erver". (A shorthand that takes no
// value, -verbose, pflag refuses itself: see flagError.) args are mcpx's
// arguments as given; those after -- are the server's.
func checkOneDash(c *cobra.Command, args []string) error {
	fs := c.Flags()
	for _, a := range args {
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		short := fs.ShorthandLookup(a[1:2])
		if f := fs.Lookup(name); f != nil && short != nil && takesValue(short) {
			return usageErrorf("%s: a long flag takes two dashes: --%s (one dash made it -%s with the value %s)", transport.Excerpt(a), f.Name, a[1:2], transport.QuoteExcerpt(a[2:]))
		}
	}
	return nil
}

// checkViewFlags refuses --ui-theme, --ui-timeout, --ui-downloads and
// --on-ui-download without --ui, and --no-browser where nothing opens a
// browser (no --url or configured server for OAuth, or credentials
// given, and no --ui for views): each did nothing, silently. The REPL
// (:ui on) and mcpx connect (whose session's commands may show views)
// take them for later.
func checkViewFlags(c *cobra.Command, conn connDesc) error {
	if !c.HasParent() || c.Name() == "repl" || c.Name() == "connect" || conn.feat.ui.on {
		return nil
	}
	fs := c.Flags()
	changed := func(name string) bool { f := fs.Lookup(name); return f != nil && f.Changed }
	var given []string
	for _, name := range []string{"ui-theme", "ui-timeout", "ui-downloads", "on-ui-download"} {
		if changed(name) {
			given = append(given, "--"+name)
		}
	}
	switch {
	case len(given) == 1:
		return usageErrorf("%s applies to MCP Apps' views: give --ui, or leave it out", given[0])
	case len(given) > 1:
		return usageErrorf("%s apply to MCP Apps' views: give --ui, or leave them out", strings.Join(given, ", "))
	case changed("no-browser") && conn.http.url == "" && conn.named.ref == "":
		return usageErrorf("--no-browser applies to OAuth's authorization (a server at --url) and to --ui's views; neither is here")
	case changed("no-browser") && conn.http.url != "" && (conn.http.sentBearer() != "" || conn.http.oauthOff() != ""):
		return usageErrorf("--no-browser applies to OAuth's authorization and to --ui's views; neither is here (the credentials are given: --bearer, -H 'Authorization: …' or $MCPX_BEARER_TOKEN)")
	}
	return nil
}

// explainStray returns the usage error that explains a mistake found in
// args for c, when one of these caused it: a long flag typed with one
// dash (checkOneDash), or a switch given its value as the next word
// (--wire true, --json false), which pflag does not take: the word
// became an argument ("wrong number of arguments"). nil when neither is
// in args.
func explainStray(c *cobra.Command, args []string) error {
	if err := checkOneDash(c, args); err != nil {
		return err
	}
	fs := c.Flags()
	for i, a := range args {
		if a == "--" {
			break
		}
		if i+1 == len(args) || (args[i+1] != "true" && args[i+1] != "false") {
			continue
		}
		var f *pflag.Flag
		switch {
		case strings.HasPrefix(a, "--"):
			f = fs.Lookup(a[2:])
		case len(a) == 2 && a[0] == '-':
			f = fs.ShorthandLookup(a[1:])
		}
		if f != nil && f.Value.Type() == "bool" {
			return usageErrorf("%s %s: %s is a switch and takes no separate value; give %s alone (or %s=%s)", a, transport.Excerpt(args[i+1]), a, a, a, transport.Excerpt(args[i+1]))
		}
	}
	return nil
}

// refuseGiven refuses, as a usage error, the flags of names given in fs:
// "--a applies …" (one) or "--a, --b apply …" (several).
func refuseGiven(fs *pflag.FlagSet, names []string, one, several string) error {
	var given []string
	for _, name := range names {
		if f := fs.Lookup(name); f != nil && f.Changed {
			given = append(given, "--"+name)
		}
	}
	switch len(given) {
	case 0:
		return nil
	case 1:
		return usageErrorf("%s %s", given[0], one)
	}
	return usageErrorf("%s %s", strings.Join(given, ", "), several)
}
