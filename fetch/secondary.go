package fetch

import (
	"context"
	"strings"

	"github.com/slimgate/slim/fetch/internal/model"
)

// backend is the secondary model's transport: the OpenCode server when the
// host passed its address, else an OpenAI-compatible endpoint, else none.
func (mc ModelConfig) backend() model.Backend {
	b := mc.Backend
	if b == "" {
		switch {
		case mc.OpenCodeURL != "":
			b = "opencode"
		case mc.OpenAIBaseURL != "":
			b = "openai"
		}
	}
	switch b {
	case "opencode":
		if mc.OpenCodeURL == "" {
			return nil
		}
		return &model.OpenCode{BaseURL: mc.OpenCodeURL, SessionID: mc.SessionID, Directory: mc.Directory,
			Username: mc.OpenCodeUser, Password: mc.OpenCodePassword}
	case "openai":
		if mc.OpenAIBaseURL == "" {
			return nil
		}
		return &model.OpenAI{BaseURL: mc.OpenAIBaseURL, APIKey: mc.OpenAIKey, ModelMap: mc.OpenAIModelMap}
	}
	return nil
}

// askModel runs the secondary model on the page and records what happened
// in m. It returns the answer, or the page's own content when the model
// was skipped or failed.
func (f *fetcher) askModel(ctx context.Context, e *entry, m *Metadata, content string) (string, bool) {
	refs, _ := model.ParseRefs(f.cfg.Model.Models)
	// The model has its own time limit per attempt, not the fetch's: it
	// runs under the caller's context (signals), not the fetch timeout.
	_ = ctx
	b := f.cfg.Model.backend()
	mreq := model.Request{
		Prompt:    *f.req.Prompt,
		Markdown:  e.Markdown,
		WordCount: e.Words,
		Refs:      refs,
		Timeout:   f.cfg.Model.Timeout,
	}
	if oc, ok := b.(*model.OpenCode); ok && len(f.cfg.Model.Models) == 0 {
		// No chain given: the host's own small model, asked of the
		// server only now that a question needs it.
		mreq.HostModels = oc.SmallModel
	}
	out := model.Run(f.outer, b, mreq)
	f.warnings = append(f.warnings, out.Warnings...)
	if out.SkippedReason != "" {
		m.add("secondary_model_skipped_reason", out.SkippedReason)
		if out.SkippedReason == model.SkipAllModelsFailed {
			m.add("secondary_model_error", out.Error)
		}
		return content, false
	}
	m.add("secondary_model_input_truncated", out.InputTruncated)
	m.add("secondary_model_input_chars", out.InputChars)
	m.add("secondary_model_source_chars", out.SourceChars)
	m.add("secondary_model", out.Model)
	answer := strings.TrimSpace(out.Answer)
	if f.req.Format == HTML {
		return pre(answer), true
	}
	return answer, true
}
