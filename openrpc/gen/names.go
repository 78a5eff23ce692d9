package gen

import (
	"strconv"
	"strings"
	"unicode"
)

// words splits s on every character that is not a letter or a digit.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	})
}

// exported joins the parts of s with each part's first letter upper-cased
// and the rest kept as is, except Go's initialisms, which are all capitals
// (as staticcheck's ST1003 wants): eth_getBlockByNumber →
// EthGetBlockByNumber, getPetById → GetPetByID, rpc.discover → RPCDiscover,
// user_ids → UserIDs. It returns "" when s has no letter or digit.
func exported(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		for _, h := range humps(w) {
			b.WriteString(initialism(h))
		}
	}
	return b.String()
}

// humps splits a camel-case word where a new word begins: before a capital
// that follows a lower-case letter or a digit, and before the last capital
// of a run that a lower-case letter follows (getHTTPResponse → get, HTTP,
// Response).
func humps(w string) []string {
	r := []rune(w)
	var out []string
	start := 0
	for i := 1; i < len(r); i++ {
		if !unicode.IsUpper(r[i]) {
			continue
		}
		prev := r[i-1]
		if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && i+1 < len(r) && unicode.IsLower(r[i+1]) {
			out = append(out, string(r[start:i]))
			start = i
		}
	}
	return append(out, string(r[start:]))
}

// initialism returns a word with its first letter upper-cased, or in
// capitals when it is one of Go's initialisms (Id → ID, url → URL, and a
// plural: ids → IDs).
func initialism(h string) string {
	u := strings.ToUpper(h)
	switch {
	case goInitialisms[u]:
		return u
	case len(h) > 2 && h[len(h)-1] == 's' && goInitialisms[u[:len(u)-1]]:
		return u[:len(u)-1] + "s"
	}
	return strings.ToUpper(h[:1]) + h[1:]
}

// goInitialisms are the words Go code spells in capitals (the list of
// golint and staticcheck).
var goInitialisms = setOf("ACL", "API", "ASCII", "CPU", "CSS", "DNS", "EOF", "GUID", "HTML", "HTTP",
	"HTTPS", "ID", "IP", "JSON", "LHS", "QPS", "RAM", "RHS", "RPC", "SLA", "SMTP", "SQL", "SSH",
	"TCP", "TLS", "TTL", "UDP", "UI", "UID", "UUID", "URI", "URL", "UTF8", "VM", "XML", "XMPP",
	"XSRF", "XSS")

// lowerFirst lower-cases the first letter of an exported name
// (EthGetBlockByNumber → ethGetBlockByNumber; a leading run of capitals is
// lowered as one word: URLPath → urlPath).
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	n := 0
	for n < len(r) && unicode.IsUpper(r[n]) {
		n++
	}
	switch {
	case n == 0:
		return s
	case n == 1 || n == len(r):
		n = max(n, 1)
	default:
		n-- // keep the capital that starts the next word
	}
	for i := 0; i < n; i++ {
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}

// typeName is the Go (and TypeScript) name of a type called s, or "" if s
// has no letter or digit. A name starting with a digit gains a prefix.
func typeName(s string) string {
	n := exported(s)
	if n != "" && unicode.IsDigit(rune(n[0])) {
		n = "T" + n
	}
	return n
}

var goKeywords = setOf("break", "case", "chan", "const", "continue", "default", "defer", "else",
	"fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map", "package",
	"range", "return", "select", "struct", "switch", "type", "var")

var goPredeclared = setOf("any", "append", "bool", "byte", "cap", "clear", "close", "comparable",
	"complex", "complex64", "complex128", "copy", "delete", "error", "false", "float32", "float64",
	"imag", "int", "int8", "int16", "int32", "int64", "iota", "len", "make", "max", "min", "new",
	"nil", "panic", "print", "println", "real", "recover", "rune", "string", "true", "uint",
	"uint8", "uint16", "uint32", "uint64", "uintptr")

var tsReserved = setOf("break", "case", "catch", "class", "const", "continue", "debugger",
	"default", "delete", "do", "else", "enum", "export", "extends", "false", "finally", "for",
	"function", "if", "import", "in", "instanceof", "new", "null", "return", "super", "switch",
	"this", "throw", "true", "try", "typeof", "var", "void", "while", "with", "as", "implements",
	"interface", "let", "package", "private", "protected", "public", "static", "yield", "any",
	"boolean", "number", "string", "symbol", "type", "from", "of", "arguments", "eval", "await",
	"async", "undefined", "unknown", "never", "object")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// namer hands out unique names: the first to ask for a name gets it, later
// ones get it with a number.
type namer struct {
	taken map[string]bool
}

func newNamer(reserved ...string) *namer {
	return &namer{taken: setOf(reserved...)}
}

// unique returns name if free, else name2, name3...; it takes the result.
func (n *namer) unique(name string) string {
	out := name
	for i := 2; n.taken[out]; i++ {
		out = name + strconv.Itoa(i)
	}
	n.taken[out] = true
	return out
}

// localName is a parameter's or a variable's name for s: lowerCamel, never
// a keyword or a reserved name (those gain "Arg"), "argN" when s has no
// letter or digit.
func localName(s string, i int, reserved map[string]bool) string {
	n := lowerFirst(typeName(s))
	if n == "" || unicode.IsDigit(rune(n[0])) {
		n = "arg" + strconv.Itoa(i)
	}
	if reserved[n] {
		n += "Arg"
	}
	return n
}
