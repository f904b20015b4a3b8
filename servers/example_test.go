package servers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/mcpx-dev/mcpx/servers"
)

// A home with a Claude Desktop file and a VS Code workspace: list the
// servers, look one up, confirm it once, and resolve its variables.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "servers-example")
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	vars := map[string]string{"XDG_CONFIG_HOME": filepath.Join(home, ".config"), "APPDATA": filepath.Join(home, ".config"),
		"GITHUB_TOKEN": "ghp_example"}
	env := &servers.Env{GOOS: runtime.GOOS, Home: home, Workspace: filepath.Join(home, "proj"),
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	if runtime.GOOS == "darwin" {
		vars["XDG_CONFIG_HOME"] = filepath.Join(home, "Library", "Application Support")
	}
	files := map[string]string{
		filepath.Join(vars["XDG_CONFIG_HOME"], "Claude", "claude_desktop_config.json"): `{"mcpServers": {
			"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}}`,
		filepath.Join(home, "proj", ".vscode", "mcp.json"): `{
			"inputs": [{"type": "promptString", "id": "region", "description": "AWS region"}],
			"servers": {
				"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"}},
				"aws": {"command": "uvx", "args": ["awslabs.aws-api-mcp-server"], "env": {"AWS_REGION": "${input:region}"}},
			},
		}`,
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(name), 0o755)
		os.WriteFile(name, []byte(content), 0o644)
	}

	cat, err := servers.Load(ctx, env)
	if err != nil {
		panic(err)
	}
	for _, s := range cat.Servers {
		fmt.Printf("%-26s %-5s %s%s\n", s.Ref(), s.Transport, s.Command, s.URL)
	}

	s, _ := cat.Lookup("aws")
	store := servers.NewTrustStore(filepath.Join(dir, "trusted.json"))
	if ok, _ := store.Trusted(s); !ok && s.NeedsTrust() {
		// The CLI asks the person here; a yes is remembered.
		fmt.Println("start", s.Command, s.Args, "from", s.Source.ID, "? yes")
		store.Trust(ctx, s)
	}

	// Without a way to ask, an input is a typed error the CLI can add
	// advice to.
	_, err = servers.Resolve(ctx, env, s, nil)
	var missing *servers.MissingInputError
	fmt.Println(errors.As(err, &missing), missing.Input.ID, missing.Input.Description)

	ask := func(_ context.Context, in servers.Input) (string, error) { return "eu-west-1", nil }
	l, _ := servers.Resolve(ctx, env, s, ask)
	fmt.Println(l.Command, l.Args, l.Env)

	gh, _ := cat.Lookup("vscode-project:github")
	l, _ = servers.Resolve(ctx, env, gh, nil)
	fmt.Println(l.Transport, l.URL, l.Headers["Authorization"])
	// Output:
	// vscode-project:aws         stdio uvx
	// claude-desktop:filesystem  stdio npx
	// vscode-project:github      http  https://api.githubcopilot.com/mcp/
	// start uvx [awslabs.aws-api-mcp-server] from vscode-project ? yes
	// true region AWS region
	// uvx [awslabs.aws-api-mcp-server] map[AWS_REGION:eu-west-1]
	// http https://api.githubcopilot.com/mcp/ Bearer ghp_example
}
