// Command minclient is the baseline for mcpx's one-shot cost: the least a
// client can do to list a stdio server's tools. It starts the server,
// initializes, lists tools, prints the reply and kills the server at once.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: minclient <server command> [args...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	r := bufio.NewReaderSize(out, 1<<20)
	waitFor := func(id string) []byte {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				cmd.Process.Kill()
				os.Exit(4)
			}
			if bytes.Contains(line, []byte(`"id":`+id)) {
				return line
			}
		}
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"minclient","version":"0"}}}`)
	waitFor("1")
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	os.Stdout.Write(waitFor("2"))
	cmd.Process.Kill()
	cmd.Wait()
}
