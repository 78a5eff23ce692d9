package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/seedhq/jsonrpc"
)

// output says how JSON is printed on one stream.
type output struct {
	pretty bool
	color  bool
}

// outputFor decides how to print JSON on f: pretty and coloured on a
// terminal, compact when piped; NO_COLOR and --color adjust the colour.
func outputFor(f *os.File) output {
	tty := isTerminal(f.Fd())
	o := output{pretty: tty, color: tty}
	if _, ok := os.LookupEnv("NO_COLOR"); ok && os.Getenv("NO_COLOR") != "" {
		o.color = false
	}
	switch global.color {
	case "always":
		o.color = true
	case "never":
		o.color = false
	}
	return o
}

// ANSI colours of the JSON printer.
const (
	colKey    = "\x1b[1;34m"
	colString = "\x1b[32m"
	colNumber = "\x1b[36m"
	colBool   = "\x1b[33m"
	colNull   = "\x1b[90m"
	colReset  = "\x1b[0m"
)

// format appends src (valid JSON) to dst, indented and/or coloured as o says.
// It keeps the text of numbers and strings and the order of members exactly.
func (o output) format(dst, src []byte) []byte {
	f := jsonFormatter{o: o, src: src, dst: dst}
	for i := 0; i < len(src); {
		i = f.token(i)
	}
	return f.dst
}

// jsonFormatter is one run of output.format: it copies src's tokens to
// dst, at depth levels of nesting.
type jsonFormatter struct {
	o        output
	src, dst []byte
	depth    int
}

// token copies the token at src[i] and returns where the next begins.
func (f *jsonFormatter) token(i int) int {
	switch c := f.src[i]; c {
	case ' ', '\t', '\n', '\r':
	case '{', '[':
		return f.open(i)
	case '}', ']':
		f.depth--
		f.newline()
		f.dst = append(f.dst, c)
	case ',':
		f.dst = append(f.dst, ',')
		f.newline()
	case ':':
		f.dst = append(f.dst, ':')
		if f.o.pretty {
			f.dst = append(f.dst, ' ')
		}
	case '"':
		return f.str(i)
	default:
		return f.literal(i)
	}
	return i + 1
}

// open copies an object or array's opening, or the whole of an empty one.
func (f *jsonFormatter) open(i int) int {
	c := f.src[i]
	if j := f.skipWS(i + 1); j < len(f.src) && (f.src[j] == '}' || f.src[j] == ']') {
		f.dst = append(f.dst, c, f.src[j])
		return j + 1
	}
	f.dst = append(f.dst, c)
	f.depth++
	f.newline()
	return i + 1
}

// str copies a string, coloured as a member name when a colon follows.
func (f *jsonFormatter) str(i int) int {
	j := i + 1
	for j < len(f.src) && f.src[j] != '"' {
		if f.src[j] == '\\' {
			j++
		}
		j++
	}
	j = min(j+1, len(f.src))
	col := colString
	if k := f.skipWS(j); k < len(f.src) && f.src[k] == ':' {
		col = colKey
	}
	f.paint(col, f.src[i:j])
	return j
}

// literal copies a number, true, false or null.
func (f *jsonFormatter) literal(i int) int {
	j := i + 1
	for j < len(f.src) && !bytes.ContainsRune([]byte(" \t\r\n,]}:"), rune(f.src[j])) {
		j++
	}
	col := colNumber
	switch f.src[i] {
	case 't', 'f':
		col = colBool
	case 'n':
		col = colNull
	}
	f.paint(col, f.src[i:j])
	return j
}

func (f *jsonFormatter) newline() {
	if f.o.pretty {
		f.dst = append(f.dst, '\n')
		for range f.depth {
			f.dst = append(f.dst, "  "...)
		}
	}
}

func (f *jsonFormatter) paint(col string, text []byte) {
	if f.o.color {
		f.dst = append(append(append(f.dst, col...), text...), colReset...)
		return
	}
	f.dst = append(f.dst, text...)
}

func (f *jsonFormatter) skipWS(i int) int {
	for i < len(f.src) && (f.src[i] == ' ' || f.src[i] == '\t' || f.src[i] == '\n' || f.src[i] == '\r') {
		i++
	}
	return i
}

// print writes v (valid JSON) and a newline to w.
func (o output) print(w io.Writer, v []byte) {
	b := o.format(make([]byte, 0, len(v)+len(v)/4+1), v)
	w.Write(append(b, '\n'))
}

// compact returns v without insignificant whitespace.
func compact(v []byte) []byte { return output{}.format(nil, v) }

// errorJSON encodes e as one compact JSON object.
func errorJSON(e *jsonrpc.Error) []byte {
	b := []byte(`{"code":`)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	m, _ := json.Marshal(e.Message)
	b = append(b, m...)
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, compact(e.Data)...)
	}
	return append(b, '}')
}

// checkJSON validates src as exactly one JSON value. Its error names the
// offending position (line, column and a caret under the text) and says
// what was expected.
func checkJSON(src []byte, what string) error {
	dec := jsontext.NewDecoder(bytes.NewReader(src))
	_, err := dec.ReadValue()
	if err == nil {
		if _, err2 := dec.ReadToken(); err2 != io.EOF {
			err = err2
			if err == nil {
				err = &jsontext.SyntacticError{ByteOffset: dec.InputOffset(), Err: errors.New("unexpected data after the JSON value")}
			}
		}
	}
	if err == nil {
		return nil
	}
	off := int64(len(src))
	msg := err.Error()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		off = se.ByteOffset
		if se.Err != nil {
			msg = se.Err.Error()
		}
		if errors.Is(se.Err, io.ErrUnexpectedEOF) {
			msg = "unexpected end of input (an unclosed bracket, brace or string?)"
		}
	} else if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		msg = "unexpected end of input (an unclosed bracket, brace or string?)"
	}
	msg = strings.TrimPrefix(msg, "jsontext: ")
	return usageErrorf("invalid JSON in %s at %s: %s\n%s", what, position(src, off), msg, caret(src, off))
}

// position returns "line L, column C (byte B)" for a byte offset, or
// "column C (byte B)" when src is one line.
func position(src []byte, off int64) string {
	if off > int64(len(src)) {
		off = int64(len(src))
	}
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	col := 1 + utf8.RuneCount(src[start:off])
	if !bytes.ContainsRune(bytes.TrimRight(src, "\n"), '\n') {
		return fmt.Sprintf("column %d (byte %d)", col, off)
	}
	return fmt.Sprintf("line %d, column %d (byte %d)", line, col, off)
}

// caret shows the line holding off with a ^ under the offending character.
func caret(src []byte, off int64) string {
	if off > int64(len(src)) {
		off = int64(len(src))
	}
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	end := bytes.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += int(off)
	}
	line := string(src[start:end])
	col := utf8.RuneCount(src[start:off])
	// Keep long lines readable: show at most 60 characters each side.
	runes := []rune(line)
	from := max(0, col-60)
	to := min(len(runes), col+60)
	prefix := ""
	if from > 0 {
		prefix = "…"
	}
	return "    " + prefix + string(runes[from:to]) + "\n    " + strings.Repeat(" ", col-from+utf8.RuneCountInString(prefix)) + "^"
}

// paramsKind names the kind of a JSON value by its first byte.
func jsonKind(v []byte) string {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
