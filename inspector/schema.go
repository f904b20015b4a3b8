package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON Schema that validates values and explains
// failures in one line. It asserts formats (email, uri, date, date-time):
// the elicitation spec lists them as part of the form contract.
type Schema struct {
	s *jsonschema.Schema
}

var schemaSeq atomic.Int64

// CompileSchema compiles a JSON Schema document. A $schema naming a
// dialect the library does not know is dropped rather than fetched: mcpx
// never goes to the network for a server's schema.
func CompileSchema(raw json.RawMessage) (*Schema, error) { return compileSchema(raw, true) }

// compileSchema compiles raw, asserting formats or leaving them the
// annotations JSON Schema 2020-12 makes them by default (what a tool's
// inputSchema gets: a server may accept what a format check would not).
func compileSchema(raw json.RawMessage, assertFormat bool) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	s, err := compileDoc(doc, assertFormat)
	if err != nil {
		if m, ok := doc.(map[string]any); ok {
			if _, has := m["$schema"]; has {
				delete(m, "$schema")
				if s2, err2 := compileDoc(m, assertFormat); err2 == nil {
					return s2, nil
				}
			}
		}
		return nil, err
	}
	return s, nil
}

func compileDoc(doc any, assertFormat bool) (*Schema, error) {
	c := jsonschema.NewCompiler()
	if assertFormat {
		c.AssertFormat()
	}
	c.UseLoader(noLoader{})
	url := fmt.Sprintf("mcpx:///schema/%d.json", schemaSeq.Add(1))
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %s", firstLineOf(err.Error()))
	}
	return &Schema{s: s}, nil
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("mcpx does not fetch schema %s", url)
}

// Validate checks raw against the schema. The error lists each failure as
// "at /path: reason".
func (s *Schema) Validate(raw json.RawMessage) error {
	problems, err := s.problems(raw)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// problems returns each way raw fails the schema, one line each; err is
// for raw that is not JSON.
func (s *Schema) problems(raw json.RawMessage) ([]string, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	err = s.s.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return validationLeaves(ve), nil
	}
	if err != nil {
		return []string{err.Error()}, nil
	}
	return nil, nil
}

var schemaPrinter = message.NewPrinter(language.English)

// validationLeaves flattens a validation error tree to its leaf messages.
func validationLeaves(ve *jsonschema.ValidationError) []string {
	if len(ve.Causes) == 0 {
		msg := ve.ErrorKind.LocalizedString(schemaPrinter)
		loc := "/" + strings.Join(ve.InstanceLocation, "/")
		if loc == "/" {
			return []string{msg}
		}
		return []string{"at " + loc + ": " + msg}
	}
	var out []string
	for _, c := range ve.Causes {
		out = append(out, validationLeaves(c)...)
	}
	return out
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
