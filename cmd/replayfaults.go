package cmd

import (
	"github.com/mcpx-dev/mcpx/record"
)

// misbehaviour puts replay's --pace and --fault into opts.
func (o *replayOptions) misbehaviour(opts *record.ReplayOptions, warn func(string)) error {
	if o.pace != "" {
		p, err := record.ParsePace(o.pace)
		if err != nil {
			return usageErrorf("--pace: %v", err)
		}
		opts.Pace = p
	}
	for _, spec := range o.faults {
		f, err := record.ParseFault(spec)
		if err != nil {
			return usageErrorf("--fault: %v", err)
		}
		if f.HTTPStatus != 0 && o.listen == "" {
			return usageErrorf("--fault %s: an HTTP status needs the HTTP replay: give --listen ADDR", spec)
		}
		opts.Faults = append(opts.Faults, f)
	}
	opts.OnWarning = func(s string) { warn("replay: " + s) }
	return nil
}
