package inspector

import (
	"errors"
	"fmt"
)

// ErrProtocolViolation marks an error whose cause is the server's
// departure from the protocol that stopped a request: a result mcpx
// cannot read as the one the method returns (not an object where one is
// required, a resultType it does not know, an input_required result with
// nothing to answer, a task that is not a Task), cursors that go round in
// a loop. Match it with errors.Is: a program (mcpx's exit status, a
// script) can then tell a broken server from a failure of its own. A
// departure mcpx reads past is a warning, not an error, and carries no
// such mark; neither does a JSON-RPC error the server answered with (a
// *jsonrpc.Error), which is the protocol working.
var ErrProtocolViolation = errors.New("the server broke the protocol")

// violationError is an error marked as the server's departure from the
// protocol; its text is the error's own.
type violationError struct{ err error }

func (e *violationError) Error() string        { return e.err.Error() }
func (e *violationError) Unwrap() error        { return e.err }
func (e *violationError) Is(target error) bool { return target == ErrProtocolViolation }

// violation marks err as the server's departure from the protocol (see
// ErrProtocolViolation); nil stays nil.
func violation(err error) error {
	if err == nil {
		return nil
	}
	return &violationError{err: err}
}

// violationf is fmt.Errorf marked as the server's departure from the
// protocol.
func violationf(format string, args ...any) error {
	return violation(fmt.Errorf(format, args...))
}
