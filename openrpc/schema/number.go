package schema

import (
	"bytes"
	"math/big"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Numbers are compared exactly, as the decimals they are written as: a
// JSON number is never rounded to a float64 before it is compared with a
// bound, an enum value or another item. A schema's numbers are float64 (the
// type of Schema's fields); each stands for the shortest decimal that
// rounds to it, which is the number written in the schema whenever it has
// at most 15 significant digits.

// decimal is a number as sign, significant digits and exponent: its value
// is 0.digits × 10^exp. Zero has no digits.
type decimal struct {
	neg    bool
	digits []byte // no leading or trailing zeros
	exp    int64
}

const maxExp = 1 << 40 // exponents saturate here (far beyond any float64)

// parseDecimal parses JSON number lit, appending its digits to buf.
func parseDecimal(lit, buf []byte) (decimal, bool) {
	var d decimal
	i := 0
	if i < len(lit) && lit[i] == '-' {
		d.neg = true
		i++
	}
	start := len(buf)
	var intChars, fracDigits int64
	buf, intChars, i = appendDigits(buf, start, lit, i)
	if i < len(lit) && lit[i] == '.' {
		buf, fracDigits, i = appendDigits(buf, start, lit, i+1)
	}
	e, i, ok := parseExponent(lit, i)
	if !ok || i != len(lit) || intChars == 0 {
		return d, false
	}
	digits := buf[start:]
	// The value is N × 10^(e - fracDigits), N the integer of the digits.
	trimmed := bytes.TrimRight(digits, "0")
	if len(trimmed) == 0 {
		return decimal{}, true // zero (of either sign)
	}
	d.digits = trimmed
	d.exp = min(max(int64(len(digits))-fracDigits+e, -maxExp), maxExp)
	return d, true
}

// appendDigits appends the run of digits at lit[i:] to buf, without the
// number's leading zeros (those while buf[start:] is empty). It returns
// buf, how many digits it read and the index after them.
func appendDigits(buf []byte, start int, lit []byte, i int) ([]byte, int64, int) {
	var n int64
	for ; i < len(lit) && lit[i] >= '0' && lit[i] <= '9'; i++ {
		n++
		if len(buf) > start || lit[i] != '0' {
			buf = append(buf, lit[i])
		}
	}
	return buf, n, i
}

// parseExponent reads the exponent at lit[i:], if there is one (0
// otherwise): it returns its value (saturated at maxExp) and the index
// after it, or false for an exponent without digits.
func parseExponent(lit []byte, i int) (e int64, next int, ok bool) {
	if i >= len(lit) || (lit[i] != 'e' && lit[i] != 'E') {
		return 0, i, true
	}
	i++
	neg := false
	if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
		neg = lit[i] == '-'
		i++
	}
	if i == len(lit) {
		return 0, i, false
	}
	for ; i < len(lit) && lit[i] >= '0' && lit[i] <= '9'; i++ {
		if e < maxExp {
			e = e*10 + int64(lit[i]-'0')
		}
	}
	if neg {
		e = -e
	}
	return e, i, true
}

// floatDecimal returns the shortest decimal that rounds to f.
func floatDecimal(f float64) decimal {
	d, _ := parseDecimal(strconv.AppendFloat(nil, f, 'e', -1, 64), nil)
	return d
}

// cmpDecimal compares a and b exactly: -1, 0 or +1.
func cmpDecimal(a, b decimal) int {
	sa, sb := a.sign(), b.sign()
	if sa != sb {
		if sa < sb {
			return -1
		}
		return 1
	}
	if sa == 0 {
		return 0
	}
	m := 0 // compare magnitudes
	switch {
	case a.exp != b.exp:
		m = -1
		if a.exp > b.exp {
			m = 1
		}
	default:
		m = bytes.Compare(a.digits, b.digits)
	}
	return m * sa
}

func (d decimal) sign() int {
	switch {
	case len(d.digits) == 0:
		return 0
	case d.neg:
		return -1
	}
	return 1
}

func (d decimal) isInteger() bool { return len(d.digits) == 0 || d.exp >= int64(len(d.digits)) }

// isMultipleOf reports whether d is an integer multiple of m (m > 0).
func (d decimal) isMultipleOf(m decimal) bool {
	if len(d.digits) == 0 {
		return true
	}
	// d = X × 10^dx and m = M × 10^mx with X and M integers.
	dx := d.exp - int64(len(d.digits))
	mx := m.exp - int64(len(m.digits))
	k := dx - mx
	var x, mm big.Int
	x.SetString(string(d.digits), 10)
	mm.SetString(string(m.digits), 10)
	if k >= 0 { // M | X × 10^k
		var p big.Int
		p.Exp(big.NewInt(10), big.NewInt(k), &mm)
		x.Mul(&x, &p)
		return x.Mod(&x, &mm).Sign() == 0
	}
	if -k > int64(len(d.digits)) { // |X| < 10^-k <= M × 10^-k
		return false
	}
	var p big.Int
	p.Exp(big.NewInt(10), big.NewInt(-k), nil)
	mm.Mul(&mm, &p)
	return x.Mod(&x, &mm).Sign() == 0
}

// isIntegerLiteral reports whether JSON number lit is an integer (1.0 and
// 1e2 are).
func isIntegerLiteral(lit, buf []byte) bool {
	if !bytes.ContainsAny(lit, ".eE") {
		return true
	}
	d, ok := parseDecimal(lit, buf)
	return ok && d.isInteger()
}

// canonical appends a form of JSON value raw to dst that is equal for two
// values exactly when JSON Schema calls them equal: numbers by value (1.0
// and 1 are equal), strings after unescaping, objects whatever the order of
// their members. Each part is self-delimiting.
func canonical(dst, raw []byte) ([]byte, bool) {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	raw = bytes.TrimRight(raw, " \t\r\n")
	if len(raw) == 0 {
		return dst, false
	}
	switch raw[0] {
	case 'n':
		return append(dst, 'z'), true
	case 't', 'f':
		return append(dst, raw[0]), true
	case '"':
		return canonicalString(dst, raw)
	case '[', '{':
		return canonicalContainer(dst, raw)
	}
	d, ok := parseDecimal(raw, nil)
	if !ok {
		return dst, false
	}
	return d.appendCanonical(dst), true
}

// canonicalString appends the canonical form of the JSON string raw.
func canonicalString(dst, raw []byte) ([]byte, bool) {
	s := raw[1 : len(raw)-1]
	if hasEscape(raw) {
		u, err := jsontext.AppendUnquote(nil, raw)
		if err != nil {
			return dst, false
		}
		s = u
	}
	dst = append(dst, 's')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, ':')
	return append(dst, s...), true
}

// canonicalContainer appends the canonical form of the JSON array or
// object raw: its items in order, or its members sorted by name.
func canonicalContainer(dst, raw []byte) ([]byte, bool) {
	sc := walker{data: raw, pos: 1}
	closer := byte(']')
	if raw[0] == '{' {
		closer = '}'
	}
	type member struct{ name, value []byte }
	var members []member
	for !sc.expect(closer) {
		var name []byte
		if closer == '}' {
			n, ok := canonical(nil, sc.skip())
			if !ok || !sc.expect(':') {
				return dst, false
			}
			name = n
		}
		v, ok := canonical(nil, sc.skip())
		if !ok || sc.err {
			return dst, false
		}
		members = append(members, member{name, v})
		if !sc.expect(',') {
			if !sc.expect(closer) {
				return dst, false
			}
			break
		}
	}
	if closer == '}' {
		slices.SortFunc(members, func(a, b member) int { return bytes.Compare(a.name, b.name) })
	}
	dst = append(dst, raw[0])
	for _, m := range members {
		dst = append(dst, m.name...)
		dst = append(dst, m.value...)
	}
	return append(dst, closer), true
}

func (d decimal) appendCanonical(dst []byte) []byte {
	dst = append(dst, 'n')
	if len(d.digits) == 0 {
		return append(dst, '0', ';')
	}
	if d.neg {
		dst = append(dst, '-')
	}
	dst = append(dst, d.digits...)
	dst = append(dst, 'e')
	dst = strconv.AppendInt(dst, d.exp, 10)
	return append(dst, ';')
}
