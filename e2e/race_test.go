//go:build race

package e2e

// The mcpx binary under test is built with -race when the tests are.
func init() { raceEnabled = true }
