// Package resultstream is a JSON array result written and read element by
// element, with no transport or server in it.
//
// Writing (Encoder): the elements are encoded one by one into a buffer
// that, once over a chunk's size, is written through a Writer the caller
// opens on demand; a result that ends within a chunk is never opened and
// goes as one ordinary message. An element that cannot be encoded is an
// *ElemError.
//
// Reading (Result, ReadResponse, EachElement, LimitReader): a response
// object is read from a decoder as it arrives, its result handed to a loop
// element by element, each element bounded by a size limit rather than
// the whole; ResponseID decides from the first bytes of a message whether
// it is a response (id first, then an array result) that may be read so.
// Errors of a response that breaks the protocol match ErrInvalidResponse.
//
// It imports nothing of the root package (which re-exports
// ErrInvalidResponse); internal/wire encodes the elements.
package resultstream
