package model

import (
	"fmt"
	"strings"
	"unicode"
)

// Ref names one model: a provider, the provider's model id, and an
// optional variant (a provider-specific setting such as a reasoning
// level). Written "provider/model" or "provider/model#variant".
type Ref struct {
	Provider, Model, Variant string
}

// ParseRef reads "provider/model" or "provider/model#variant". It splits at
// the first "/", so the model id may hold more slashes
// ("openrouter/meta/llama-3"), and at the first "#" after it. Provider and
// model must both be non-empty, a "#" must be followed by a variant, and no
// part may hold spaces or control characters. Surrounding spaces are
// ignored, so items of a comma-separated list can be passed as they are.
func ParseRef(s string) (Ref, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) (Ref, error) {
		return Ref{}, &Error{Kind: Config, Code: CodeBadConfig, Model: t,
			Message: fmt.Sprintf("model reference %q is malformed: %s (write provider/model or provider/model#variant)", t, why)}
	}
	if strings.IndexFunc(t, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0 {
		return bad("it holds a space, a control character or invalid UTF-8")
	}
	provider, rest, ok := strings.Cut(t, "/")
	if !ok {
		return bad(`there is no "/" between provider and model`)
	}
	if provider == "" {
		return bad("the provider is empty")
	}
	if strings.Contains(provider, "#") {
		return bad(`the provider holds a "#"`)
	}
	id, variant, hasVariant := strings.Cut(rest, "#")
	if id == "" {
		return bad("the model is empty")
	}
	if hasVariant && variant == "" {
		return bad(`nothing follows the "#"`)
	}
	if strings.Contains(variant, "#") {
		return bad(`the variant holds a second "#"`)
	}
	return Ref{Provider: provider, Model: id, Variant: variant}, nil
}

// String is the reference in the form ParseRef reads.
func (r Ref) String() string {
	s := r.Provider + "/" + r.Model
	if r.Variant != "" {
		s += "#" + r.Variant
	}
	return s
}

// ParseRefs parses a chain of references in order. Malformed ones are left
// out and returned as errors, so one typo does not disable the others; a
// reference that repeats an earlier one (same provider, model and variant)
// is dropped silently. The same model with another variant is a separate
// entry.
func ParseRefs(items []string) ([]Ref, []error) {
	var refs []Ref
	var bad []error
	for _, s := range items {
		r, err := ParseRef(s)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		refs = appendUnique(refs, r)
	}
	return refs, bad
}

func appendUnique(refs []Ref, r Ref) []Ref {
	for _, have := range refs {
		if have == r {
			return refs
		}
	}
	return append(refs, r)
}
