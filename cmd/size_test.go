package cmd

import "testing"

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"1": 1, "1048576": 1 << 20, "100MiB": 100 << 20, "100 mib": 100 << 20, "256MB": 256e6, "1G": 1e9,
		"1GiB": 1 << 30, "1.5GiB": 3 << 29, "64k": 64e3, "64KiB": 64 << 10, "2T": 2e12, "10B": 10, " 5 ": 5,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "0", "0.1", "-1", "1XB", "1.2.3", "ten", "1e3", "9999999999TiB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}
