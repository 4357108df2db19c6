package opencode

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The decoders below read what a server answers. They are tolerant of
// what real servers add (unknown fields are ignored, optional fields may
// be missing) and strict about shape: a list must be a JSON array of
// objects, a message must have a string info.role, a field of the wrong
// type fails the whole answer. A plain error they return becomes the
// cause of a Malformed Error.

// decodeObject decodes a JSON object into v.
func decodeObject(raw []byte, v any) error {
	if firstByte(raw) != '{' {
		return errors.New("not a JSON object")
	}
	return json.Unmarshal(raw, v)
}

// decodeList decodes a JSON array of objects, checking each with check.
// An empty array gives an empty, non-nil slice.
func decodeList[T any](raw []byte, check func(T) error) ([]T, error) {
	elems, err := rawArray(raw)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(elems))
	for i, e := range elems {
		var v T
		if err := decodeObject(e, &v); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		if err := check(v); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// decodeMessages decodes a transcript: a JSON array of messages. It
// decodes in one pass (a transcript can be megabytes).
func decodeMessages(raw []byte) ([]Message, error) {
	if firstByte(raw) != '[' {
		return nil, errors.New("not a JSON array")
	}
	var wire []*wireMessage
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(wire))
	for i, w := range wire {
		m, err := w.message()
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// wireMessage is a Message as it is decoded, so that a missing info or
// info.role can be told from an empty one.
type wireMessage struct {
	Info  *wireInfo `json:"info"`
	Parts []Part    `json:"parts"`
}

// wireInfo is MessageInfo with Role as a pointer; the outer Role shadows
// the embedded one.
type wireInfo struct {
	MessageInfo
	Role *string `json:"role"`
}

// decodeMessage decodes one message: a JSON object whose info is an
// object with a string role.
func decodeMessage(raw []byte) (Message, error) {
	if firstByte(raw) != '{' {
		return Message{}, errors.New("not a JSON object")
	}
	var w wireMessage
	if err := json.Unmarshal(raw, &w); err != nil {
		return Message{}, err
	}
	return w.message()
}

// message checks a decoded message (nil: a JSON null).
func (w *wireMessage) message() (Message, error) {
	if w == nil {
		return Message{}, errors.New("not a JSON object")
	}
	if w.Info == nil || w.Info.Role == nil {
		return Message{}, errors.New("no info.role")
	}
	m := Message{Info: w.Info.MessageInfo, Parts: w.Parts}
	m.Info.Role = *w.Info.Role
	return m, nil
}

// rawArray splits a JSON array into its elements.
func rawArray(raw []byte) ([]json.RawMessage, error) {
	if firstByte(raw) != '[' {
		return nil, errors.New("not a JSON array")
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	return elems, nil
}

// object decodes a JSON object's members; nil when raw is not one.
// Indexing the nil result is fine, so lookups can be chained.
func object(raw []byte) map[string]json.RawMessage {
	if firstByte(raw) != '{' {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// str is raw as a JSON string, "" when it is not one.
func str(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// firstByte is the first byte of raw that is not JSON white space, 0 when
// there is none.
func firstByte(raw []byte) byte {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b
	}
	return 0
}

// decodeSession decodes a session, which must have an id.
func decodeSession(raw []byte, s *Session) error {
	if err := decodeObject(raw, s); err != nil {
		return err
	}
	return checkSession(*s)
}

// checkPending refuses a pending request that does not say whose it is.
func checkPending(p Pending) error {
	if p.ID == "" || p.SessionID == "" {
		return errors.New("a pending request without an id or a sessionID")
	}
	return nil
}

func checkSession(s Session) error {
	if s.ID == "" {
		return errors.New("a session without an id")
	}
	return nil
}
