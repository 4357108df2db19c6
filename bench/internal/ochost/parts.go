package ochost

import (
	"fmt"

	"github.com/slimgate/slim/internal/ocevents"
)

// Part is one tool part of a run, as the host reported it when the call
// ended.
type Part = ocevents.ToolPart

// ParseParts reads the tool parts of a run's JSON events (one event a
// line; lines that are not JSON are skipped, as the host may print
// others) and the session they belong to. A tool part without a start or
// with an end before its start cannot be timed and is an error.
func ParseParts(stdout []byte) ([]Part, string, error) {
	parts, session, err := ocevents.Parse(stdout)
	if err != nil {
		return nil, "", newErr(Output, CodeEvents, "reading the host's events: "+err.Error(), err)
	}
	for _, p := range parts {
		if p.Start == 0 || p.End < p.Start {
			return nil, "", newErr(Output, CodePartNoTime, fmt.Sprintf("the %s part %s has no usable time (start %d, end %d)", p.Tool, p.CallID, p.Start, p.End), nil)
		}
	}
	return parts, session, nil
}
