package testwait

import "github.com/mcpx-dev/mcpx/internal/syncbuf"

// Buffer collects output that one goroutine writes (a program under test,
// a terminal's screen) while the test reads it, as For polls: a
// bytes.Buffer is not safe for that. The zero value is ready to use.
type Buffer = syncbuf.Buffer
