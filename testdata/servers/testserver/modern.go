package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// runTasks serves the raw 2026-07-28 server with the tasks extension;
// $TEST_LISTEN_END says how it ends subscriptions, and $TEST_LISTEN_STRAY
// (not empty) makes it send notifications outside them (see RawModern).
func runTasks(in io.Reader) error {
	return (&testservers.RawModern{ListenEnd: os.Getenv("TEST_LISTEN_END"), Stray: os.Getenv("TEST_LISTEN_STRAY") != ""}).ServeStdio(in)
}

// runSilentLegacy is a handshake-era server that, like some real ones,
// answers nothing that comes before initialize. After the handshake it
// answers tools/list and ping.
func runSilentLegacy(in io.Reader) error {
	sc := bufio.NewScanner(in)
	initialized := false
	for sc.Scan() {
		var m rawMsg
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &m) != nil || m.ID == nil {
			continue
		}
		switch {
		case m.Method == "initialize":
			initialized = true
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"silent-legacy","version":"1.0"}}}`+"\n", m.ID)
		case !initialized:
			// Silence, as promised.
		case m.Method == "tools/list":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"hello","inputSchema":{"type":"object"}}]}}`+"\n", m.ID)
		default:
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", m.ID)
		}
	}
	return sc.Err()
}
