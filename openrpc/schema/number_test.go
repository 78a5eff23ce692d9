package schema

import (
	"math/big"
	"strconv"
	"testing"
)

// FuzzDecimal checks the exact comparison of a JSON number with a float64
// bound, integrality and canonical equality against math/big.
func FuzzDecimal(f *testing.F) {
	for _, s := range []string{"0", "-0", "1", "1.0", "9007199254740993", "0.1000000000000000001", "1e-400", "-12.5e3", "100", "0.000", "123456789012345678901234567890e-20"} {
		f.Add(s, 9007199254740992.0)
		f.Add(s, 0.1)
	}
	f.Fuzz(func(t *testing.T, lit string, bound float64) {
		d, ok := parseDecimal([]byte(lit), nil)
		var r big.Rat
		if !ok || len(lit) > 64 || !jsonNumber(lit) {
			return
		}
		if _, okr := r.SetString(lit); !okr {
			return
		}
		if bound != bound || bound > 1e300 || bound < -1e300 {
			return
		}
		var b big.Rat
		b.SetString(strconv.FormatFloat(bound, 'e', -1, 64)) // the decimal the bound stands for
		if got, want := cmpDecimal(d, floatDecimal(bound)), r.Cmp(&b); got != want {
			t.Fatalf("cmp(%s, %v) = %d, want %d", lit, bound, got, want)
		}
		if got, want := d.isInteger(), r.IsInt(); got != want {
			t.Fatalf("isInteger(%s) = %v, want %v", lit, got, want)
		}
		c1, _ := canonical(nil, []byte(lit))
		c2, _ := canonical(nil, []byte(r.FloatString(40)))
		if r.Cmp(new(big.Rat).SetFrac(new(big.Int).SetBytes(nil), big.NewInt(1))) != 0 && len(r.FloatString(40)) < 100 {
			var back big.Rat
			back.SetString(r.FloatString(40))
			if back.Cmp(&r) == 0 && string(c1) != string(c2) {
				t.Fatalf("canonical(%s) = %s, canonical(%s) = %s", lit, c1, r.FloatString(40), c2)
			}
		}
	})
}

// jsonNumber reports whether s is a JSON number.
func jsonNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i == len(s) {
		return false
	}
	if s[i] == '0' {
		i++
	} else {
		if s[i] < '1' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(s)
}
