package apps

import "time"

// bucket is a token bucket: rate tokens a second, at most burst saved.
// A view's messages each take a token; those that find none are refused
// (spec "Other risks": "Hosts should implement resource limits").
type bucket struct {
	rate, burst float64
	tokens      float64
	last        time.Time
}

func newBucket(rate float64, burst int) bucket {
	return bucket{rate: rate, burst: float64(burst), tokens: float64(burst)}
}

// allow takes a token at now, reporting whether there was one.
func (b *bucket) allow(now time.Time) bool {
	if !b.last.IsZero() {
		b.tokens += now.Sub(b.last).Seconds() * b.rate
		if b.tokens > b.burst {
			b.tokens = b.burst
		}
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
