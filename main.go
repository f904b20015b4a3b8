// Command mcpx is a command-line client for talking to, debugging and testing MCP servers.
package main

import (
	"os"

	"github.com/mcpx-dev/mcpx/cmd"
)

func main() { os.Exit(cmd.Main()) }
