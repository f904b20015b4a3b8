package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/modsource"
)

// Every environment variable mcpx's code reads is in README's
// Environment section, and every variable there is read: the list of
// the packages mcpx runs (not tests, test servers or benchmarks) against
// the README.
func TestEnvironmentDocumented(t *testing.T) {
	t.Parallel()
	root, err := modsource.Root()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile(`(?s)\n## Environment\n(.*?)\n## `).FindSubmatch(readme)
	if section == nil {
		t.Fatal("README.md has no Environment section")
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([A-Z][A-Z0-9_]+)`").FindAllStringSubmatch(string(section[1]), -1) {
		documented[m[1]] = true
	}
	// A name given to a function that reads the environment, or a
	// constant named …Env holding one.
	reads := regexp.MustCompile(`(?i:getenv|lookupEnv|absEnv)\("([A-Z][A-Z0-9_]+)"\)|\w*Env\s*=\s*"([A-Z][A-Z0-9_]+)"`)
	read := map[string]string{}
	for _, dir := range []string{"cmd", "tui", "inspector", "transport", "jsonrpc", "mcp", "record", "sessiond", "servers", "oauthflow", "apps"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() && (d.Name() == "testdata" || strings.HasSuffix(d.Name(), "test")) {
				if err == nil {
					return filepath.SkipDir
				}
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range reads.FindAllStringSubmatch(string(b), -1) {
				read[m[1]+m[2]] = path
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(read) < 15 {
		t.Fatalf("found only %d variables read: %v", len(read), read)
	}
	for name, path := range read {
		if !documented[name] {
			t.Errorf("%s reads $%s, which README's Environment section does not name", path, name)
		}
	}
	// Read by Go's standard library for mcpx (net/http).
	stdlib := map[string]bool{"HTTPS_PROXY": true, "HTTP_PROXY": true, "NO_PROXY": true}
	for name := range documented {
		if _, ok := read[name]; !ok && name != "VAR" && !stdlib[name] {
			t.Errorf("README's Environment section names $%s, which no code reads", name)
		}
	}
}
