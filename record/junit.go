package record

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// JUnitOptions configure VerifyResult.WriteJUnit.
type JUnitOptions struct {
	// Name names the report and prefixes its suites and test classes:
	// usually the trace's file name.
	Name string
	// Time is how long the verification took (the report's time).
	Time time.Duration
	// Err is why the verification stopped early (it could not connect,
	// the trace could not be read), if it did; it becomes a test case in
	// error.
	Err error
}

// WriteJUnit writes the result as a JUnit XML report, the format CI
// systems (GitHub Actions reporters, GitLab, Jenkins) show as test
// results: <testsuites> with one <testsuite> per session of the trace and
// in it one <testcase> per exchange compared ("exchange 3 tools/call
// "echo""), timed by the live server's answer. A mismatch is the test
// case's <failure>: its message is the problem, its text one block per
// difference with the JSONPath and both values (recorded, live). A
// mismatch about no exchange (what the server sent outside any request, a
// session that could not be verified) is a failing test case of its own,
// and opts.Err a test case in <error>. Counts (tests, failures, errors)
// are on every suite and on the whole. Characters XML cannot hold
// (control characters a server sent) become U+FFFD, as encoding/xml
// writes them.
func (r *VerifyResult) WriteJUnit(w io.Writer, opts JUnitOptions) error {
	return WriteJUnitRuns(w, opts.Name, opts.Time, JUnitRun{Result: r, Options: opts})
}

// JUnitRun is the verification of one trace, for a report of several
// (WriteJUnitRuns).
type JUnitRun struct {
	// Result is what was verified; nil when nothing was (Options.Err
	// says why).
	Result *VerifyResult
	// Options name the trace's suites and say how long it took and why
	// it stopped early, as for WriteJUnit.
	Options JUnitOptions
}

// WriteJUnitRuns writes the verifications of several traces as one JUnit
// XML report (mcpx verify with several files): the suites of each, named
// by its Options.Name, one after the other, as WriteJUnit writes those of
// one. name names the report ("mcpx verify" when empty) and elapsed is its
// time.
func WriteJUnitRuns(w io.Writer, name string, elapsed time.Duration, runs ...JUnitRun) error {
	if name == "" {
		name = "mcpx verify"
	}
	var suites []*junitSuite
	for _, run := range runs {
		suites = append(suites, run.Result.junitSuites(run.Options)...)
	}
	doc := junitSuites{Name: name, Time: seconds(elapsed)}
	for _, s := range suites {
		for _, c := range s.Cases {
			s.Tests++
			if c.Failure != nil {
				s.Failures++
			}
			if c.Error != nil {
				s.Errors++
			}
		}
		s.TimeAttr = seconds(s.Time)
		doc.Tests, doc.Failures, doc.Errors = doc.Tests+s.Tests, doc.Failures+s.Failures, doc.Errors+s.Errors
		doc.Suites = append(doc.Suites, *s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("JUnit report: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("JUnit report: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitSuites returns the suites of one trace's verification (r may be
// nil: nothing was verified).
func (r *VerifyResult) junitSuites(opts JUnitOptions) []*junitSuite {
	if r == nil {
		r = &VerifyResult{}
	}
	name := opts.Name
	if name == "" {
		name = "mcpx verify"
	}
	type suiteAcc struct {
		n     int
		suite *junitSuite
	}
	// Suites and exchanges are looked up by number: a trace of many
	// exchanges (and sessions) that all differ is not quadratic.
	var suites []*suiteAcc
	bySession := map[int]*junitSuite{}
	suiteFor := func(n int) *junitSuite {
		if s := bySession[n]; s != nil {
			return s
		}
		s := &suiteAcc{n: n, suite: &junitSuite{Name: fmt.Sprintf("%s session %d", name, n)}}
		suites = append(suites, s)
		bySession[n] = s.suite
		return s.suite
	}
	class := func(n int) string { return fmt.Sprintf("%s.session%d", name, n) }
	byExchange := map[[2]int]Mismatch{}
	for _, m := range r.Mismatches {
		if m.Exchange > 0 {
			byExchange[[2]int{m.Session, m.Exchange}] = m
		}
	}
	compared := make(map[[2]int]bool, len(r.Compared))
	for _, c := range r.Compared {
		compared[[2]int{c.Session, c.Exchange}] = true
		s := suiteFor(c.Session)
		m := Mismatch{Session: c.Session, Exchange: c.Exchange, Method: c.Method, Request: c.Request}
		tc := junitCase{Class: class(c.Session), Name: m.Where(false), Time: seconds(c.Time)}
		if mm, ok := byExchange[[2]int{c.Session, c.Exchange}]; ok && !c.OK {
			tc.Failure = junitFailure(mm)
		}
		s.Cases = append(s.Cases, tc)
		s.Time += c.Time
	}
	for _, m := range r.Mismatches {
		if m.Exchange > 0 && compared[[2]int{m.Session, m.Exchange}] {
			continue
		}
		s := suiteFor(m.Session)
		label := m.Where(false)
		if m.Exchange == 0 && m.Method == "" {
			label = "the server's messages outside any request"
		}
		s.Cases = append(s.Cases, junitCase{Class: class(m.Session), Name: label, Time: seconds(0), Failure: junitFailure(m)})
	}
	if opts.Err != nil {
		s := &junitSuite{Name: name}
		suites = append(suites, &suiteAcc{n: -1, suite: s})
		s.Cases = append(s.Cases, junitCase{Class: name, Name: "verify", Time: seconds(0),
			Error: &junitProblem{Message: opts.Err.Error(), Type: "error", Text: opts.Err.Error()}})
	}
	out := make([]*junitSuite, len(suites))
	for i, a := range suites {
		out[i] = a.suite
	}
	return out
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// junitFailure renders a mismatch as a test case's failure: each
// difference with its JSONPath, the recorded value and the live one.
func junitFailure(m Mismatch) *junitProblem {
	var b strings.Builder
	if len(m.Request) > 0 && string(m.Request) != "null" {
		fmt.Fprintf(&b, "params: %s\n", m.Request)
	}
	for _, d := range m.Diffs {
		at := d.Path
		if d.Message != "" {
			at = d.Message + " " + d.Path
		}
		fmt.Fprintf(&b, "%s\n  recorded: %s\n  live:     %s\n", at, absentText(d.Recorded), absentText(d.Live))
	}
	if m.MoreDiffs > 0 {
		fmt.Fprintf(&b, "… and %d more difference(s)\n", m.MoreDiffs)
	}
	return &junitProblem{Message: m.Problem, Type: "mismatch", Text: b.String()}
}

func absentText(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

// The JUnit XML elements (the schema Ant's JUnit task introduced, as CI
// systems read it).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string        `xml:"name,attr"`
	Tests    int           `xml:"tests,attr"`
	Failures int           `xml:"failures,attr"`
	Errors   int           `xml:"errors,attr"`
	Skipped  int           `xml:"skipped,attr"`
	TimeAttr string        `xml:"time,attr"`
	Time     time.Duration `xml:"-"`
	Cases    []junitCase   `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitProblem `xml:"failure,omitempty"`
	Error   *junitProblem `xml:"error,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}
