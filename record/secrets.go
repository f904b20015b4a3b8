package record

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Secrets are the secret values a caller knows, for Verify to redact
// from the live traffic it compares and reports, and for UpdateTrace from
// the trace it writes, as a recording redacts those it is given
// (RedactOptions.Secrets and Values, Recorder.Secret): the credentials
// the caller sends (a bearer token, the values of credential headers,
// OAuth client secrets), the secret values of the server's command line
// and environment, and those it learns as it goes (the access token OAuth
// presents: Add). A live server may echo any of them (a whoami tool, an
// error quoting the request), and the recording holds "[redacted]" where
// the recorded one did. Safe for concurrent use; nil holds none.
type Secrets struct {
	secrets []string // from minSecret bytes on
	values  []string // from minLearned bytes on

	mu   sync.Mutex
	told []string       // Add's, oldest first
	subs []func(string) // told of each value Add is given (see tell)
	gen  atomic.Uint64
	m    atomic.Pointer[matcher]
}

// NewSecrets returns the set of secrets (looked for from 4 bytes on, as
// RedactOptions.Secrets) and values (from 8 bytes on, as
// RedactOptions.Values).
func NewSecrets(secrets, values []string) *Secrets {
	s := &Secrets{}
	for _, v := range secrets {
		if len(v) >= minSecret {
			s.secrets = append(s.secrets, v)
		}
	}
	for _, v := range values {
		if len(v) >= minLearned && len(v) <= maxLearnedLen {
			s.values = append(s.values, v)
		}
	}
	return s
}

// Add adds a value learned as it is presented (an OAuth access token),
// as Recorder.Secret does: tell it before the value is sent. Values
// shorter than 8 bytes are ignored; the latest 32 are kept.
func (s *Secrets) Add(v string) { s.add(v, minLearned) }

// AddCredential is Add for a credential the caller sends, learned late
// (see Recorder.Credential): looked for from 4 bytes on, as those given
// to NewSecrets as secrets are.
func (s *Secrets) AddCredential(v string) { s.add(v, minSecret) }

func (s *Secrets) add(v string, min int) {
	if s == nil || len(v) < min || len(v) > maxLearnedLen || v == Placeholder {
		return
	}
	s.mu.Lock()
	if slices.Contains(s.told, v) {
		s.mu.Unlock()
		return
	}
	s.told = append(s.told, v)
	if len(s.told) > maxLearned {
		s.told = slices.Delete(s.told, 0, 1)
	}
	subs := slices.Clone(s.subs)
	s.gen.Add(1)
	s.mu.Unlock()
	for _, f := range subs {
		f(v)
	}
}

// Tell has f told the values Add and AddCredential were given, and
// those they are given later, as s took them (a credential from 4 bytes
// on): a recorder's Credential, for a recording that starts after the
// access token was presented.
func (s *Secrets) Tell(f func(string)) {
	if s == nil {
		return
	}
	s.mu.Lock()
	told := slices.Clone(s.told)
	s.subs = append(s.subs, f)
	s.mu.Unlock()
	for _, v := range told {
		f(v)
	}
}

// All returns every value s holds (those given to NewSecrets, and those
// Add was told), for handing them to another process that shows the
// same traffic (a command attached to a held session).
func (s *Secrets) All() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Concat(s.secrets, s.values, s.told)
	return slices.Compact(out)
}

// redactOptions returns o with the secrets and values added.
func (s *Secrets) redactOptions(o RedactOptions) RedactOptions {
	if s == nil {
		return o
	}
	o.Secrets = append(slices.Clone(o.Secrets), s.secrets...)
	o.Values = append(slices.Clone(o.Values), s.values...)
	return o
}

// matcher returns what finds the values, compiled again when Add added
// one; nil when there are none.
func (s *Secrets) matcher() *matcher {
	if s == nil {
		return nil
	}
	gen := s.gen.Load()
	if c := s.m.Load(); c != nil && c.gen == gen {
		return c
	}
	s.mu.Lock()
	vals := append(slices.Clone(s.values), s.told...)
	s.mu.Unlock()
	secrets := make([][]byte, len(s.secrets))
	for i, v := range s.secrets {
		secrets[i] = []byte(v)
	}
	c := compileMatcher(secrets, vals)
	c.gen = gen
	s.m.Store(c)
	return c
}

// Frame returns data, a frame (JSON or not), with the values replaced
// by "[redacted]" (a copy when any is found): for what shows live frames
// (--wire), and Verify.
func (s *Secrets) Frame(data []byte) []byte {
	c := s.matcher()
	if c.empty() {
		return data
	}
	if scanJSON(data, nil).valid {
		out, _ := c.frame(data)
		return out
	}
	return []byte(c.text(string(data)))
}

// Text returns t with the values replaced by "[redacted]".
func (s *Secrets) Text(t string) string { return s.matcher().text(t) }
