// Package opencode is the HTTP client of slim's background task tools for
// an OpenCode server: it creates child sessions, prompts them, reads the
// live status map and the transcripts, and aborts runs, for one project
// directory.
//
// # v1 and v2
//
// By default it speaks the v1 API (opencode serve). Config.V2 speaks the
// experimental v2 API under /api (opencode2) with the same calls: the
// session routes move under /api/session, PromptAsync is POST .../prompt
// with delivery "queue", Abort is POST .../interrupt with {"continue":
// false}, and Wait is the host's wait-for-idle. v2 has no live status map
// and no noReply: Status and SendMessage are then NoRoute errors and send
// nothing, as is Wait on v1.
//
// # What a call sends
//
// Every call carries the project directory twice, as ?directory= and as
// the x-opencode-directory header, and basic auth when a password is set.
// Session ids are escaped as one path segment. A request body is JSON
// holding only the fields that are set: a Prompt without a MessageID or
// NoReply sends neither. There are no retries and no timeouts of the
// package's own: each call is sent once, and its deadline is its
// context's.
//
// # What an error means
//
// The task engine decides every remote write on the error's Kind, so the
// classification is the contract:
//
//   - Rejected, NotFound and Auth (Authoritative): the server refused
//     explicitly, with a 4xx or with a 2xx error envelope (a JSON object
//     with a non-null top-level "error"); nothing was admitted.
//   - Unknown (MayHaveBeenAdmitted): a 5xx, a transport error, a dropped
//     connection, a timeout (Timeout); the server may have acted.
//   - Malformed: a 2xx whose body is not the expected shape, or larger
//     than Config.MaxBody.
//   - Usage: a bad Config or argument; nothing was sent.
//
// An Error's message is complete and carries the server's own text
// ("HTTP 409: …"); the status map's errors have fixed texts the task
// tools show as they are ("Session status lookup timed out",
// "invalid session-status response", "invalid session-status map
// response").
//
// # Reading what the server answers
//
// Answers are decoded tolerantly (unknown fields are ignored, optional
// fields may be missing) but never guessed: anything that is not the
// expected shape is Malformed, never an empty success. The live status
// map is judged per session by StatusMap.Observe: a server removes idle
// sessions from it, so absence from a valid map means idle, and nothing
// that is not a valid map may be read as one. Judge, After and the other
// transcript helpers are pure functions over a transcript.
package opencode
