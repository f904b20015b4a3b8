package fuzzing

import (
	"bytes"
	"io"
	"strconv"
)

// SSEEvent is one event that SSE dispatches.
type SSEEvent struct {
	Type  string // "message" when the stream names none
	Data  []byte // the data lines joined with "\n"
	ID    string // the last event id after this event
	HasID bool   // the event itself carried an id field
}

// SSEStreams are event streams as servers send them: the spec's
// Streamable HTTP and HTTP+SSE examples, resumable streams with priming
// events, and odd ones (CR and CRLF line endings, a BOM, a NUL in an id,
// cut short).
func SSEStreams() []string {
	return []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		"event: endpoint\ndata: /messages?session_id=2b7e\n\n",
		"id: 0\nretry: 1000\ndata: \n\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n",
		"data: x\r\n\r\n",
		"data: x\rid: 7\r\r",
		"data:line1\ndata: line2\n\n",
		": keep-alive\nfoo: bar\ndata: x\n\n",
		"id: 1\ndata: a\n\ndata: b\n\n",
		"id: a\x00b\nretry: 5s\ndata: x\n\n",
		"\xef\xbb\xbfdata: x\n\n",
		"data: a\n\ndata: {\"jsonrpc\"",
		"id: 1\ndata: a\n\nid: 2\ndata: {\"json",
		"id\ndata\n\nevent\ndata:\n\n",
		"retry: 99999999999\nretry: 12\n\ndata\r\n\r",
		"event: ping\ndata: {}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":2,\"result\":{}}\n\n",
	}
}

// SSE interprets a whole event stream as the WHATWG HTML standard says
// ("Interpreting an event stream"): the events dispatched, the last event
// id and the reconnection time in milliseconds (-1 when none is set). It
// makes the choices mcpx's parser documents: a retry that does not fit 31
// bits stands for the largest that does (2^31-1 ms), and an unterminated
// last line is interpreted (so a final retry field counts) but never
// dispatches.
func SSE(stream []byte) (events []SSEEvent, lastID string, retry int64) {
	retry = -1
	stream = bytes.TrimPrefix(stream, []byte("\xef\xbb\xbf"))
	var lines [][]byte
	for len(stream) > 0 {
		i := bytes.IndexAny(stream, "\r\n")
		if i < 0 {
			lines = append(lines, stream)
			break
		}
		lines = append(lines, stream[:i])
		if stream[i] == '\r' && i+1 < len(stream) && stream[i+1] == '\n' {
			i++
		}
		stream = stream[i+1:]
	}
	var typ, idBuf string
	var data []byte
	hasData, idSet := false, false
	for _, line := range lines {
		if len(line) == 0 {
			lastID = idBuf
			if hasData {
				ev := SSEEvent{Type: typ, Data: data, ID: lastID, HasID: idSet}
				if ev.Type == "" {
					ev.Type = "message"
				}
				events = append(events, ev)
			}
			typ, data, hasData, idSet = "", nil, false, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "event":
			typ = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				idBuf, idSet = string(value), true
			}
		case "retry":
			digits := len(value) > 0
			for _, c := range value {
				digits = digits && c >= '0' && c <= '9'
			}
			if digits {
				retry = 1<<31 - 1
				if n, err := strconv.ParseUint(string(value), 10, 31); err == nil {
					retry = int64(n)
				}
			}
		}
	}
	return events, lastID, retry
}

// ChunkReader returns a reader of data that returns it in reads of 1 to
// 256 bytes, the sizes taken in turn from sizes (one byte at a time when
// sizes is empty): a network that splits a stream anywhere.
func ChunkReader(data, sizes []byte) io.Reader {
	return &chunkReader{data: data, sizes: sizes}
}

type chunkReader struct {
	data, sizes []byte
	n           int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	size := 1
	if len(r.sizes) > 0 {
		size = int(r.sizes[r.n%len(r.sizes)]) + 1
		r.n++
	}
	size = min(size, len(p), len(r.data))
	copy(p, r.data[:size])
	r.data = r.data[size:]
	return size, nil
}
