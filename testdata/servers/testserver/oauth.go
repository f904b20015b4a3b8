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
	return serveUntilSignal(urlFile, srv.MCPURL)
}

// runModernHTTP serves the modern Go SDK server over stateless Streamable
// HTTP (changed: with the regressed echo tool).
func runModernHTTP(urlFile string, changed bool) error {
	srv := testservers.NewModernServer(nil, nil)
	if changed {
		testservers.ChangeEcho(srv)
	}
	u, stop, err := testservers.ServeModern(srv)
	if err != nil {
		return err
	}
	defer stop()
	return serveUntilSignal(urlFile, u)
}

// runFaultsHTTP serves testservers.Faults, logging to $TEST_LOG.
func runFaultsHTTP(urlFile string) error {
	f, stop, err := testservers.ServeFaults(logOrDiscard(logFile))
	if err != nil {
		return err
	}
	defer stop()
	return serveUntilSignal(urlFile, f.URL)
}

// runUnixHTTP serves testservers.ServeUnix on a socket in a directory of
// its own: short, as a socket's path must be (the script's $WORK may not
// be), logging to $TEST_LOG.
func runUnixHTTP(urlFile string) error {
	dir, err := os.MkdirTemp("", "mx")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s.sock")
	stop, err := testservers.ServeUnix(sock, logOrDiscard(logFile))
	if err != nil {
		return err
	}
	defer stop()
	return serveUntilSignal(urlFile, "unix://"+sock)
}

// serveUntilSignal writes url to urlFile (atomically) and waits for
// SIGINT or SIGTERM.
func serveUntilSignal(urlFile, url string) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	tmp := filepath.Join(filepath.Dir(urlFile), "."+filepath.Base(urlFile)+".tmp")
	if err := os.WriteFile(tmp, []byte(url+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, urlFile); err != nil {
		return err
	}
	<-sigs
	return nil
}
