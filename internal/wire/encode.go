package wire

import (
	"unicode/utf8"
	"unsafe"
)

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD so
// that the output is always valid.
func AppendString(b []byte, s string) []byte {
	b, _ = AppendQuote(b, s, false)
	return b
}

// escapes and escapesV2 are the escapes of the ASCII bytes appendQuote
// escapes (below 0x20, '"' and '\\'), without and with v2's rules.
var escapes, escapesV2 = escapeTables()

func escapeTables() (ours, v2 [0x5d]string) {
	const hex = "0123456789abcdef"
	for c := range 0x20 {
		ours[c] = `\u00` + string(hex[c>>4]) + string(hex[c&0xF])
	}
	ours['\n'], ours['\r'], ours['\t'] = `\n`, `\r`, `\t`
	ours['"'], ours['\\'] = `\"`, `\\`
	v2 = ours
	v2['\b'], v2['\f'] = `\b`, `\f`
	return ours, v2
}

// AppendQuote appends s as a JSON string. With v2Rules it writes what
// encoding/json/v2 writes by default (\b and \f short, <, >, & and
// U+2028/9 as they are) and reports false on invalid UTF-8 (which v2
// refuses); otherwise \b and \f are \u escapes and invalid UTF-8 becomes
// U+FFFD, so the output is always valid. Plain ASCII is checked eight bytes
// at a time and copied in runs (plainRun, which checks a long string that
// starts plain whole first).
func AppendQuote(b []byte, s string, v2Rules bool) ([]byte, bool) {
	b = append(b, '"')
	start, i := 0, 0
	raw := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	tried := false                                    // plainRun looks at the whole rest once per string
	esc := &escapes
	if v2Rules {
		esc = &escapesV2
	}
	for i < len(s) {
		i = plainRun(raw, i, &tried)
		// Byte by byte until eight plain bytes in a row (then words again),
		// so that text dense with escapes or non-ASCII letters does not
		// pay for a failed word test at every byte.
		for plain := 0; i < len(s) && plain < 8; {
			c := s[i]
			if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
				i++
				plain++
				continue
			}
			if c < utf8.RuneSelf {
				b = append(append(b, s[start:i]...), esc[c]...)
				i++
				start, plain = i, 0
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				if v2Rules {
					return b, false
				}
				b = append(b, s[start:i]...)
				b = append(b, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			plain += size
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"'), true
}
