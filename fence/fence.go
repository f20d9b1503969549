package fence

import (
	"errors"
	"fmt"
	"sync"
)

// ErrStale matches a *StaleError: a token below the highest accepted.
var ErrStale = errors.New("stale fencing token")

// ErrBadToken is a token that is not a lease token at all: missing, not
// an integer, or not in 0 < token < 2^53.
var ErrBadToken = errors.New("bad fencing token")

// maxToken bounds tokens as the lease service does (contract section 1:
// every number on the wire stays below 2^53).
const maxToken = 1<<53 - 1

// StaleError is a refused write: Token is below Highest, the highest
// token accepted for Resource.
type StaleError struct {
	Resource string
	Token    int64
	Highest  int64
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("fence: %q refused token %d: a write with token %d was accepted already, so this writer's lease was superseded; stop acting as primary (take the lease again to write)",
		e.Resource, e.Token, e.Highest)
}

// Is makes errors.Is(err, ErrStale) true.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// Fence keeps, per resource, the highest token accepted. The zero value
// is not usable; call New. It is safe for concurrent use.
type Fence struct {
	mu        sync.Mutex
	resources map[string]*resource
}

// resource is one resource's record; its lock is held across a write.
type resource struct {
	mu      sync.Mutex
	highest int64
}

// New returns a Fence that has accepted no token.
func New() *Fence { return &Fence{resources: map[string]*resource{}} }

func (f *Fence) get(name string) *resource {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.resources[name]
	if r == nil {
		r = &resource{}
		f.resources[name] = r
	}
	return r
}

// Do runs write if token is at least the highest token accepted for
// resource, recording token first; otherwise it returns a *StaleError and
// write does not run. The check, the record and write happen under
// resource's lock, so writes to one resource run one at a time and in
// token order; keep write to the change itself. Do returns write's error
// (the token stays recorded: see the package documentation), or an error
// matching ErrBadToken for a token outside 0 < token < 2^53.
func (f *Fence) Do(resource string, token int64, write func() error) error {
	if err := checkRange(token); err != nil {
		return err
	}
	r := f.get(resource)
	r.mu.Lock()
	defer r.mu.Unlock()
	if token < r.highest {
		return &StaleError{Resource: resource, Token: token, Highest: r.highest}
	}
	r.highest = token
	return write()
}

// Highest is the highest token accepted for resource, 0 if none. It
// waits for a write in progress on resource.
func (f *Fence) Highest(resource string) int64 {
	f.mu.Lock()
	r := f.resources[resource]
	f.mu.Unlock()
	if r == nil {
		return 0 // asking records nothing
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.highest
}

// Raise records token for resource as if a write with it had been
// accepted (never lowering the record): for storage that kept its
// highest tokens durably and loads them back at start.
func (f *Fence) Raise(resource string, token int64) error {
	if err := checkRange(token); err != nil {
		return err
	}
	r := f.get(resource)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.highest = max(r.highest, token)
	return nil
}

func checkRange(token int64) error {
	if token <= 0 || token > maxToken {
		return fmt.Errorf("%w: %d is not a lease token (0 < token < 2^53); take it from the lease's grant or renewal", ErrBadToken, token)
	}
	return nil
}
