package opencode

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
)

// A v2 client speaks the /api routes: the same calls, other paths and
// bodies, and no live status map.
func TestAV2ClientUsesTheV2Routes(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{V2: true, Script: &opencodefake.Script{DefaultRun: &opencodefake.Run{Hang: true}}}, Config{V2: true})
	ctx := testCtx(t)
	ses, err := c.CreateSession(ctx, "", "v2 child")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CallsTo("POST", "/api/session"); len(got) != 1 {
		t.Fatalf("create calls = %+v", got)
	}
	if err := c.PromptAsync(ctx, ses.ID, Prompt{MessageID: "msg_v2_client", Agent: "explorer", Parts: []PromptPart{{Type: "text", Text: "go"}}}); err != nil {
		t.Fatal(err)
	}
	prompts := s.CallsTo("POST", "/api/session/"+ses.ID+"/prompt")
	if len(prompts) != 1 {
		t.Fatalf("prompt calls = %+v", prompts)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(prompts[0].Body), &body); err != nil || body["delivery"] != "queue" || body["messageID"] != "msg_v2_client" {
		t.Errorf("prompt body = %s (%v), want delivery queue and the client id", prompts[0].Body, err)
	}
	if msgs, err := c.Messages(ctx, ses.ID, 0); err != nil || !HasID(msgs, "msg_v2_client") {
		t.Errorf("Messages = %+v, %v; want the prompt", msgs, err)
	}
	if got := s.CallsTo("GET", "/api/session/"+ses.ID+"/message"); len(got) != 1 {
		t.Errorf("transcript calls = %+v", got)
	}

	// Busy: a wait of 0 answers 408 at once.
	_, err = c.Wait(ctx, ses.ID, 0)
	if !StillBusy(err) {
		t.Fatalf("Wait on a busy session = %v, want a 408", err)
	}
	if q := s.CallsTo("POST", "/api/session/"+ses.ID+"/wait"); len(q) != 1 || q[0].Query.Get("timeoutMs") != "0" {
		t.Errorf("wait calls = %+v, want one with timeoutMs=0", q)
	}
	ok, err := c.Abort(ctx, ses.ID)
	if err != nil || !ok {
		t.Fatalf("Abort (interrupt) = %v, %v", ok, err)
	}
	ints := s.CallsTo("POST", "/api/session/"+ses.ID+"/interrupt")
	if len(ints) != 1 || strings.ReplaceAll(ints[0].Body, " ", "") != `{"continue":false}` {
		t.Errorf("interrupt calls = %+v, want one with {continue:false}", ints)
	}
	idle, err := c.Wait(ctx, ses.ID, time.Second)
	if err != nil || idle.ID != ses.ID || idle.Time.Idle == 0 {
		t.Fatalf("Wait after the interrupt = %+v, %v; want the idle session", idle, err)
	}
	// Nothing runs now: the interrupt is a no-op, not a confirmation.
	if ok, err := c.Abort(ctx, ses.ID); err != nil || ok {
		t.Errorf("Abort of an idle session = %v, %v; want false", ok, err)
	}

	n := len(s.Calls())
	if _, err := c.Status(ctx); !NoRoute(err) || err.Error() != ErrNoStatusMap {
		t.Errorf("Status = %v, want the no-map NoRoute error", err)
	}
	if err := c.SendMessage(ctx, ses.ID, Prompt{NoReply: true, Parts: []PromptPart{{Type: "text", Text: "fyi"}}}); !NoRoute(err) {
		t.Errorf("SendMessage = %v, want NoRoute", err)
	}
	if err := c.PromptAsync(ctx, ses.ID, Prompt{NoReply: true, Parts: []PromptPart{{Type: "text", Text: "fyi"}}}); err == nil {
		t.Error("a noReply prompt was sent to a v2 host")
	}
	if len(s.Calls()) != n {
		t.Errorf("calls that v2 has no route for were sent: %+v", s.Calls()[n:])
	}
}

// A v1 client never sends a delivery, and has no wait call.
func TestAV1ClientSendsNoDeliveryAndHasNoWait(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{Script: &opencodefake.Script{DefaultRun: &opencodefake.Run{DurationMS: 1}}}, Config{})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_v1"})
	if err := c.PromptAsync(testCtx(t), "ses_v1", textPrompt("go")); err != nil {
		t.Fatal(err)
	}
	if got := s.CallsTo("POST", "/session/ses_v1/prompt_async"); len(got) != 1 || strings.Contains(got[0].Body, "delivery") {
		t.Errorf("prompt calls = %+v, want one without delivery", got)
	}
	n := len(s.Calls())
	if _, err := c.Wait(testCtx(t), "ses_v1", 0); !NoRoute(err) {
		t.Errorf("Wait on v1 = %v, want NoRoute", err)
	}
	if len(s.Calls()) != n {
		t.Error("a v1 client sent a wait")
	}
}

// A host without the wait route answers 404 as for a deleted session:
// the session read tells them apart (the engine's part).
func TestAHostWithoutTheWaitRouteAnswers404(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{V2: true, V2NoWait: true}, Config{V2: true})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_nowait"})
	_, err := c.Wait(testCtx(t), "ses_nowait", 0)
	wantErr(t, err, NotFound, CodeNotFound, 404, "HTTP 404: No route for POST /api/session/ses_nowait/wait")
	if NoRoute(err) || StillBusy(err) {
		t.Errorf("Wait without the route = %v", err)
	}
	if got, err := c.GetSession(testCtx(t), "ses_nowait"); err != nil || got.ID != "ses_nowait" {
		t.Errorf("GetSession = %+v, %v", got, err)
	}
}
