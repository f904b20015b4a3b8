package cmd

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/transport"
)

// sizeValue is a flag holding a number of bytes, given plainly (1048576)
// or with a unit: KiB, MiB, GiB, TiB are powers of 1024, KB, MB, GB, TB
// (and K, M, G, T) powers of 1000; case and a space before the unit do not
// matter, and a fraction is allowed (1.5GiB).
type sizeValue struct{ n *int64 }

func newSizeValue(p *int64, def int64) *sizeValue {
	*p = def
	return &sizeValue{n: p}
}

func (v *sizeValue) String() string { return transport.FormatSize(*v.n) }

func (v *sizeValue) Type() string { return "SIZE" }

func (v *sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*v.n = n
	return nil
}

// sizeUnit returns the bytes of the (lower-case) unit u of a size. (A
// switch, not a map built when mcpx starts: few runs give a size.)
func sizeUnit(u string) (float64, bool) {
	switch u {
	case "", "b":
		return 1, true
	case "k", "kb":
		return 1e3, true
	case "m", "mb":
		return 1e6, true
	case "g", "gb":
		return 1e9, true
	case "t", "tb":
		return 1e12, true
	case "kib":
		return 1 << 10, true
	case "mib":
		return 1 << 20, true
	case "gib":
		return 1 << 30, true
	case "tib":
		return 1 << 40, true
	}
	return 0, false
}

// parseSize parses a positive size in bytes (see sizeValue).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnit(unit)
	if num == "" || !ok {
		return 0, fmt.Errorf("%q is not a size: give bytes or a number with a unit, e.g. 100MiB, 256MB or 1G", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size: %w", s, errors.Unwrap(err))
	}
	f = math.Floor(f * mult)
	switch {
	case f < 1:
		return 0, fmt.Errorf("%q: the size must be at least 1 byte", s)
	case f > math.MaxInt64/2:
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(f), nil
}
