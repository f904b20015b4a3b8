//go:build windows

package sessiond

import (
	"io/fs"
	"os"
	"strings"
)

// privateModes is false on Windows: file modes say nothing there. The
// session directory lives in the user's own temp directory
// (%LOCALAPPDATA%\Temp), which other users cannot open.
const privateModes = false

// userTag names this user in the temp directory's session directory.
func userTag() string {
	if u := os.Getenv("USERNAME"); u != "" {
		return strings.Map(func(r rune) rune {
			if r == '\\' || r == '/' || r == ':' {
				return '_'
			}
			return r
		}, u)
	}
	return "user"
}

// ownedByMe relies on the directory's ACL on Windows.
func ownedByMe(fs.FileInfo) error { return nil }
