package conformance

import (
	"encoding/xml"
	"io"
)

// WriteJUnit writes the report as JUnit XML, the test report format CI
// systems read: one testcase per check (classname: its level), a failure
// element for a failed check, a skipped element for a skipped one.
func (r *Report) WriteJUnit(w io.Writer) error {
	type message struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Failure   *message `xml:"failure,omitempty"`
		Skipped   *message `xml:"skipped,omitempty"`
	}
	type testsuite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	s := testsuite{Name: "JSON-RPC 2.0 conformance of " + r.Target, Tests: len(r.Checks)}
	for _, c := range r.Checks {
		tc := testcase{Name: c.Name + " (" + c.Spec + ")", Classname: string(c.Level)}
		switch c.Status {
		case Fail:
			s.Failures++
			tc.Failure = &message{c.Detail}
		case Skip:
			s.Skipped++
			tc.Skipped = &message{c.Detail}
		}
		s.Cases = append(s.Cases, tc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
