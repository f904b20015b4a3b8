package main

import (
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// runOAuthHTTP serves an OAuth-protected MCP server (the Go SDK server of
// internal/testservers behind the SDK's bearer token middleware) and a
// test authorization server that approves every request at once. Every
// request needs the scope mcp:tools; refresh tokens are issued. The MCP
// URL goes to urlFile; it serves until SIGINT or SIGTERM.
func runOAuthHTTP(urlFile string) error {
	srv, stop, err := testservers.ServeOAuth(testservers.OAuthOptions{
		RefreshTokens:   true,
		ScopesSupported: []string{"mcp:tools"},
		ListScopes:      []string{"mcp:tools"},
	})
	if err != nil {
		return err
	}
	defer stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	tmp := filepath.Join(filepath.Dir(urlFile), "."+filepath.Base(urlFile)+".tmp")
	if err := os.WriteFile(tmp, []byte(srv.MCPURL+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, urlFile); err != nil {
		return err
	}
	<-sigs
	return nil
}
