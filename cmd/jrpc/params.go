package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// PARAMS are read the same way by every command and by the REPL: one JSON
// value, or key=value pairs whose value is JSON when it is valid JSON and a
// string otherwise (with a note on stderr when it looked like JSON), or -d
// data. The REPL first splits its line into the words a shell would have
// passed (splitParams); from there on it is the same code.

// buildParams turns the PARAMS arguments (or the -d data) into the params
// member: nil when there are none.
func buildParams(args []string, data string, stdin io.Reader) (json.RawMessage, error) {
	if data != "" {
		if len(args) > 0 {
			return nil, usageErrorf("give PARAMS either as arguments or with -d, not both")
		}
		src, what, err := readData(data, stdin)
		if err != nil {
			return nil, err
		}
		src = bytes.TrimSpace(src)
		if len(src) == 0 {
			return nil, nil
		}
		return structured(src, what)
	}
	if len(args) == 0 {
		return nil, nil
	}
	if len(args) == 1 {
		a := strings.TrimSpace(args[0])
		if a != "" && strings.ContainsRune("{[\"", rune(a[0])) {
			return structured([]byte(a), "PARAMS")
		}
		if !strings.Contains(a, "=") {
			if a != "" && checkJSON([]byte(a), "PARAMS") != nil {
				return nil, &exitError{code: exitUsage, err: fmt.Errorf("PARAMS %q is neither JSON nor key=value pairs", cut(a)),
					hint: fmt.Sprintf(`'[%q]' to send it as a positional param, or name=%s for a named one`, cut(a), cut(a))}
			}
			return structured([]byte(a), "PARAMS")
		}
	}
	return pairParams(args)
}

// pairParams builds a params object from key=value arguments.
func pairParams(args []string) (json.RawMessage, error) {
	b := []byte{'{'}
	seen := map[string]bool{}
	for i, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, usageErrorf("PARAMS argument %q is not key=value; give either one JSON value or key=value pairs", cut(a))
		}
		if seen[k] {
			return nil, usageErrorf("PARAMS name %q given twice", k)
		}
		seen[k] = true
		if i > 0 {
			b = append(b, ',')
		}
		kq, _ := json.Marshal(k)
		b = append(b, kq...)
		b = append(b, ':')
		b = appendValue(b, k, v)
	}
	return append(b, '}'), nil
}

// appendValue appends the value of key=value: its JSON when it is valid
// JSON, else a JSON string. A value that starts like JSON but is not (a
// shell ate its quotes: x={a:1}) is sent as a string, with a note saying
// so: a value is never changed silently.
func appendValue(b []byte, k, v string) []byte {
	if v != "" {
		err := checkJSON([]byte(v), "the value of "+k)
		if err == nil {
			return append(b, compact([]byte(v))...)
		}
		if strings.ContainsRune("{[\"", rune(v[0])) {
			fmt.Fprintf(os.Stderr, "jrpc: note: %s=%s is not valid JSON, so it is sent as a string (quote the whole pair: '%s=%s' in a shell)\n  %s\n",
				k, cut(v), k, cut(v), oneLine(errors.Unwrap(err).Error()))
		}
	}
	vq, _ := json.Marshal(v)
	return append(b, vq...)
}

// cut shortens s for a message: at most one line of 80 characters.
func cut(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + "…"
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return s
}

// structured validates src as the params member: JSON, an array or an object.
func structured(src []byte, what string) (json.RawMessage, error) {
	if err := checkJSON(src, what); err != nil {
		return nil, err
	}
	if k := jsonKind(src); k != "an object" && k != "an array" {
		if k == "null" {
			return nil, nil
		}
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s must be a JSON array or object (JSON-RPC params are structured), got %s", what, k),
			hint: fmt.Sprintf("'[%s]' to send it as the only positional param", cut(string(src)))}
	}
	return json.RawMessage(src), nil
}

// readData reads -d @file, -d @- (stdin) or -d 'literal JSON'.
func readData(data string, stdin io.Reader) ([]byte, string, error) {
	name, ok := strings.CutPrefix(data, "@")
	if !ok {
		return []byte(data), "-d", nil
	}
	if name == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, "", usageErrorf("cannot read params from standard input: %v", err)
		}
		return b, "standard input", nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, "", &exitError{code: exitUsage, err: fmt.Errorf("cannot read params: %v", err), hint: "check the path after -d @"}
	}
	return b, name, nil
}

// errIncomplete is splitParams's error for text whose JSON has not ended:
// the REPL reads on.
var errIncomplete = errors.New("unclosed JSON array, object or string")

// splitParams splits the PARAMS part of a REPL line into the arguments a
// shell would pass jrpc call for the same text typed inside single quotes,
// one per word: words end at white space outside JSON, a JSON value that
// starts a word or a value (x={"a": [1, 2]}, "a b") is kept whole and
// exactly as typed, and single quotes group text and are removed
// (x='{"a":1}', as on a command line).
func splitParams(text string) ([]string, error) {
	var words []string
	for i := 0; ; {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if i == len(text) {
			return words, nil
		}
		w, n, err := scanWord(text[i:])
		if err != nil {
			return nil, err
		}
		words = append(words, w)
		i += n
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// scanWord reads the word at the start of s and returns it and the bytes
// it took.
func scanWord(s string) (string, int, error) {
	var w strings.Builder
	valueAt := true // the next byte starts the word or its value
	i := 0
	for i < len(s) && !isSpace(s[i]) {
		c := s[i]
		switch {
		case valueAt && strings.IndexByte("{[\"", c) >= 0:
			n, err := jsonExtent(s[i:])
			if err != nil {
				return "", 0, err
			}
			w.WriteString(s[i : i+n])
			i += n
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", 0, errIncomplete
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 2
		default:
			w.WriteByte(c)
			i++
		}
		valueAt = c == '=' && strings.Count(w.String(), "=") == 1
	}
	return w.String(), i, nil
}

// jsonExtent returns the length of the JSON array, object or string at the
// start of s, by its brackets and quotes (not validated: buildParams does).
func jsonExtent(s string) (int, error) {
	depth, inStr := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inStr && c == '\\':
			i++
		case inStr:
			inStr = c != '"'
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
		if depth <= 0 && !inStr {
			return i + 1, nil
		}
	}
	return 0, errIncomplete
}
