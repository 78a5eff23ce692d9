package convention

// Queued counts, by id key, the requests of a connection under a
// Convention that were read but whose handlers have not started: a cancel
// read after such a request, which the reading goroutine handles at once,
// must still reach it. It is not safe for concurrent use (a connection
// guards its set with its mutex); the zero value (nil) is an empty set.
type Queued map[string]*queuedID

type queuedID struct {
	n         int  // requests with this id read and not yet served
	cancelled bool // a cancel came for them
}

// Add records one more request with id key k as queued.
func (q *Queued) Add(k string) {
	if *q == nil {
		*q = Queued{}
	}
	e := (*q)[k]
	if e == nil {
		e = &queuedID{}
		(*q)[k] = e
	}
	e.n++
}

// Done forgets one request with id key k, once it has been served; the
// set goes back to nil when it is empty.
func (q *Queued) Done(k string) {
	if e := (*q)[k]; e != nil {
		if e.n--; e.n <= 0 {
			delete(*q, k)
		}
	}
	if len(*q) == 0 {
		*q = nil
	}
}

// Cancel marks k cancelled if it is queued, and reports whether that
// cancelled it (false for an id not queued and for a second cancel).
func (q Queued) Cancel(k string) bool {
	if e := q[k]; e != nil && !e.cancelled {
		e.cancelled = true
		return true
	}
	return false
}

// Cancelled reports whether a cancel came for the queued k.
func (q Queued) Cancelled(k string) bool {
	e := q[k]
	return e != nil && e.cancelled
}
