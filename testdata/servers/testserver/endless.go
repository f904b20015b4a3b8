package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
)

// runEndless waits for the first request, then writes the start of an
// answer that never ends: no newline ever comes, however much the client
// reads. It stops when stdout is closed.
func runEndless(in io.Reader) error {
	if _, err := bufio.NewReader(in).ReadString('\n'); err != nil {
		return err
	}
	go func() { _, _ = io.Copy(io.Discard, in) }() // keep logging what arrives
	if _, err := os.Stdout.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"padding":"`); err != nil {
		return nil
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for {
		if _, err := os.Stdout.Write(chunk); err != nil {
			return nil // mcpx went away: what a server does
		}
	}
}
