// Package ratelimit implements a token bucket and an HTTP middleware that uses it.
package ratelimit

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ErrLimited is returned when a request exceeds the bucket's rate.
var ErrLimited = errors.New("rate limited")

// Bucket is a token bucket refilled continuously at Rate tokens per second.
type Bucket struct {
	mu       sync.Mutex
	rate     float64
	capacity float64
	tokens   float64
	last     time.Time
	now      func() time.Time
}

// NewBucket returns a full bucket.
func NewBucket(rate float64, capacity int, now func() time.Time) *Bucket {
	if now == nil {
		now = time.Now
	}
	return &Bucket{rate: rate, capacity: float64(capacity), tokens: float64(capacity), last: now(), now: now}
}

// Take removes n tokens, or reports how long to wait until they are available.
func (b *Bucket) Take(n int) (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	elapsed := now.Sub(b.last).Seconds()
	b.last = now
	b.tokens += elapsed * b.rate
	if b.tokens > b.capacity {
		b.tokens = b.capacity
	}
	need := float64(n)
	if need > b.capacity {
		return 0, errors.New("request larger than bucket capacity")
	}
	if b.tokens >= need {
		b.tokens -= need
		return 0, nil
	}
	wait := time.Duration((need - b.tokens) / b.rate * float64(time.Second))
	return wait, ErrLimited
}

// Limiter keeps one bucket per client address.
type Limiter struct {
	mu       sync.Mutex
	buckets  map[string]*Bucket
	rate     float64
	capacity int
}

// NewLimiter makes a limiter that allows rate requests per second with bursts of capacity.
func NewLimiter(rate float64, capacity int) *Limiter {
	return &Limiter{buckets: make(map[string]*Bucket), rate: rate, capacity: capacity}
}

func (l *Limiter) bucket(key string) *Bucket {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		b = NewBucket(l.rate, l.capacity, nil)
		l.buckets[key] = b
	}
	return b
}

// Middleware rejects requests over the limit with 429 and a Retry-After header.
func (l *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		wait, err := l.bucket(host).Take(1)
		if err != nil {
			seconds := int(wait.Seconds()) + 1
			w.Header().Set("Retry-After", strconv.Itoa(seconds))
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}
