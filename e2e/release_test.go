package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// scripts/release builds binaries that say their release version, with
// SHA256SUMS that match them, refuses a version that is not one and never
// mixes its output with an existing directory.
func TestReleaseScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	t.Parallel()
	script, err := filepath.Abs("../scripts/release")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "dist")
	target := runtime.GOOS + "/" + runtime.GOARCH
	release := func(args ...string) (string, error) {
		c := exec.Command(script, args...)
		c.Env = append(os.Environ(), "MCPX_RELEASE_TARGETS="+target)
		b, err := c.CombinedOutput()
		return string(b), err
	}
	for _, bad := range []string{"v1.2.3", "1.2", "latest"} {
		if msg, err := release(bad, out); err == nil || !strings.Contains(msg, "is not a semantic version") {
			t.Errorf("release %s: %v\n%s", bad, err, msg)
		}
	}
	if msg, err := release("1.2.3-rc.1", out); err != nil {
		t.Fatalf("release: %v\n%s", err, msg)
	}
	name := "mcpx_1.2.3-rc.1_" + runtime.GOOS + "_" + runtime.GOARCH
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	bin := filepath.Join(out, name)
	got, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "mcpx version 1.2.3-rc.1\n" {
		t.Errorf("--version of the release binary: %q", got)
	}
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := hex.EncodeToString(sum[:]) + "  " + name + "\n"; string(sums) != want {
		t.Errorf("SHA256SUMS = %q, want %q", sums, want)
	}
	if msg, err := release("1.2.4", out); err == nil || !strings.Contains(msg, "exists") {
		t.Errorf("release into an existing directory: %v\n%s", err, msg)
	}
}
