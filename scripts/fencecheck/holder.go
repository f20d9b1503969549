package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"chunklease/client"
	"chunklease/fence"
)

// actRecord is one act in a holder's log (one JSON line each).
type actRecord struct {
	Holder  string `json:"holder"`
	Session int    `json:"session"` // the holder's session number, from 1
	Token   int64  `json:"token"`
	FromNs  int64  `json:"from_ns"` // CLOCK_MONOTONIC, widened early
	ToNs    int64  `json:"to_ns"`   // CLOCK_MONOTONIC, widened late
	// Held: the holder found the lease held both before and after the
	// write (Act's Held; with -done-only, Done open at both ends).
	Held  bool   `json:"held"`
	Write string `json:"write"` // accepted, refused (409) or failed
}

// sessionRecord is one session the holder started.
type sessionRecord struct {
	Holder  string `json:"holder"`
	Session int    `json:"session"`
	Token   int64  `json:"token"`
	Event   string `json:"event"` // "session"
}

// holder is one holder process.
type holder struct {
	id, chunk, store string
	leaseMs          int64
	doneOnly         bool
	c                *client.Client
	httpc            *http.Client
	clock            monoClock
	log              *json.Encoder
	rng              *rand.Rand
	// live is the number of the session held now (0 between sessions);
	// pauseIn is the session SIGUSR1 came in: the holder stops between
	// its next check and its write only within that session. A request
	// lapses with the session it came in: a holder that gave the lease
	// back (its holding time was up) just as it was asked does not stop
	// at some act of a later session, which no one waits for.
	live, pauseIn atomic.Int64
	resume        chan struct{} // a line on stdin: the pause is over
	sessions, seq int
}

// holderCommand runs `fencecheck holder`: compete for the chunk until
// SIGTERM, hold it for a while (1 to 3 s, or until lost), write through
// the chunk server about every 20 ms, give it back, wait 200 to 400 ms,
// compete again.
func holderCommand(args []string) error {
	fs := flag.NewFlagSet("holder", flag.ContinueOnError)
	id := fs.String("id", "", "this holder's server name")
	endpoints := fs.String("endpoints", "", "the members' client URLs (through this holder's proxies)")
	store := fs.String("store", "", "the chunk server's URL")
	chunk := fs.String("chunk", "ch_1", "the chunk to hold and write")
	leaseMs := fs.Int64("lease-ms", 1000, "lease length")
	logPath := fs.String("log", "", "the acts' log (JSON lines)")
	doneOnly := fs.Bool("done-only", false, "act while Done is open, without Current or Act (the negative control)")
	seed := fs.Uint64("seed", 1, "seed of the holding times")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := os.Create(*logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := client.New(client.Config{Endpoints: strings.Split(*endpoints, ",")})
	if err != nil {
		return err
	}
	defer c.Close()
	h := &holder{id: *id, chunk: *chunk, store: *store, leaseMs: *leaseMs, doneOnly: *doneOnly, c: c,
		httpc: &http.Client{Timeout: 2 * time.Second}, clock: newMonoClock(), log: json.NewEncoder(f),
		rng: rand.New(rand.NewPCG(*seed, 26)), resume: make(chan struct{}, 1)}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			h.pauseIn.Store(h.live.Load())
		}
	}()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			h.resume <- struct{}{}
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	for ctx.Err() == nil {
		h.holdOnce(ctx)
	}
	return nil
}

// holdOnce takes the lease (or waits a little if another holds it),
// writes under it until the holding time is up or the lease is lost, and
// gives it back.
func (h *holder) holdOnce(ctx context.Context) {
	gctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	s, err := h.c.NewSession(gctx, h.chunk, h.id, client.SessionOptions{LeaseMs: h.leaseMs, Seed: h.rng.Uint64()})
	cancel()
	if err != nil {
		sleepCtx(ctx, time.Duration(50+h.rng.IntN(100))*time.Millisecond)
		return
	}
	h.sessions++
	h.live.Store(int64(h.sessions))
	h.log.Encode(sessionRecord{Holder: h.id, Session: h.sessions, Token: s.Token(), Event: "session"})
	until := time.Now().Add(time.Duration(1000+h.rng.IntN(2000)) * time.Millisecond)
	for ctx.Err() == nil && time.Now().Before(until) {
		var more bool
		if h.doneOnly {
			more = h.actOnDone(ctx, s)
		} else {
			more = h.act(ctx, s)
		}
		if !more {
			break
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
	h.live.Store(0)
	closeCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	s.Close(closeCtx)
	cancel()
	// Give the others a turn: the holder that just gave the lease back
	// would otherwise ask first and take it again.
	sleepCtx(ctx, time.Duration(200+h.rng.IntN(200))*time.Millisecond)
}

// act is the documented pattern: Session.Act asks Current before and
// after, and the write carries the token. It reports whether to go on
// holding: not after a loss or a refusal.
func (h *holder) act(ctx context.Context, s *client.Session) bool {
	var write string
	acted, err := s.Act(func(token int64) error {
		h.maybePause(ctx, token)
		write = h.put(ctx, token)
		return nil
	})
	if acted.Token == 0 {
		// Current refused: the lease is lost or may have ended. After a
		// pause or a cut this is the check that keeps the holder out.
		h.log.Encode(pauseRecord{Holder: h.id, Event: "check-refused", AtNs: monoNow()})
		return false
	}
	h.record(acted.Token, acted.From, acted.To, acted.Held, write)
	return err == nil && write != "refused"
}

// actOnDone is the negative control: a holder that believes Done alone.
func (h *holder) actOnDone(ctx context.Context, s *client.Session) bool {
	if isClosed(s.Done()) {
		return false
	}
	token, from := s.Token(), time.Now()
	h.maybePause(ctx, token)
	write := h.put(ctx, token)
	to := time.Now()
	h.record(token, from, to, !isClosed(s.Done()), write)
	return write != "refused"
}

func (h *holder) record(token int64, from, to time.Time, held bool, write string) {
	h.log.Encode(actRecord{Holder: h.id, Session: h.sessions, Token: token,
		FromNs: h.clock.early(from), ToNs: h.clock.late(to), Held: held, Write: write})
}

// maybePause holds this act between its check and its write when
// SIGUSR1 asked for it in this session: the worst moment a pause can hit
// a holder. It
// says so on stdout ("paused TOKEN") and waits for a line on stdin; the
// orchestrator SIGSTOPs the process meanwhile and continues it once
// another holder's newer token was accepted. (A process cannot stop
// itself at an exact point: kill(self, SIGSTOP) returns before every
// thread has stopped, and the write could go out first.)
func (h *holder) maybePause(ctx context.Context, token int64) {
	if live := h.live.Load(); live == 0 || !h.pauseIn.CompareAndSwap(live, 0) {
		return
	}
	h.log.Encode(pauseRecord{Holder: h.id, Event: "paused", Token: token, AtNs: monoNow()})
	fmt.Printf("paused %d\n", token)
	select {
	case <-h.resume:
	case <-ctx.Done():
	}
	h.log.Encode(pauseRecord{Holder: h.id, Event: "resumed", Token: token, AtNs: monoNow()})
}

// pauseRecord marks a pause between a check and its write, or a check
// that refused to act.
type pauseRecord struct {
	Holder string `json:"holder"`
	Event  string `json:"event"` // paused, resumed, check-refused
	Token  int64  `json:"token"`
	AtNs   int64  `json:"at_ns"`
}

// put writes the chunk with the token: accepted (204), refused (409:
// a newer holder wrote), or failed.
func (h *holder) put(ctx context.Context, token int64) string {
	h.seq++
	body, _ := json.Marshal(map[string]any{"holder": h.id, "seq": h.seq})
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, h.store+"/chunks/"+h.chunk, bytes.NewReader(body))
	if err != nil {
		return "failed"
	}
	fence.SetToken(req.Header, token)
	resp, err := h.httpc.Do(req)
	if err != nil {
		return "failed"
	}
	defer resp.Body.Close()
	refused := fence.Refused(resp)
	io.Copy(io.Discard, resp.Body)
	switch {
	case refused != nil:
		return "refused" // a newer holder wrote: this one is deposed
	case resp.StatusCode == http.StatusNoContent:
		return "accepted"
	}
	return "failed"
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
