package opencode

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
)

func TestStatusMapFromTheServer(t *testing.T) {
	busy := Observation{Live: LiveBusy, Known: true, Entry: StatusEntry{Type: "busy"}}
	absent := Observation{Absent: true}
	tests := []struct {
		name    string
		status  opencodefake.StatusMap
		want    map[string]Observation // by session; sessions not named are absent
		wantIDs []string
		kind    Kind // the error's kind, "" for none
		code    string
		msg     string
	}{
		{name: "a running session is busy, an idle one absent",
			want: map[string]Observation{"ses_run": busy, "ses_idle": absent}, wantIDs: []string{"ses_run"}},
		{name: "image_processing counts as busy",
			status:  opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{"ses_img": {Type: "image_processing"}}},
			want:    map[string]Observation{"ses_img": {Live: LiveBusy, Known: true, Entry: StatusEntry{Type: "image_processing"}}, "ses_run": busy},
			wantIDs: []string{"ses_img", "ses_run"}},
		{name: "retry keeps its details",
			status:  opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{"ses_run": {Type: "retry", Attempt: 3, Message: "rate limited", Next: 1700000000000}}},
			want:    map[string]Observation{"ses_run": {Live: LiveRetry, Known: true, Entry: StatusEntry{Type: "retry", Attempt: 3, Message: "rate limited", Next: 1700000000000}}},
			wantIDs: []string{"ses_run"}},
		{name: "an explicit idle entry counts as absent",
			status: opencodefake.StatusMap{Raw: map[string]json.RawMessage{"ses_idle": json.RawMessage(`{"type":"idle"}`)}},
			want:   map[string]Observation{"ses_idle": absent, "ses_run": busy}, wantIDs: []string{"ses_run"}},
		{name: "a malformed entry spoils only its session",
			status: opencodefake.StatusMap{Raw: map[string]json.RawMessage{
				"ses_weird": json.RawMessage(`{"type":"weird"}`), "ses_num": json.RawMessage(`5`),
				"ses_nulltype": json.RawMessage(`{"type":null}`), "ses_notype": json.RawMessage(`{"attempt":1}`),
			}},
			want: map[string]Observation{
				"ses_weird": {Err: MalformedEntry, Entry: StatusEntry{Type: "weird"}}, "ses_num": {Err: MalformedEntry},
				"ses_nulltype": {Err: MalformedEntry}, "ses_notype": {Err: MalformedEntry}, "ses_run": busy, "ses_idle": absent,
			},
			wantIDs: []string{"ses_notype", "ses_nulltype", "ses_num", "ses_run", "ses_weird"}},
		{name: "an array is not a map", status: opencodefake.StatusMap{Mode: opencodefake.StatusArray},
			kind: Malformed, code: CodeMalformed, msg: "invalid session-status response"},
		{name: "a scalar is not a map", status: opencodefake.StatusMap{Mode: opencodefake.StatusScalar},
			kind: Malformed, code: CodeMalformed, msg: "invalid session-status response"},
		{name: "broken JSON is not a map", status: opencodefake.StatusMap{Mode: opencodefake.StatusMalformed},
			kind: Malformed, code: CodeMalformed, msg: "invalid session-status response"},
		{name: "a top-level type key is one status, not a map", status: opencodefake.StatusMap{Mode: opencodefake.StatusTypeKey},
			kind: Malformed, code: CodeMalformed, msg: "invalid session-status map response"},
		{name: "a server error", status: opencodefake.StatusMap{Mode: opencodefake.StatusError},
			kind: Unknown, code: CodeServerError, msg: "HTTP 500: session status lookup failed"},
		{name: "a 2xx error envelope", status: opencodefake.StatusMap{Mode: opencodefake.StatusError, Error: &opencodefake.Response{Status: 200, Body: json.RawMessage(`{"error":"not now"}`)}},
			kind: Rejected, code: CodeEnvelope, msg: "HTTP 200: not now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := startFake(t, opencodefake.Options{Script: &opencodefake.Script{DefaultRun: &opencodefake.Run{Hang: true}}}, Config{})
			seed(t, s, opencodefake.SessionSeed{ID: "ses_run"})
			seed(t, s, opencodefake.SessionSeed{ID: "ses_idle"})
			if err := c.PromptAsync(testCtx(t), "ses_run", textPrompt("run")); err != nil {
				t.Fatal(err)
			}
			if err := s.SetStatus(tt.status); err != nil {
				t.Fatal(err)
			}
			m, err := c.Status(testCtx(t))
			if tt.kind != "" {
				status := 200
				if tt.kind == Unknown {
					status = 500
				}
				wantErr(t, err, tt.kind, tt.code, status, tt.msg)
				if got := m.Observe("ses_run"); got.Err != StatusUnavailable {
					t.Errorf("the map of a failed read observes %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			for id, want := range tt.want {
				if got := m.Observe(id); got != want {
					t.Errorf("Observe(%s) = %+v, want %+v", id, got, want)
				}
			}
			if got := m.Observe("ses_never_seen"); got != absent {
				t.Errorf("Observe of a session the map does not name = %+v, want absent", got)
			}
			if got := m.IDs(); !slices.Equal(got, tt.wantIDs) {
				t.Errorf("IDs = %v, want %v", got, tt.wantIDs)
			}
		})
	}
}

func TestAStatusReadThatHangsTimesOutWithTheToolsMessage(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{}, Config{})
	if err := s.SetStatus(opencodefake.StatusMap{Mode: opencodefake.StatusHang}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	m, err := c.Status(ctx)
	wantErr(t, err, Unknown, CodeTimeout, 0, "Session status lookup timed out")
	if !Timeout(err) || !MayHaveBeenAdmitted(err) {
		t.Errorf("Timeout %v, MayHaveBeenAdmitted %v", Timeout(err), MayHaveBeenAdmitted(err))
	}
	if got := m.Observe("ses_x"); got.Absent || got.Known {
		t.Errorf("a timed-out read observes %+v", got)
	}
}

func TestTheZeroStatusMapSaysNothing(t *testing.T) {
	var m StatusMap
	if got := m.Observe("ses_x"); got != (Observation{Err: StatusUnavailable}) {
		t.Errorf("Observe = %+v, want %q: a map never read must not make a session look idle", got, StatusUnavailable)
	}
	if ids := m.IDs(); len(ids) != 0 {
		t.Errorf("IDs = %v", ids)
	}
}

func TestDecodeStatus(t *testing.T) {
	const notObject, notMap = "invalid session-status response", "invalid session-status map response"
	tests := []struct {
		name    string
		body    string
		wantErr string
		obs     map[string]Observation
	}{
		{"an empty map", `{}`, "", map[string]Observation{"a": {Absent: true}}},
		{"white space around", " \n{\"a\":{\"type\":\"busy\"}}\n", "", map[string]Observation{"a": {Live: LiveBusy, Known: true, Entry: StatusEntry{Type: "busy"}}}},
		{"unknown fields are ignored", `{"a":{"type":"busy","since":5,"x":{}}}`, "", map[string]Observation{"a": {Live: LiveBusy, Known: true, Entry: StatusEntry{Type: "busy"}}}},
		{"a detail of the wrong type is dropped", `{"a":{"type":"retry","attempt":"two","message":7,"next":1.5}}`, "", map[string]Observation{"a": {Live: LiveRetry, Known: true, Entry: StatusEntry{Type: "retry"}}}},
		{"a type that is not a string", `{"a":{"type":1}}`, "", map[string]Observation{"a": {Err: MalformedEntry}}},
		{"an entry that is a string", `{"a":"busy"}`, "", map[string]Observation{"a": {Err: MalformedEntry}}},
		{"an entry that is null", `{"a":null}`, "", map[string]Observation{"a": {Err: MalformedEntry}}},
		{"a type in another case", `{"a":{"type":"Busy"}}`, "", map[string]Observation{"a": {Err: MalformedEntry, Entry: StatusEntry{Type: "Busy"}}}},
		{"a top-level status key", `{"status":"busy","a":{"type":"busy"}}`, notMap, nil},
		{"a top-level type key alone", `{"type":"idle"}`, notMap, nil},
		{"an array", `[{"type":"busy","sessionID":"a"}]`, notObject, nil},
		{"an empty array", `[]`, notObject, nil},
		{"null", `null`, notObject, nil},
		{"a string", `"x"`, notObject, nil},
		{"a number", `1`, notObject, nil},
		{"empty", ``, notObject, nil},
		{"broken", `{"a":{"type":"busy"}`, notObject, nil},
		{"trailing data", `{} {}`, notObject, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decodeStatus([]byte(tt.body))
			if tt.wantErr != "" {
				wantErr(t, err, Malformed, CodeMalformed, 200, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("decodeStatus: %v", err)
			}
			for id, want := range tt.obs {
				if got := m.Observe(id); got != want {
					t.Errorf("Observe(%s) = %+v, want %+v", id, got, want)
				}
			}
		})
	}
}
