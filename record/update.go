package record

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/mcpx-dev/mcpx/transport"
)

// UpdateOptions configure UpdateTrace.
type UpdateOptions struct {
	// Verify configures the verification that drives the live server
	// (its Dial is replaced by this Dial). Its Secrets are redacted from
	// the new trace too, wherever they appear, besides what the trace's
	// header says to redact: as a recording redacts those it is given
	// (RedactOptions.Secrets and Values, Recorder.Secret).
	Verify VerifyOptions
	// Dial opens the connection of session n to the live server, for a
	// session described by info; the transport's events (a server's
	// stderr, HTTP exchanges) go to observe, which records them.
	Dial func(ctx context.Context, n int, info SessionInfo, observe transport.Observer) (transport.Conn, error)
	// Mcpx names the program writing the new trace (Header.Mcpx).
	Mcpx string
	// Stable writes the new trace in the stable form even when the old
	// one was not (a stable trace stays stable).
	Stable bool
	// MaxMessageSize bounds a frame of the old trace (see ReadOptions).
	MaxMessageSize int64
	// Always writes the new trace even when the live server matched the
	// old one. Without it a trace that verifies is left as it was (unless
	// Stable asks a trace that is not stable to become so): a trace kept
	// under version control then changes only when the server did, not
	// for new times, ids or values its normalizers and ignores say are
	// no difference (MCPX_RECORD=update over a whole suite of traces).
	Always bool
	// Sum, when not nil, is the SHA-256 of the trace as the caller read
	// it before (TraceFile.Sum, mcpx verify --update of several traces):
	// a trace that is no longer that one is left as it is, an error
	// matching ErrChangedSinceRead.
	Sum *[sha256.Size]byte
}

// ErrChangedSinceRead is matched by the error of UpdateTrace for a trace
// that is no longer the one UpdateOptions.Sum says was read.
var ErrChangedSinceRead = errors.New("changed since it was read")

// UpdateTrace records the trace in the named file again from a live
// server (mcpx verify --update; ModeUpdate of a verification): it
// verifies the server against the trace (see VerifySessions: the
// recorded client traffic is sent again and the server's requests are
// answered as recorded) and records each live session as it goes, named
// and described as the recorded one was. The new trace keeps the old
// header's settings: its redaction, ignores, normalizers, target and
// stable form. It takes the old one's place only once every session has
// run (through a temporary file): when the verification fails or is
// interrupted, or the live server could not be talked to (the connection
// could not be made or ended, a request got no response in time: see
// VerifyResult.Lost; the error then wraps the *LostError), the file is
// left as it was. So it is when another process changed it meanwhile
// (recorded a session into it: the error matches ErrChanged). A trace of
// a newer minor version than this package writes is refused (*MinorError)
// before anything runs: its header's settings would be lost.
//
// The result says what changed; differences are what an update is for,
// so they are no error. When there are none the file is left as it was
// (see UpdateOptions.Always; VerifyResult.Kept says so).
func UpdateTrace(ctx context.Context, name string, o UpdateOptions) (*VerifyResult, error) {
	if o.Dial == nil {
		return nil, errors.New("record.UpdateTrace: no Dial")
	}
	f, err := openTraceFile(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	base, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	tf, err := ReadOptions{MaxMessageSize: o.MaxMessageSize, Sum: o.Sum != nil}.Index(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if o.Sum != nil && tf.Sum != *o.Sum {
		return nil, fmt.Errorf("%s %w", name, ErrChangedSinceRead)
	}
	h := tf.Header
	if err := checkRewrite(h); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rec, err := createHeld(ctx, name, RecorderOptions{
		Header: Header{Mcpx: o.Mcpx, Transport: h.Transport, Target: h.Target, Ignore: h.Ignore, Normalize: h.Normalize},
		Redact: o.Verify.Secrets.redactOptions(RedactOptions{Disabled: !h.Redacted, Paths: h.Redact}),
		Stable: h.Stable || o.Stable,
	}, false, base)
	if err != nil {
		return nil, err
	}
	// (What Secrets tells it took already, a credential from 4 bytes on.)
	o.Verify.Secrets.Tell(rec.Credential)
	texts := map[int]string{}
	for _, x := range tf.Index {
		texts[x.N] = x.Text
	}
	vo := o.Verify
	vo.Dial = func(ctx context.Context, n int, info SessionInfo) (transport.Conn, error) {
		sr := rec.StartSession(info, texts[n])
		conn, err := o.Dial(ctx, n, info, sr.Observe)
		if err != nil {
			return nil, err
		}
		return sr.Wrap(conn), nil
	}
	res, err := VerifySessions(ctx, tf, nil, vo)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil && res.Lost != nil {
		// What a server that was not there did is no recording of it.
		err = fmt.Errorf("%s is kept as it was: %w", name, res.Lost)
	}
	if err != nil {
		rec.Discard()
		rec.Close()
		return res, err
	}
	f.Close()
	if res.OK() && !o.Always && (h.Stable || !o.Stable) {
		rec.Discard()
		rec.Close()
		res.Kept = true
		return res, nil
	}
	if err := rec.Close(); err != nil {
		if errors.Is(err, ErrChanged) {
			return res, err // (nothing was written: it says so)
		}
		return res, fmt.Errorf("writing the updated trace: %w", err)
	}
	return res, nil
}
