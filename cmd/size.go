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

var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// parseSize parses a positive size in bytes (see sizeValue).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
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
