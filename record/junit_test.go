package record

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// junitDoc is a JUnit report as a CI parser reads it.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Time     string `xml:"time,attr"`
		Cases    []struct {
			Class   string `xml:"classname,attr"`
			Name    string `xml:"name,attr"`
			Time    string `xml:"time,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, res *VerifyResult, opts JUnitOptions) (junitDoc, string) {
	t.Helper()
	var b bytes.Buffer
	if err := res.WriteJUnit(&b, opts); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	return doc, b.String()
}

func TestVerifyJUnit(t *testing.T) {
	live := append([]string(nil), verifyTrace...)
	// A renamed tool (its name holding a control character and markup)
	// and an error instead of a result.
	live[4] = `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo\u0007</failure>"},{"name":"clock"}]}}`
	live[8] = `< {"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}}`
	res := runVerify(t, mkTrace(verifyTrace...), liveReplay(t, mkTrace(live...)), VerifyOptions{})
	if len(res.Compared) != 3 {
		t.Fatalf("Compared = %+v", res.Compared)
	}
	doc, text := parseJUnit(t, res, JUnitOptions{Name: "t.jsonl"})
	if doc.Tests != 3 || doc.Failures != 2 || doc.Errors != 0 || len(doc.Suites) != 1 {
		t.Fatalf("counts: %+v\n%s", doc, text)
	}
	s := doc.Suites[0]
	if s.Name != "t.jsonl session 1" || s.Tests != 3 || s.Failures != 2 || s.Time == "" || len(s.Cases) != 3 {
		t.Fatalf("suite: %+v", s)
	}
	names := []string{"exchange 1 initialize", "exchange 2 tools/list", `exchange 3 tools/call "clock"`}
	for i, c := range s.Cases {
		if c.Name != names[i] || c.Class != "t.jsonl.session1" || c.Time == "" {
			t.Errorf("case %d: %+v", i, c)
		}
		if (c.Failure != nil) != (i > 0) {
			t.Errorf("case %d failure: %+v", i, c.Failure)
		}
	}
	f := s.Cases[1].Failure
	if f.Message != "the response differs" || !strings.Contains(f.Text, `$.result.tools[?@.name=="echo"].name`) ||
		!strings.Contains(f.Text, `recorded: "echo"`) || !strings.Contains(f.Text, "live:     \"echo\\u0007</failure>\"") {
		t.Errorf("failure: %+v", f)
	}
	f = s.Cases[2].Failure
	if !strings.Contains(f.Message, "result vs error") || !strings.Contains(f.Text, "$.error\n  recorded: (absent)\n  live:     {\"code\":-32603,\"message\":\"boom\"}") {
		t.Errorf("failure: %+v", f)
	}

	// A run that stopped early: its error is a test case in error.
	doc, _ = parseJUnit(t, &VerifyResult{}, JUnitOptions{Err: errors.New("cannot connect")})
	if doc.Tests != 1 || doc.Errors != 1 || doc.Suites[0].Cases[0].Error.Message != "cannot connect" {
		t.Errorf("error report: %+v", doc)
	}
}

func TestVerifyJUnitPassing(t *testing.T) {
	tr := mkTrace(verifyTrace...)
	res := runVerify(t, tr, liveReplay(t, tr), VerifyOptions{})
	doc, text := parseJUnit(t, res, JUnitOptions{Name: "t.jsonl"})
	if doc.Tests != 3 || doc.Failures != 0 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 3 {
		t.Fatalf("report:\n%s", text)
	}
}

// TestVerifyJUnitRuns: the verifications of several traces make one
// report, each trace's suites named by it, the counts over all; a trace
// that was not verified at all (nil result) is its error case.
func TestVerifyJUnitRuns(t *testing.T) {
	tr := mkTrace(verifyTrace...)
	ok := runVerify(t, tr, liveReplay(t, tr), VerifyOptions{})
	live := append([]string(nil), verifyTrace...)
	live[8] = `< {"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}}`
	bad := runVerify(t, tr, liveReplay(t, mkTrace(live...)), VerifyOptions{})
	var b bytes.Buffer
	err := WriteJUnitRuns(&b, "", 0,
		JUnitRun{Result: ok, Options: JUnitOptions{Name: "a.jsonl"}},
		JUnitRun{Result: bad, Options: JUnitOptions{Name: "b.jsonl"}},
		JUnitRun{Options: JUnitOptions{Name: "c.jsonl", Err: errors.New("cannot connect")}})
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	var names []string
	for _, s := range doc.Suites {
		names = append(names, s.Name)
	}
	if doc.Tests != 7 || doc.Failures != 1 || doc.Errors != 1 || strings.Join(names, "|") != "a.jsonl session 1|b.jsonl session 1|c.jsonl" {
		t.Errorf("report: tests %d failures %d errors %d suites %q\n%s", doc.Tests, doc.Failures, doc.Errors, names, b.String())
	}
	if !strings.Contains(b.String(), `<testsuites name="mcpx verify"`) {
		t.Errorf("report name:\n%s", b.String())
	}
}

// BenchmarkJUnitAllDiffer writes the report of a trace of 20,000
// exchanges that all differ, in 100 sessions. Each mismatch looked
// for its exchange among all those compared (and each exchange for its
// session's suite among the suites): 0.43 s per report, 0.09 s now,
// and growing with the square (verify --junit of a trace of 100,000
// calls that all differed took 59 s, 20 s without --junit).
func BenchmarkJUnitAllDiffer(b *testing.B) {
	res := &VerifyResult{Sessions: 100}
	for i := range 20000 {
		s, x := i%100+1, i/100+1
		res.Exchanges++
		res.Compared = append(res.Compared, Compared{Session: s, Exchange: x, Method: "tools/call"})
		res.Mismatches = append(res.Mismatches, Mismatch{Session: s, Exchange: x, Method: "tools/call", Problem: "the response differs",
			Diffs: []Difference{{Path: "$.result.content[0].text", Recorded: `"a"`, Live: `"b"`}}})
	}
	b.ResetTimer()
	for range b.N {
		if err := res.WriteJUnit(io.Discard, JUnitOptions{Name: "t.jsonl"}); err != nil {
			b.Fatal(err)
		}
	}
}
