package kinderr

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

type kindA string
type kindB string

func TestAsTellsPackagesApart(t *testing.T) {
	a := &Error[kindA]{Kind: "usage", Code: "bad", Message: "a went wrong", Err: fs.ErrNotExist}
	wrapped := fmt.Errorf("context: %w", a)
	if got, ok := As[kindA](wrapped); !ok || got != a {
		t.Fatalf("As[kindA] = %v, %v", got, ok)
	}
	if got, ok := As[kindB](wrapped); ok || got != nil {
		t.Fatalf("As[kindB] found %v in another kind's error", got)
	}
	if !errors.Is(wrapped, fs.ErrNotExist) {
		t.Error("the cause is not reachable")
	}
	if wrapped.Error() != "context: a went wrong" {
		t.Errorf("message %q", wrapped.Error())
	}
}
