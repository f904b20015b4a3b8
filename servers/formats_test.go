package servers

import (
	"strings"
	"testing"
	"time"
)

// The files below are written after the examples of each application's
// documentation (cited in formats.go and locate.go).
func TestFormats(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		content  string
		want     []got
		warnings []string
	}{{
		name: "claude desktop",
		path: "/home/ada/.config/Claude/claude_desktop_config.json",
		content: `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada/Desktop", "/home/ada/Downloads"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example"}
    },
    "remote": {"url": "https://example.com/mcp"}
  },
  "preferences": {"sidebarMode": "chat"}
}`,
		want: []got{
			{Ref: "claude-desktop:filesystem", Transport: TransportStdio, Command: "npx",
				Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/ada/Desktop", "/home/ada/Downloads"}},
			{Ref: "claude-desktop:github", Transport: TransportStdio, Command: "docker",
				Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
				Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example"}},
		},
		// Claude Desktop's file has no remote servers: url is not a field
		// of it, and the entry has nothing left to run.
		warnings: []string{
			`claude_desktop_config.json:12: server "remote": unknown field "url"`,
			`claude_desktop_config.json:12: server "remote": has neither a command nor a URL; skipped`,
		},
	}, {
		name: "claude code user and local scopes",
		path: "/home/ada/.claude.json",
		content: `{
  "numStartups": 12,
  "mcpServers": {
    "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp", "oauth": {"clientId": "abc", "callbackPort": 8080}},
    "airtable": {"type": "stdio", "command": "npx", "args": ["-y", "airtable-mcp-server"],
                 "env": {"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY}"}}
  },
  "projects": {
    "/home/ada/proj": {
      "allowedTools": [],
      "mcpServers": {
        "stripe": {"type": "sse", "url": "https://mcp.stripe.com/sse", "headers": {"Authorization": "Bearer ${STRIPE_KEY:-none}"}}
      }
    },
    "/home/ada/other": {"mcpServers": {"elsewhere": {"command": "x"}}}
  }
}`,
		want: []got{
			{Ref: "claude-code:airtable", Transport: TransportStdio, Command: "npx", Args: []string{"-y", "airtable-mcp-server"},
				Env: map[string]string{"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY}"}},
			{Ref: "claude-code:sentry", Transport: TransportHTTP, URL: "https://mcp.sentry.dev/mcp"},
			{Ref: "claude-code-local:stripe", Transport: TransportSSE, URL: "https://mcp.stripe.com/sse",
				Headers: map[string]string{"Authorization": "Bearer ${STRIPE_KEY:-none}"}},
		},
		warnings: []string{`.claude.json:4: server "sentry": oauth names an OAuth client that mcpx does not take from the file`},
	}, {
		name: "claude code project .mcp.json",
		path: "/home/ada/proj/.mcp.json",
		content: `{
  "mcpServers": {
    "db": {"command": "${HOME}/bin/db-mcp", "args": ["--dsn", "${DB_URL:-postgres://localhost/dev}"], "env": {}},
    "socket": {"type": "websocket", "url": "ws://localhost:9000"},
    "api": {"type": "http", "url": "https://api.example.com/mcp", "headersHelper": "/opt/bin/get-headers.sh"}
  },
  "version": 2
}`,
		want: []got{
			{Ref: "claude-code-project:api", Transport: TransportHTTP, URL: "https://api.example.com/mcp"},
			{Ref: "claude-code-project:db", Transport: TransportStdio, Command: "${HOME}/bin/db-mcp",
				Args: []string{"--dsn", "${DB_URL:-postgres://localhost/dev}"}, Env: map[string]string{}},
		},
		warnings: []string{
			`.mcp.json:4: server "socket": unknown type "websocket"; skipped`,
			`.mcp.json:5: server "api": headersHelper runs a command`,
			`.mcp.json:7: unknown top-level field "version"`,
		},
	}, {
		name: "vs code workspace, with comments, trailing commas and inputs",
		path: "/home/ada/proj/.vscode/mcp.json",
		content: `{
  // 💡 Inputs are prompted on first server start, then stored securely by VS Code.
  "inputs": [
    {"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true},
  ],
  "servers": {
    // https://github.com/ppl-ai/modelcontextprotocol/
    "Perplexity": {
      "type": "stdio",
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "PERPLEXITY_API_KEY", "mcp/perplexity-ask"],
      "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"},
    },
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]},
    "my-remote-server": {"type": "sse", "url": "http://api.contoso.com/sse", "headers": {"VERSION": "1.2"}, "oauth": {"clientId": "c"}},
    "memory": {
      "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
      "envFile": "${workspaceFolder}/.env", "sandboxEnabled": true,
      "dev": {"watch": "src/**/*.ts"},
    },
  },
}`,
		want: []got{
			{Ref: "vscode-project:fetch", Transport: TransportStdio, Command: "uvx", Args: []string{"mcp-server-fetch"}},
			{Ref: "vscode-project:memory", Transport: TransportStdio, Command: "npx",
				Args: []string{"-y", "@modelcontextprotocol/server-memory"}, EnvFile: "${workspaceFolder}/.env"},
			{Ref: "vscode-project:my-remote-server", Transport: TransportSSE, URL: "http://api.contoso.com/sse",
				Headers: map[string]string{"VERSION": "1.2"}},
			{Ref: "vscode-project:Perplexity", Transport: TransportStdio, Command: "docker",
				Args: []string{"run", "-i", "--rm", "-e", "PERPLEXITY_API_KEY", "mcp/perplexity-ask"},
				Env:  map[string]string{"PERPLEXITY_API_KEY": "${input:perplexity-key}"}},
		},
		warnings: []string{`mcp.json:15: server "my-remote-server": oauth names an OAuth client`,
			`mcp.json:18: server "memory": sandboxEnabled asks for a sandbox`},
	}, {
		name:    "vs code user mcp.json",
		path:    "/home/ada/.config/Code/User/mcp.json",
		content: `{"servers": {"context7": {"type": "http", "url": "https://mcp.context7.com/mcp"}}}`,
		want:    []got{{Ref: "vscode:context7", Transport: TransportHTTP, URL: "https://mcp.context7.com/mcp"}},
	}, {
		name: "vs code user settings.json",
		path: "/home/ada/.config/Code/User/settings.json",
		content: `// settings.json
{
    "editor.fontSize": 14,
    "mcp": {
        "servers": {
            "my-mcp-server": {"type": "stdio", "command": "my-command", "args": []}
        }
    },
}`,
		want: []got{{Ref: "vscode-settings:my-mcp-server", Transport: TransportStdio, Command: "my-command", Args: []string{}}},
	}, {
		name: "cursor user",
		path: "/home/ada/.cursor/mcp.json",
		content: `{
  "mcpServers": {
    "userjot": {"url": "https://api.userjot.com/v1/mcp", "headers": {"Authorization": "Bearer ${env:USERJOT_API_TOKEN}"},
                "auth": {"CLIENT_ID": "${env:USERJOT_CLIENT_ID}", "scopes": ["read"]}},
    "both": {"command": "npx", "url": "https://example.com/mcp"}
  }
}`,
		want: []got{{Ref: "cursor:userjot", Transport: TransportAuto, URL: "https://api.userjot.com/v1/mcp",
			Headers: map[string]string{"Authorization": "Bearer ${env:USERJOT_API_TOKEN}"}}},
		warnings: []string{`mcp.json:4: server "userjot": auth names an OAuth client`,
			`mcp.json:5: server "both": has both a command and a URL and no type to choose; skipped`},
	}, {
		name: "cursor project",
		path: "/home/ada/proj/.cursor/mcp.json",
		content: `{"mcpServers": {"oci": {"type": "stdio", "command": "uvx", "args": ["oracle.oci-api-mcp-server"],
  "env": {"OCI_CONFIG_PROFILE": "DEFAULT", "FASTMCP_LOG_LEVEL": "ERROR"}, "envFile": ".env"}}}`,
		want: []got{{Ref: "cursor-project:oci", Transport: TransportStdio, Command: "uvx", Args: []string{"oracle.oci-api-mcp-server"},
			Env: map[string]string{"OCI_CONFIG_PROFILE": "DEFAULT", "FASTMCP_LOG_LEVEL": "ERROR"}, EnvFile: ".env"}},
	}, {
		name: "windsurf",
		path: "/home/ada/.codeium/windsurf/mcp_config.json",
		content: `{
  "mcpServers": {
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"}
    },
    "zapier": {"serverUrl": "https://actions.zapier.com/mcp/KEY/sse", "headers": {"Authorization": "Bearer ${file:~/.zapier-token}"}},
    "ollama": {"command": "py", "args": ["-m", "mcp_ollama_python"], "disabled": true, "env": {}}
  }
}`,
		want: []got{
			{Ref: "windsurf:github", Transport: TransportStdio, Command: "docker",
				Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
				Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"}},
			{Ref: "windsurf:ollama", Transport: TransportStdio, Command: "py", Args: []string{"-m", "mcp_ollama_python"},
				Env: map[string]string{}, Disabled: true},
			{Ref: "windsurf:zapier", Transport: TransportAuto, URL: "https://actions.zapier.com/mcp/KEY/sse",
				Headers: map[string]string{"Authorization": "Bearer ${file:~/.zapier-token}"}},
		},
	}, {
		name: "codex",
		path: "/home/ada/.codex/config.toml",
		content: `model = "o4-mini"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]
env = { "MY_ENV_VAR" = "MY_ENV_VALUE" }
env_vars = ["API_KEY2"]
cwd = "/home/ada/code/context7"
startup_timeout_sec = 20

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }
env_http_headers = { "X-Org" = "FIGMA_ORG" }
oauth = { client_id = "mcpx-test-client" }

[mcp_servers.chrome_devtools]
url = "http://localhost:3000/mcp"
enabled_tools = ["open", "screenshot"]
enabled = false
tool_timeout_sec = 45
supports_parallel_tool_calls = true
name = "Chrome DevTools"

[mcp_servers.chrome_devtools.tools.open]
approval_mode = "approve"

[mcp_servers.odd]
command = "odd-server"
colour = "blue"
`,
		want: []got{
			{Ref: "codex:chrome_devtools", Transport: TransportAuto, URL: "http://localhost:3000/mcp", Timeout: 45 * time.Second, Disabled: true},
			{Ref: "codex:context7", Transport: TransportStdio, Command: "npx", Args: []string{"-y", "@upstash/context7-mcp"},
				Env: map[string]string{"MY_ENV_VAR": "MY_ENV_VALUE"}, Cwd: "/home/ada/code/context7"},
			{Ref: "codex:figma", Transport: TransportAuto, URL: "https://mcp.figma.com/mcp",
				Headers: map[string]string{"X-Figma-Region": "us-east-1"}},
			{Ref: "codex:odd", Transport: TransportStdio, Command: "odd-server"},
		},
		warnings: []string{`config.toml:11: server "figma": oauth names an OAuth client that mcpx does not take from the file; give its client ID with --client-id`,
			`config.toml:29: server "odd": unknown field "colour"`},
	}, {
		name: "codex, the system file",
		path: "/etc/codex/config.toml",
		content: `[mcp_servers.fleet]
command = "fleet-mcp"
`,
		want: []got{{Ref: "codex-system:fleet", Transport: TransportStdio, Command: "fleet-mcp"}},
	}, {
		name: "gemini",
		path: "/home/ada/.gemini/settings.json",
		content: `{
  "theme": "Dracula",
  "mcp": {"excluded": ["experimental"]},
  "mcpServers": {
    "pythonTools": {
      "command": "python", "args": ["-m", "my_mcp_server", "--port", "8080"], "cwd": "./mcp-servers/python",
      "env": {"DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "${EXTERNAL_API_KEY}"}, "timeout": 15000
    },
    "httpServerWithAuth": {"httpUrl": "http://localhost:3000/mcp", "headers": {"Authorization": "Bearer your-api-token"}, "timeout": 5000},
    "sseServer": {"url": "https://api.example.com/sse", "type": "sse", "trust": false},
    "remote": {"url": "https://api.example.com/mcp"},
    "typed": {"url": "https://api.example.com/mcp", "type": "http"},
    "both": {"url": "https://api.example.com/mcp", "command": "ignored"},
    "experimental": {"command": "exp", "includeTools": ["safe_tool"]},
    "gcp": {"httpUrl": "https://my-gcp-service.run.app/mcp", "authProviderType": "google_credentials", "oauth": {"scopes": ["s"]}},
    "discovered": {"httpUrl": "https://example.com/mcp", "authProviderType": "dynamic_discovery"}
  }
}`,
		want: []got{
			{Ref: "gemini:both", Transport: TransportAuto, URL: "https://api.example.com/mcp"},
			{Ref: "gemini:discovered", Transport: TransportHTTP, URL: "https://example.com/mcp"},
			{Ref: "gemini:experimental", Transport: TransportStdio, Command: "exp", Disabled: true},
			{Ref: "gemini:gcp", Transport: TransportHTTP, URL: "https://my-gcp-service.run.app/mcp"},
			{Ref: "gemini:httpServerWithAuth", Transport: TransportHTTP, URL: "http://localhost:3000/mcp",
				Headers: map[string]string{"Authorization": "Bearer your-api-token"}, Timeout: 5 * time.Second},
			{Ref: "gemini:pythonTools", Transport: TransportStdio, Command: "python", Args: []string{"-m", "my_mcp_server", "--port", "8080"},
				Cwd: "./mcp-servers/python", Env: map[string]string{"DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "${EXTERNAL_API_KEY}"}, Timeout: 15 * time.Second},
			{Ref: "gemini:remote", Transport: TransportAuto, URL: "https://api.example.com/mcp"},
			{Ref: "gemini:sseServer", Transport: TransportSSE, URL: "https://api.example.com/sse"},
			{Ref: "gemini:typed", Transport: TransportHTTP, URL: "https://api.example.com/mcp"},
		},
		warnings: []string{`settings.json:13: server "both": has url and command; url is used, as Gemini CLI does`,
			`settings.json:15: server "gcp": authProviderType asks for Google credentials`},
	}, {
		name: "zed, today's form and the older ones",
		path: "/home/ada/.config/zed/settings.json",
		content: `// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "theme": "One Dark",
  "context_servers": {
    "local-mcp-server": {"command": "some-command", "args": ["arg-1", "arg-2"], "env": {}},
    "remote-mcp-server": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer <token>"}},
    "custom": {"source": "custom", "command": "other-command", "args": []},
    "legacy": {"command": {"path": "legacy-command", "args": ["a"], "env": {"K": "V"}}, "settings": {}},
    "postgres-context-server": {"source": "extension", "settings": {"database_url": "postgresql://localhost"}},
    "off": {"command": "x", "enabled": false},
    "odd": {"command": "x", "enabled": "yes"},
  },
}`,
		want: []got{
			{Ref: "zed:custom", Transport: TransportStdio, Command: "other-command", Args: []string{}},
			{Ref: "zed:legacy", Transport: TransportStdio, Command: "legacy-command", Args: []string{"a"}, Env: map[string]string{"K": "V"}},
			{Ref: "zed:local-mcp-server", Transport: TransportStdio, Command: "some-command", Args: []string{"arg-1", "arg-2"}, Env: map[string]string{}},
			{Ref: "zed:odd", Transport: TransportStdio, Command: "x"}, // a wrong type is ignored: not "false"
			{Ref: "zed:off", Transport: TransportStdio, Command: "x", Disabled: true},
			{Ref: "zed:remote-mcp-server", Transport: TransportAuto, URL: "https://example.com/mcp",
				Headers: map[string]string{"Authorization": "Bearer <token>"}},
		},
		warnings: []string{`settings.json:12: server "postgres-context-server": comes from a Zed extension`,
			`settings.json:14: server "odd": field "enabled" has the wrong type (a string), ignored`},
	}, {
		name: "mcpx's own file",
		path: "/home/ada/.config/mcpx/servers.json",
		content: `{
  // pasted from .mcp.json
  "mcpServers": {
    "everything": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "cwd": "~"},
    "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
    "typo": {"command": "x", "arg": ["y"]},
    "wrong": {"command": "x", "args": "y"}
  }
}`,
		want: []got{
			{Ref: "mcpx:everything", Transport: TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}, Cwd: "~"},
			{Ref: "mcpx:remote", Transport: TransportAuto, URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"}},
			{Ref: "mcpx:typo", Transport: TransportStdio, Command: "x"},
			{Ref: "mcpx:wrong", Transport: TransportStdio, Command: "x"},
		},
		warnings: []string{
			`servers.json:6: server "typo": unknown field "arg", ignored`,
			`servers.json:7: server "wrong": field "args" has the wrong type (a string)`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := load(t, linuxEnv(mapFS{tt.path: tt.content}, nil))
			var have []got
			for _, s := range c.Servers {
				have = append(have, project(s))
			}
			diff(t, tt.want, have)
			checkWarnings(t, c.Warnings, tt.warnings...)
			for _, s := range c.Servers {
				if s.Source.Path != tt.path {
					t.Errorf("%s: source path %q", s.Ref(), s.Source.Path)
				}
				if len(s.Hash) != 64 {
					t.Errorf("%s: hash %q", s.Ref(), s.Hash)
				}
			}
		})
	}
}

// Gemini CLI's mcp.excluded and mcp.allowed apply to the servers of all
// its settings files: every excluded name is off, and with allowed lists
// only the names in all of them (compared without case) are on.
func TestGeminiNameLists(t *testing.T) {
	const user, proj = "/home/ada/.gemini/settings.json", "/home/ada/proj/.gemini/settings.json"
	tests := []struct {
		name  string
		files mapFS
		want  map[string]bool // Ref → Disabled
		warns []string
	}{{
		name: "allowed in both files, excluded in the project's",
		files: mapFS{
			user: `{"mcp": {"allowed": ["a", "B", "c"]},
			        "mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}, "c": {"command": "x"}, "d": {"command": "x"}}}`,
			proj: `{"mcp": {"allowed": ["A", "c", "e"], "excluded": ["c"]}, "mcpServers": {"e": {"command": "x"}}}`,
		},
		want: map[string]bool{"gemini:a": false, "gemini:b": true, "gemini:c": true, "gemini:d": true, "gemini-project:e": true},
	}, {
		name: "excluded by the user's file, a file without servers",
		files: mapFS{
			user: `{"mcp": {"excluded": ["e"]}}`,
			proj: `{"mcpServers": {"e": {"command": "x"}, "f": {"command": "x"}}}`,
		},
		want: map[string]bool{"gemini-project:e": true, "gemini-project:f": false},
	}, {
		name: "the system files: their servers, and their lists",
		files: mapFS{
			user:                                   `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}}}`,
			"/etc/gemini-cli/settings.json":        `{"mcp": {"excluded": ["a"]}, "mcpServers": {"s": {"command": "x"}}}`,
			"/etc/gemini-cli/system-defaults.json": `{"mcpServers": {"d": {"command": "x"}}}`,
		},
		want: map[string]bool{"gemini:a": true, "gemini:b": false, "gemini-system:s": false, "gemini-system-defaults:d": false},
	}, {
		name: "turned off by gemini mcp disable, whatever the case",
		files: mapFS{
			user: `{"mcpServers": {"Foo": {"command": "x"}, "bar": {"command": "x"}}}`,
			proj: `{"mcpServers": {"baz": {"command": "x"}, "qux": {"command": "x"}}}`,
			"/home/ada/.gemini/mcp-server-enablement.json": `{"foo": {"enabled": false}, "bar": {"enabled": true}, "qux": {"enabled": false}, "odd": 1}`,
		},
		want: map[string]bool{"gemini:Foo": true, "gemini:bar": false, "gemini-project:baz": false, "gemini-project:qux": true},
	}, {
		name: "an enablement file that is not an object",
		files: mapFS{
			user: `{"mcpServers": {"a": {"command": "x"}}}`,
			"/home/ada/.gemini/mcp-server-enablement.json": `["a"]`,
		},
		want:  map[string]bool{"gemini:a": false},
		warns: []string{"mcp-server-enablement.json: is not a JSON object; the servers gemini mcp disable turned off are not known"},
	}, {
		name: "an empty allowed list turns nothing off",
		files: mapFS{
			user: `{"mcp": {"allowed": []}, "mcpServers": {"a": {"command": "x"}}}`,
		},
		want: map[string]bool{"gemini:a": false},
	}, {
		name: "another application's server of an excluded name stays on",
		files: mapFS{
			user:                         `{"mcp": {"excluded": ["a"], "allowed": ["b"]}}`,
			"/home/ada/.cursor/mcp.json": `{"mcpServers": {"a": {"command": "x"}, "c": {"command": "x"}}}`,
		},
		want: map[string]bool{"cursor:a": false, "cursor:c": false},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := load(t, linuxEnv(tt.files, nil))
			have := map[string]bool{}
			for _, s := range c.Servers {
				have[s.Ref()] = s.Disabled
			}
			diff(t, tt.want, have)
			checkWarnings(t, c.Warnings, tt.warns...)
		})
	}
}

// Claude Code does not start the .mcp.json servers its settings reject
// (disabledMcpjsonServers, in any settings file or in the workspace's
// entry of ~/.claude.json), nor those /mcp turned off in the workspace
// (disabledMcpServers), whatever their scope.
func TestClaudeCodeRules(t *testing.T) {
	files := mapFS{
		"/home/ada/.claude.json": `{"mcpServers": {"u": {"command": "x"}, "toggled": {"command": "x"}},
			"projects": {
			  "/home/ada/proj": {"mcpServers": {"l": {"command": "x"}}, "disabledMcpjsonServers": ["p2"], "disabledMcpServers": ["toggled", "l"]},
			  "/elsewhere": {"disabledMcpServers": ["u"], "disabledMcpjsonServers": ["p4"]}}}`,
		"/home/ada/proj/.mcp.json": `{"mcpServers": {"p1": {"command": "x"}, "p2": {"command": "x"}, "p3": {"command": "x"},
			"p4": {"command": "x"}, "u": {"command": "x"}}}`,
		"/home/ada/.claude/settings.json":            `{"disabledMcpjsonServers": ["p1", "u"]}`,
		"/home/ada/proj/.claude/settings.json":       `{"disabledMcpjsonServers": ["p3"]}`,
		"/home/ada/proj/.claude/settings.local.json": `{"enabledMcpjsonServers": ["p4"]}`,
		"/home/ada/.cursor/mcp.json":                 `{"mcpServers": {"p1": {"command": "x"}}}`,
	}
	c := load(t, linuxEnv(files, nil))
	have := map[string]bool{}
	for _, s := range c.Servers {
		have[s.Ref()] = s.Disabled
	}
	diff(t, map[string]bool{
		"claude-code:u": false, "claude-code:toggled": true, "claude-code-local:l": true,
		"claude-code-project:p1": true, "claude-code-project:p2": true, "claude-code-project:p3": true,
		"claude-code-project:p4": false, "claude-code-project:u": true, "cursor:p1": false,
	}, have)
	checkWarnings(t, c.Warnings)

	// CLAUDE_CONFIG_DIR holds the user's settings.
	files["/opt/claude/settings.json"] = `{"disabledMcpjsonServers": ["p4"]}`
	c = load(t, linuxEnv(files, map[string]string{"CLAUDE_CONFIG_DIR": "/opt/claude"}))
	for _, s := range c.Servers {
		if want := s.Name == "p3" || s.Name == "p4"; s.Disabled != want {
			t.Errorf("with CLAUDE_CONFIG_DIR: %s disabled = %v", s.Ref(), s.Disabled)
		}
	}
}

// A file that does not parse is a warning naming it and the line; the
// other files still load.
func TestMalformedFileIsAWarning(t *testing.T) {
	files := mapFS{
		"/home/ada/.cursor/mcp.json":      "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {}\n  }\n}",
		"/home/ada/.codex/config.toml":    "[mcp_servers.c]\ncommand = \"x\"\nargs = [\n",
		"/home/ada/.gemini/settings.json": `{"mcpServers": {"ok": {"command": "ok"}}}`,
		"/home/ada/.claude.json":          `[1, 2]`,
		"/home/ada/proj/.mcp.json":        `{"mcpServers": ["not", "an", "object"]}`,
		// Comments keep the line of the error right.
		"/home/ada/.codeium/windsurf/mcp_config.json": "/* é\n ü */ // x\n{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",} \"b\": {}\n}}",
	}
	c := load(t, linuxEnv(files, nil))
	if len(c.Servers) != 1 || c.Servers[0].Ref() != "gemini:ok" {
		t.Errorf("servers: %v", c.Servers)
	}
	checkWarnings(t, c.Warnings,
		"/home/ada/.cursor/mcp.json:4: not valid JSON",
		"/home/ada/.codex/config.toml:3: not valid TOML",
		"/home/ada/.claude.json:1: is not a JSON object", // once, though read for the user and the local scope
		"/home/ada/proj/.mcp.json:1: mcpServers is not an object",
		"/home/ada/.codeium/windsurf/mcp_config.json:4: not valid JSON",
	)
	found := 0
	for _, f := range c.Files {
		if f.Found {
			found++
		}
	}
	if found != 7 {
		t.Errorf("found %d files, want 7: %+v", found, c.Files)
	}
}

// Two entries of one name in one file: the last one counts, as in the
// JSON decoders of the applications.
func TestDuplicateEntry(t *testing.T) {
	c := load(t, linuxEnv(mapFS{"/home/ada/.cursor/mcp.json": `{"mcpServers": {
  "a": {"command": "first"},
  "a": {"command": "second", "command": "third"}
}}`}, nil))
	if len(c.Servers) != 1 || c.Servers[0].Command != "third" {
		t.Fatalf("servers: %+v", c.Servers)
	}
	checkWarnings(t, c.Warnings, `mcp.json:3: server "a": field "command" is given twice`, `mcp.json:3: server "a": is defined twice`)
}

// Whatever a file holds, reading it never panics, and every server read
// is complete for its transport.
func FuzzReadFile(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"a": {"command": "x", "args": ["y"], "env": {"K": 1}}}}`,
		`{"servers": {"a": {"type": "http", "url": "u", "headers": {"h": "v"}}}, "inputs": [{"id": "i", "type": "pickString", "options": ["a", {"value": "b"}]}]}`,
		`{"context_servers": {"a": {"command": {"path": "p", "args": [1]}}}}`,
		`{"projects": {"/home/ada/proj": {"mcpServers": {"a": {"command": "x"}}}}}`,
		`{"mcp": {"servers": {"a": {"command": "x"}}, "excluded": ["a"]}, "mcpServers": {"a": {"httpUrl": "h", "url": "u", "command": "c"}}}`,
		`{"mcp": {"allowed": ["a", 1], "excluded": "a"}, "mcpServers": {"a": {"command": "x"}}}`,
		"[mcp_servers.a]\ncommand = \"x\"\nenv = { K = 1 }\n[mcp_servers.b]\nurl = \"u\"\nenv_http_headers = { H = \"V\" }\n",
		`{"mcpServers": {"a": {"serverUrl": "s", "url": "u", "disabled": true}}}`,
		`{"mcpServers": {"a": null, "b": [], "c": {"type": 1}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		env := linuxEnv(nil, nil)
		for _, l := range env.locations() {
			var list []*Server
			if l.toml {
				// Alone, and over a layer of Codex's that defines a
				// server of each transport.
				base, _ := readTOML(location{Source: l.Source, dialect: l.dialect, toml: true},
					[]byte("[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.b]\nurl = \"u\"\n"))
				layer, _ := readTOML(l, []byte(content))
				layer.loc.codexLayer = 1
				list, _, _ = mergeCodex([]*codexLayer{layer})
				over, _, _ := mergeCodex([]*codexLayer{layer, base})
				list = append(list, over...)
			} else {
				list, _, _ = readJSON(env, l, &jsonDoc{data: []byte(content)})
			}
			for _, s := range list {
				switch {
				case s.Transport == TransportStdio && (s.Command == "" || s.URL != ""):
					t.Fatalf("%s: stdio server %+v", l.ID, s)
				case s.Transport.IsHTTP() && (s.URL == "" || s.Command != ""):
					t.Fatalf("%s: HTTP server %+v", l.ID, s)
				case s.Transport != TransportStdio && !s.Transport.IsHTTP():
					t.Fatalf("%s: transport %q", l.ID, s.Transport)
				}
			}
		}
	})
}

// TestTOMLErrorHidesValues: a Codex file with a value written without
// quotes was reported with the value quoted ('expected value but found
// "sekrit" instead'): a token, shown by mcpx servers -v.
func TestTOMLErrorHidesValues(t *testing.T) {
	c := load(t, linuxEnv(mapFS{
		"/home/ada/.codex/config.toml": "[mcp_servers.a]\ncommand = \"x\"\nhttp_headers = { Authorization = sekrit123 }\n",
	}, nil))
	checkWarnings(t, c.Warnings, `/home/ada/.codex/config.toml:3: not valid TOML: expected value but found "…" instead`)
	for _, w := range c.Warnings {
		if strings.Contains(w.String(), "sekrit") {
			t.Errorf("warning shows the value: %s", w)
		}
	}
}

// An entry's request timeout (Gemini's timeout in milliseconds, Codex's
// tool_timeout_sec in seconds) is read as a duration; one that is not a
// positive number is ignored with a warning, and a huge one is capped.
func TestEntryTimeouts(t *testing.T) {
	env := linuxEnv(mapFS{
		"/home/ada/.gemini/settings.json": `{"mcpServers": {
			"slow": {"command": "a", "timeout": 300000},
			"zero": {"command": "a", "timeout": 0},
			"word": {"command": "a", "timeout": "fast"},
			"huge": {"command": "a", "timeout": 1e300}}}`,
		"/home/ada/.codex/config.toml": "[mcp_servers.half]\ncommand = \"b\"\ntool_timeout_sec = 0.5\n",
	}, nil)
	c := load(t, env)
	checkWarnings(t, c.Warnings,
		`server "word": field "timeout" has the wrong type (a string), ignored`,
		`server "zero": timeout is not a positive number, ignored`)
	want := map[string]time.Duration{"slow": 5 * time.Minute, "zero": 0, "word": 0, "huge": 365 * 24 * time.Hour, "half": 500 * time.Millisecond}
	for _, s := range c.Servers {
		if s.Timeout != want[s.Name] {
			t.Errorf("%s: timeout %v, want %v", s.Ref(), s.Timeout, want[s.Name])
		}
	}
}

// A server another file's list turns off says which list did
// (DisabledReason): mcpx servers shows it.
func TestNameListsSayWhy(t *testing.T) {
	c := load(t, linuxEnv(mapFS{
		"/home/ada/.gemini/settings.json": `{"mcp": {"allowed": ["a", "b"], "excluded": ["b"]},
			"mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}, "c": {"command": "x"}}}`,
		"/home/ada/proj/.gemini/settings.json":         `{"mcpServers": {"d": {"command": "x"}}}`,
		"/home/ada/.gemini/mcp-server-enablement.json": `{"a": {"enabled": false}}`,
		"/home/ada/.claude.json":                       `{"projects": {"/home/ada/proj": {"disabledMcpServers": ["e"], "disabledMcpjsonServers": ["f"]}}, "mcpServers": {"e": {"command": "x"}}}`,
		"/home/ada/proj/.mcp.json":                     `{"mcpServers": {"f": {"command": "x"}, "g": {"command": "x"}}}`,
	}, nil))
	diff(t, []string{
		"gemini:a (disabled: turned off with gemini mcp disable)",
		"gemini:b (disabled: excluded by Gemini CLI's mcp.excluded (/home/ada/.gemini/settings.json))",
		"gemini:c (disabled: not in Gemini CLI's mcp.allowed)",
		"gemini-project:d (disabled: not in Gemini CLI's mcp.allowed)",
		"claude-code:e (disabled: turned off in Claude Code (/mcp) for this project)",
		"claude-code-project:f (disabled: rejected by Claude Code's disabledMcpjsonServers)",
		"claude-code-project:g",
	}, disabledList(c))
}
