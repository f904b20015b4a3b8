package inspector

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpx-dev/mcpx/internal/userfile"
)

// answerFileLimit bounds what an answer file (--on-elicit file:PATH,
// --on-sampling file:PATH) may hold: a form's values or a model's replies
// are small, and a path to something endless (/dev/zero, a pipe that
// never ends) must not fill memory.
const answerFileLimit = 16 << 20

// readAnswerFile reads an answer file, up to answerFileLimit bytes. A
// named pipe's wait for its writer ends with ctx, and onWait (when not
// nil) is told of it after a second (see userfile.Read).
func readAnswerFile(ctx context.Context, name string, onWait func(path string)) ([]byte, error) {
	data, err := userfile.Read(ctx, name, answerFileLimit, onWait)
	var tooLarge *userfile.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("%s is larger than %d MiB, more than any answer holds", name, answerFileLimit>>20)
	}
	return data, err
}
