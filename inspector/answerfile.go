package inspector

import (
	"fmt"
	"io"
	"os"
)

// answerFileLimit bounds what an answer file (--on-elicit file:PATH,
// --on-sampling file:PATH) may hold: a form's values or a model's replies
// are small, and a path to something endless (/dev/zero, a pipe that
// never ends) must not fill memory.
const answerFileLimit = 16 << 20

// readAnswerFile reads an answer file, up to answerFileLimit bytes.
func readAnswerFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, answerFileLimit+1))
	if err != nil {
		return nil, err
	}
	if len(data) > answerFileLimit {
		return nil, fmt.Errorf("%s is larger than %d MiB, more than any answer holds", name, answerFileLimit>>20)
	}
	return data, nil
}
