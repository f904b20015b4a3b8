package inspector

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// compactJSON returns v as compact JSON bytes. RawMessage values are
// compacted (stdio frames must not contain newlines) but otherwise kept.
func compactJSON(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case compacted:
		return json.RawMessage(x), nil
	case json.RawMessage:
		if len(x) == 0 {
			return nil, nil
		}
		var b bytes.Buffer
		if err := json.Compact(&b, x); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	return json.Marshal(v)
}

// compacted is params already written as json.Marshal writes them, which
// compactJSON passes on as they are.
type compacted json.RawMessage

// namedParams returns the params of tools/call and prompts/get,
// {"arguments":args,"name":name} (without arguments when args is empty),
// byte for byte as json.Marshal writes a map of the two: every tool call
// makes them, and the map and its reflection were a twentieth of a REPL
// call's CPU.
func namedParams(name string, args json.RawMessage) (compacted, error) {
	b := make([]byte, 0, len(args)+len(name)+24)
	b = append(b, '{')
	if len(args) > 0 {
		if !json.Valid(args) {
			_, err := json.Marshal(args) // the error json.Marshal gives
			return nil, err
		}
		b = append(b, `"arguments":`...)
		b = rawjson.AppendCompactPrefix(b, args, math.MaxInt, true)
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	b = appendJSONString(b, name)
	return append(b, '}'), nil
}

// initializeParams returns the params of initialize,
// {"capabilities":caps,"clientInfo":info,"protocolVersion":offered},
// byte for byte as json.Marshal writes a map of the three: a map and its
// reflection, with the encoders built for their first use, were a tenth
// of the CPU a one-shot command spends on its session (issue 13).
func initializeParams(offered string, caps json.RawMessage, info Implementation) (compacted, error) {
	if !json.Valid(caps) {
		// The error json.Marshal gives.
		p, err := compactJSON(map[string]any{"protocolVersion": offered, "capabilities": caps, "clientInfo": info})
		return compacted(p), err
	}
	b := make([]byte, 0, len(caps)+len(info.Name)+len(info.Title)+len(info.Version)+len(offered)+80)
	b = append(b, `{"capabilities":`...)
	b = rawjson.AppendCompactPrefix(b, caps, math.MaxInt, true)
	b = append(b, `,"clientInfo":{"name":`...)
	b = appendJSONString(b, info.Name)
	if info.Title != "" {
		b = append(b, `,"title":`...)
		b = appendJSONString(b, info.Title)
	}
	b = append(b, `,"version":`...)
	b = appendJSONString(b, info.Version)
	b = append(b, `},"protocolVersion":`...)
	b = appendJSONString(b, offered)
	return append(b, '}'), nil
}

// appendJSONString appends s as json.Marshal writes a string.
func appendJSONString(b []byte, s string) []byte {
	if !plainName(s) {
		q, _ := json.Marshal(s)
		return append(b, q...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
