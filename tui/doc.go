// Package tui is mcpx's terminal user interface: everything it shows
// people and everything it asks them, on top of the session library
// (package inspector), which prints nothing and asks through an
// interface.
//
//   - Console writes what happens around a request on stderr: notes,
//     warnings, progress, the server's stderr, notifications, server
//     requests and wire frames.
//   - Printer renders results, lists, tables, tool help, JSON (streamed
//     when large), traces and verification reports on stdout.
//   - Escape and EscapeLine keep server-supplied text from acting on the
//     terminal; every renderer escapes what it did not write itself.
//   - Prompter asks questions line by line (from the terminal, or through
//     the REPL's line editor), and Person implements inspector.Person
//     with the conversations of the elicitation and sampling prompts.
package tui
