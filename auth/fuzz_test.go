package auth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/seedhq/jsonrpc/auth"
)

// FuzzBearerFrontDoor feeds arbitrary Authorization header values to the
// token parsing front door (the header parser, then the shared-secret
// verifier): it never panics, a token it extracts is a well-formed
// b64token that parses back the same, and nothing but a token signed with
// the secret is accepted.
func FuzzBearerFrontDoor(f *testing.F) {
	valid := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3MDAwMDAwMDB9.c2ln"
	for _, s := range []string{
		"Bearer " + valid, "bearer " + valid, "BEARER\t" + valid, "  Bearer   " + valid + "  ",
		"Bearer", "Bearer ", "Bearer  ", "Basic dXNlcjpwYXNz", "Bearer a b", "Bearer ====", "Bearer abc==",
		"Bearer \x00", "Bearer é", "Bearer" + strings.Repeat("x", 100), "",
		"Bearer eyJhbGciOiJub25lIn0.eyJpYXQiOjE3MDAwMDAwMDB9.",
	} {
		f.Add(s)
	}
	secret := []byte("0123456789abcdef0123456789abcdef")
	f.Fuzz(func(t *testing.T, header string) {
		tok, err := auth.ParseBearer(header)
		if err != nil {
			return
		}
		if tok == "" || strings.ContainsAny(tok, " \t\r\n") || len(tok) > 16<<10 {
			t.Fatalf("%q gave the token %q", header, tok)
		}
		if again, err := auth.ParseBearer("Bearer " + tok); err != nil || again != tok {
			t.Fatalf("%q: token %q parses back as %q, %v", header, tok, again, err)
		}
		if _, err := auth.VerifyShared(tok, secret, time.Unix(1700000000, 0)); err == nil {
			// Only a real signature passes: check it is one.
			parsed, perr := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.HS256})
			if perr != nil || parsed.Claims(secret, &jwt.Claims{}) != nil {
				t.Fatalf("accepted an unsigned token %q", tok)
			}
		}
	})
}
