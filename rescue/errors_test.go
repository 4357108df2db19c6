package rescue_test

import (
	"errors"
	"testing"

	"github.com/slimgate/slim/rescue"
)

// Every error Process returns is a *rescue.Error a library caller can
// take apart with errors.As, with the kind that says what to do about it.
func TestProcessErrorsAreTypedByKind(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		patch string
		opts  rescue.Options
		kind  rescue.Kind
		code  string
	}{
		{"malformed patch", "garbage", rescue.Options{}, rescue.Validation, rescue.CodeMalformedPatch},
		{"missing file", "*** Begin Patch\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch\n", rescue.Options{}, rescue.Verification, rescue.CodeVerificationFailed},
		{"outside", "*** Begin Patch\n*** Add File: ../x.txt\n+x\n*** End Patch\n", rescue.Options{}, rescue.Blocked, rescue.CodeOutsideWorkspace},
		{"unknown policy", "*** Begin Patch\n*** End Patch\n", rescue.Options{Outside: "maybe"}, rescue.Usage, rescue.CodeUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Directory, tc.opts.Worktree = dir, "/"
			res, err := rescue.Process([]byte(tc.patch), tc.opts)
			var re *rescue.Error
			if !errors.As(err, &re) || re.Kind != tc.kind || re.Code != tc.code || re.Message != err.Error() {
				t.Fatalf("got %#v", err)
			}
			if res == nil || res.Decision != rescue.DecisionBlock {
				t.Fatalf("result %+v", res)
			}
		})
	}
}
