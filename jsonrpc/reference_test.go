package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// The reference decoding of JSON-RPC frames that FuzzJSONRPCFrame holds
// DecodeFrame to: written the plain way, with encoding/json, stating
// what a frame holds rather than how to find it fast.

// refMessage is what one element of a frame holds, decoded by refDecode.
type refMessage struct {
	// Object is false when the element is not a JSON object, or one whose
	// members do not decode (a method that is not a string): such an
	// element is no message, and the fields below are zero.
	Object bool
	// ID is the id member as written (null kept), nil without one.
	ID json.RawMessage
	// Method is the method member; nil without one (or when it is null).
	Method *string
	// Result and Error are the members as written, nil when absent.
	Result, Error json.RawMessage
	// Raw is the element's text.
	Raw []byte
}

// Answers reports the id a response answers: its id unless absent or
// null.
func (m refMessage) Answers() (json.RawMessage, bool) {
	if !m.Object || m.Method != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil, false
	}
	return m.ID, true
}

// RequestID reports the id of a request: its id unless absent or null.
func (m refMessage) RequestID() (json.RawMessage, bool) {
	if !m.Object || m.Method == nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil, false
	}
	return m.ID, true
}

// refDecode is the reference decoding of a JSON-RPC 2.0 frame (JSON-RPC 2.0,
// sections 4 to 6): valid is false when the frame (surrounding white space
// aside) is not JSON; a frame that is a JSON array is a batch whose every
// element is a message on its own, whatever its neighbours are; anything
// else is one message. Member names are matched the way encoding/json
// matches struct fields, as DecodeFrame does.
func refDecode(frame []byte) (msgs []refMessage, batch, valid bool) {
	t := bytes.TrimSpace(frame)
	// RFC 8259 section 8.1 lets a parser ignore a leading byte order mark.
	t = bytes.TrimSpace(bytes.TrimPrefix(t, []byte("\uFEFF")))
	if len(t) == 0 || !json.Valid(t) {
		return nil, false, false
	}
	if t[0] != '[' {
		return []refMessage{refDecodeOne(t)}, false, true
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(t, &elems); err != nil {
		panic("refDecode: a valid JSON array does not decode: " + err.Error())
	}
	for _, e := range elems {
		msgs = append(msgs, refDecodeOne(e))
	}
	return msgs, true, true
}

func refDecodeOne(raw []byte) refMessage {
	m := refMessage{Raw: raw}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return m
	}
	var w struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &w) != nil {
		return m
	}
	m.Object, m.ID, m.Method, m.Result, m.Error = true, w.ID, w.Method, w.Result, w.Error
	return m
}
