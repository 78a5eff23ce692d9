package redial

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Pool spreads use over endpoints, from the next one in turn: an endpoint
// that cannot be reached is set aside, and probed (dialled again, then
// checked) every interval until it answers. Safe for concurrent use.
type Pool[C comparable] struct {
	eps      []*Endpoint[C]
	next     atomic.Uint64 // round robin
	interval time.Duration
	check    func(ctx context.Context, c C) error
	close    func(c C) error
	stop     context.Context // ended by Close (halt)
	halt     context.CancelFunc
	wg       sync.WaitGroup
}

// Endpoint is one endpoint of a Pool.
type Endpoint[C comparable] struct {
	dial func(context.Context) (C, error)

	mu     sync.Mutex
	client C // the zero C until dialled, and once set aside
	down   bool
	probed bool // a probe runs
}

// NewPool returns a pool over the endpoints that dials dial; they are
// dialled when first used, and their clients closed with close. A probe's
// dial is followed by check (nil error: the endpoint is back); interval
// (> 0) is the probes' period and the bound of each.
func NewPool[C comparable](dials []func(context.Context) (C, error), interval time.Duration, check func(context.Context, C) error, close func(C) error) *Pool[C] {
	p := &Pool[C]{interval: interval, check: check, close: close}
	p.stop, p.halt = context.WithCancel(context.Background())
	for _, d := range dials {
		p.eps = append(p.eps, &Endpoint[C]{dial: d})
	}
	return p
}

// InTurn yields every endpoint once, from the next one in turn.
func (p *Pool[C]) InTurn(yield func(*Endpoint[C]) bool) {
	start := p.next.Add(1)
	for i := range len(p.eps) {
		if !yield(p.eps[(int(start)+i)%len(p.eps)]) {
			return
		}
	}
}

// Get returns the endpoint's client, dialling it when needed; an endpoint
// that cannot be dialled is set aside, and Get reports false for it.
func (p *Pool[C]) Get(ctx context.Context, ep *Endpoint[C]) (C, bool) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	var none C
	if ep.down {
		return none, false
	}
	if ep.client == none {
		c, err := ep.dial(ctx)
		if err != nil {
			p.setAsideLocked(ep, none)
			return none, false
		}
		ep.client = c
	}
	return ep.client, true
}

// SetAside marks ep down (if its client is still c, which is closed) and
// starts its probe.
func (p *Pool[C]) SetAside(ep *Endpoint[C], c C) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.client == c {
		p.setAsideLocked(ep, c)
	}
}

func (p *Pool[C]) setAsideLocked(ep *Endpoint[C], c C) {
	var none C
	if c != none {
		go p.close(c)
	}
	ep.client, ep.down = none, true
	if ep.probed || p.stop.Err() != nil {
		return // probing already, or closed
	}
	ep.probed = true
	p.wg.Add(1)
	go p.probe(ep)
}

// probe dials ep every interval until it answers, then brings it back.
func (p *Pool[C]) probe(ep *Endpoint[C]) {
	defer p.wg.Done()
	t := time.NewTicker(p.interval)
	defer t.Stop()
	var none C
	for {
		select {
		case <-p.stop.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.interval)
		c, err := ep.dial(ctx)
		if err == nil {
			err = p.check(ctx, c)
		}
		cancel()
		if err != nil {
			if c != none {
				p.close(c)
			}
			continue
		}
		ep.mu.Lock()
		ep.client, ep.down, ep.probed = c, false, false
		ep.mu.Unlock()
		return
	}
}

// Close stops the probes and closes every endpoint's client.
func (p *Pool[C]) Close() {
	p.halt()
	p.wg.Wait()
	var none C
	for _, ep := range p.eps {
		ep.mu.Lock()
		c := ep.client
		ep.client, ep.down = none, true
		ep.mu.Unlock()
		if c != none {
			p.close(c)
		}
	}
}
