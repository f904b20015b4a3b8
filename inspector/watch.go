package inspector

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// LogLevels are the syslog severities of logging/setLevel, lowest first
// (spec 2025-11-25: server/utilities/logging, "Log Levels").
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// ValidLogLevel reports whether level is one of LogLevels.
func ValidLogLevel(level string) bool { return slices.Contains(LogLevels, level) }

// SetLogLevel sends logging/setLevel.
func (s *Session) SetLogLevel(ctx context.Context, level string) error {
	if _, err := s.Call(ctx, "logging/setLevel", map[string]string{"level": level}); err != nil {
		return fmt.Errorf("logging/setLevel %q: %w", level, err)
	}
	return nil
}

// Subscribe sends resources/subscribe (spec 2025-11-25: server/resources,
// "Subscriptions"); the server then sends notifications/resources/updated.
func (s *Session) Subscribe(ctx context.Context, uri string) error {
	if _, err := s.Call(ctx, "resources/subscribe", map[string]string{"uri": uri}); err != nil {
		return fmt.Errorf("resources/subscribe %q: %w", uri, err)
	}
	return nil
}

// Unsubscribe sends resources/unsubscribe.
func (s *Session) Unsubscribe(ctx context.Context, uri string) error {
	if _, err := s.Call(ctx, "resources/unsubscribe", map[string]string{"uri": uri}); err != nil {
		return fmt.Errorf("resources/unsubscribe %q: %w", uri, err)
	}
	return nil
}

// ErrServerGone is matched by the error Wait returns when the connection
// ended while mcpx was waiting.
var ErrServerGone = fmt.Errorf("the connection ended")

// Wait keeps the session open so that notifications keep arriving, for d
// (until ctx ends when d <= 0). It returns nil when d has passed or ctx
// ended — both are the normal end of watching — and an error wrapping the
// connection's error when the server went away first.
func (s *Session) Wait(ctx context.Context, d time.Duration) error {
	var after <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		after = t.C
	}
	select {
	case <-after:
		return nil
	case <-ctx.Done():
		return nil
	case <-s.done:
		return fmt.Errorf("%w while watching: %w", ErrServerGone, s.err)
	}
}
