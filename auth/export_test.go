package auth

import "time"

// SetCertReloadCheck sets how often served certificates are checked for a change.
func SetCertReloadCheck(d time.Duration) { certReloadCheck = d }

// VerifyShared verifies a shared-secret token at a given time.
func VerifyShared(tok string, key []byte, now time.Time) (Principal, error) {
	return verifyShared(tok, key, now)
}

// ParseBearer parses an Authorization header value.
func ParseBearer(v string) (string, error) { return parseBearer(v) }
