// Package model asks a small secondary model to answer a question from one
// fetched page, and from that page only.
//
// A web fetch with a prompt returns the model's answer instead of the page.
// Run decides whether the model runs at all (a blank prompt, no model, an
// empty or very short page each have their own skip reason), cuts the page
// to a bounded number of characters, fences it between random boundary
// markers that the page cannot forge, and tries each configured model in
// turn until one gives a usable answer. It never fails: when every model
// fails, the Outcome says why, and the caller returns the page itself.
//
// Two backends reach a model:
//
//   - OpenCode talks to a running OpenCode server: it opens a throw-away
//     child session of the calling session (so no notification reaches the
//     user's screen), turns every tool off, sends one message, and deletes
//     the session again. It uses the provider credentials the user already
//     gave OpenCode, so slim holds no API keys. When the caller names no
//     model, SmallModel reads the one the server itself uses for small
//     tasks (small_model in GET /config), and Run asks for it only when a
//     question needs a model.
//   - OpenAI talks to any OpenAI-compatible chat-completions endpoint.
//
// Both speak plain HTTP with every response read up to MaxResponseBytes,
// take their time limits from the context, and keep no state between calls.
package model
