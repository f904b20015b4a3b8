package record_test

import (
	"bytes"
	"fmt"
	"log"
	"os"

	"github.com/mcpx-dev/mcpx/record"
)

// What changed between two recordings of a session (here the same one, its
// tool renamed in the second): the tool's name in the list, and the name
// the client called.
func ExampleDiffTraces() {
	data, err := os.ReadFile("testdata/greeter.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	renamed := bytes.ReplaceAll(data, []byte(`"name":"greet"`), []byte(`"name":"welcome"`))
	old, err := record.ReadOptions{}.Read(bytes.NewReader(data))
	if err != nil {
		log.Fatal(err)
	}
	cur, err := record.ReadOptions{}.Read(bytes.NewReader(renamed))
	if err != nil {
		log.Fatal(err)
	}
	d, err := record.DiffTraces(old, cur, record.DiffOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range d.Changes {
		for _, x := range c.Diffs {
			at := x.Path
			if x.Message != "" {
				at = x.Message + " " + at
			}
			fmt.Printf("%s: %s %s → %s\n", c.Where(false), at, x.Recorded, x.Live)
		}
	}
	fmt.Println(d.Summary())
	// Output:
	// exchange 2 tools/list: $.result.tools[?@.name=="greet"].name "greet" → "welcome"
	// exchange 3 tools/call "greet": request $.params.name "greet" → "welcome"
	// 3 exchange(s) compared, 2 change(s)
}

// A replayed server that fails the second tool call with a JSON-RPC error
// and holds every answer back as long as the recorded server took.
func ExampleParseFault() {
	f, err := record.ParseFault("tools/call#2:error=-32603,overloaded")
	if err != nil {
		log.Fatal(err)
	}
	pace, err := record.ParsePace("recorded")
	if err != nil {
		log.Fatal(err)
	}
	opts := record.ReplayOptions{Faults: []record.Fault{f}, Pace: pace}
	fmt.Println(opts.Faults[0].Method, opts.Faults[0].N, opts.Faults[0].Error.Code, opts.Faults[0].Error.Message, opts.Pace)
	// Output: tools/call 2 -32603 overloaded 1
}
