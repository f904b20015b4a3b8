package userfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadRegular(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(context.Background(), name, 5, nil); err != nil || string(b) != "hello" {
		t.Errorf("Read = %q, %v", b, err)
	}
	var tooLarge *TooLargeError
	if _, err := Read(context.Background(), name, 4, nil); !errors.As(err, &tooLarge) || err.Error() != "read "+name+": is larger than 4 bytes" {
		t.Errorf("Read over the limit: %v", err)
	}
	if _, err := Read(context.Background(), filepath.Dir(name), 4, nil); !errors.Is(err, ErrDirectory) {
		t.Errorf("Read of a directory: %v", err)
	}
	if _, err := Read(context.Background(), name+".none", 4, nil); !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "open ") {
		t.Errorf("Read of nothing: %v", err)
	}
	f, err := Open(context.Background(), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestTooLargeMessage(t *testing.T) {
	if got := (&TooLargeError{16 << 20}).Error(); got != "is larger than 16 MiB" {
		t.Errorf("got %q", got)
	}
}

func TestReadEndless(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	var tooLarge *TooLargeError
	if _, err := Read(context.Background(), "/dev/zero", 1<<20, nil); !errors.As(err, &tooLarge) {
		t.Errorf("Read of /dev/zero: %v", err)
	}
	if b, err := Read(context.Background(), "/dev/null", 10, nil); err != nil || len(b) != 0 {
		t.Errorf("Read of /dev/null = %q, %v", b, err)
	}
}
