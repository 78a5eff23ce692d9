package nats_test

import (
	"slices"
	"testing"
	"time"
)

func BenchmarkTmpClientLatency(b *testing.B) {
	n := newNode(b, nil)
	s := n.mustSubscribe(b)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		n.subs.Publish(b.Context(), "news", i)
		if ev, err := s.Next(b.Context()); err != nil || ev != i {
			b.Fatal(ev, err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/1e3, "p50-us")
}
