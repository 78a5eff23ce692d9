// Package resultstream is a JSON array result written and read element by
// element, with no transport or server in it (it imports nothing of the
// root package, which re-exports ErrInvalidResponse).
//
// Writing (Encoder): elements are gathered in a buffer written, once over
// a chunk, through a Writer opened on demand; a result that ends within a
// chunk goes as one ordinary message.
//
// Reading (Result, ReadResponse, EachElement, LimitReader): a response is
// read as it arrives, its result handed to a loop element by element, each
// element (not the whole) bounded by the size limit; ResponseID decides
// from a message's first bytes whether it may be read so. Errors of a
// response that breaks the protocol match ErrInvalidResponse.
package resultstream
