package loopport

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Low is the lowest port handed out: below it lie well-known services.
const Low = 10000

// tries bounds the walk for one port.
const tries = 1000

// Picker hands out free loopback ports in [Low, EphemeralLow()), each
// once. Its methods may be called from several goroutines.
type Picker struct {
	mu    sync.Mutex
	taken map[int]bool
	rng   *rand.Rand
}

// New is a Picker whose walk follows seed (a run that prints its seed
// repeats its choices, where the ports are free).
func New(seed uint64) *Picker {
	return &Picker{taken: map[int]bool{}, rng: rand.New(rand.NewPCG(seed, 0x706f7274))}
}

// Next is a port that was free when it was checked (listened on and
// closed) and that this Picker has not handed out before.
func (p *Picker) Next() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	high := EphemeralLow()
	for range tries {
		port := Low + p.rng.IntN(high-Low)
		if p.taken[port] {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil { // in use by someone else
			continue
		}
		ln.Close()
		p.taken[port] = true
		return port, nil
	}
	return 0, errors.New("loopport: no free loopback port below the ephemeral range in 1000 tries")
}

// NextAddr is Next as "127.0.0.1:PORT".
func (p *Picker) NextAddr() (string, error) {
	port, err := p.Next()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

// EphemeralLow is the first port of the kernel's ephemeral range, 32768
// (Linux's default) where it cannot be read or lies implausibly low.
func EphemeralLow() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > Low+1000 {
				return v
			}
		}
	}
	return 32768
}
