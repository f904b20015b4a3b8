package inspector

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/pkg/browser"
)

var browserOnce sync.Once

// openBrowser opens u in the person's browser: the $BROWSER command when
// set (a colon-separated list, tried in order; "%s" stands for the URL),
// else the platform's opener through pkg/browser. It never fetches the URL
// itself. Only called after the person consented.
func openBrowser(u string) error {
	if env := os.Getenv("BROWSER"); env != "" {
		var errs []string
		for _, c := range strings.Split(env, ":") {
			fields := strings.Fields(c)
			if len(fields) == 0 {
				continue
			}
			args := fields[1:]
			substituted := false
			for i, a := range args {
				if strings.Contains(a, "%s") {
					args[i] = strings.ReplaceAll(a, "%s", u)
					substituted = true
				}
			}
			if !substituted {
				args = append(args, u)
			}
			cmd := exec.Command(fields[0], args...)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Start(); err != nil {
				errs = append(errs, err.Error())
				continue
			}
			// A browser may run until it is closed: do not wait for it,
			// only reap it.
			go func() { _ = cmd.Wait() }()
			return nil
		}
		return fmt.Errorf("$BROWSER: %s", strings.Join(errs, "; "))
	}
	browserOnce.Do(func() {
		// pkg/browser passes the opener's output through; stdout belongs to
		// mcpx's results.
		browser.Stdout = os.Stderr
	})
	return browser.OpenURL(u)
}
