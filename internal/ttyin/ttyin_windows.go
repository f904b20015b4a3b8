package ttyin

import (
	"os"

	"golang.org/x/sys/windows"
)

func discard(f *os.File) error {
	return windows.FlushConsoleInputBuffer(windows.Handle(f.Fd()))
}
