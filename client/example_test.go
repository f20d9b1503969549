package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"chunklease/client"
	"chunklease/fence"
)

// A chunk primary holds its lease with a Session and writes only through
// Act: Act asks Current (the monotonic clock, now, not a timer) before
// the write and again after it, and the write carries the lease's token,
// so that storage behind package fence (examples/chunkserver) refuses it
// if this primary was paused past its lease and another one has written.
func ExampleClient_NewSession() {
	c, err := client.New(client.Config{Endpoints: strings.Split(os.Getenv("LEASE_ENDPOINTS"), ",")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	s, err := c.NewSession(ctx, "ch_1", "cs1", client.SessionOptions{LeaseMs: 3000})
	cancel()
	switch {
	case errors.Is(err, client.ErrHeld):
		log.Fatalf("another server is primary: %v", err)
	case client.IsUnknown(err):
		log.Fatalf("the grant may have taken effect; retry it: %v", err)
	case err != nil:
		log.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			log.Printf("give back: %v (the lease runs out by itself)", err)
		}
	}()
	store := os.Getenv("CHUNK_STORE") // e.g. examples/chunkserver's URL
	for i := 0; i < 10; i++ {
		_, err := s.Act(func(token int64) error {
			return writeChunk(store, "ch_1", token, fmt.Appendf(nil, "write %d", i))
		})
		switch {
		case errors.Is(err, client.ErrLost), errors.Is(err, client.ErrClosed), errors.Is(err, fence.ErrStale):
			log.Printf("no longer primary: %v", err) // stop acting as primary
			return
		case err != nil:
			log.Printf("write %d failed, still primary: %v", i, err)
		}
	}
}

// writeChunk is one write to examples/chunkserver with the token; a
// refusal of the fence comes back as a *fence.StaleError.
func writeChunk(store, chunk string, token int64, data []byte) error {
	req, err := http.NewRequest(http.MethodPut, store+"/chunks/"+chunk, bytes.NewReader(data))
	if err != nil {
		return err
	}
	fence.SetToken(req.Header, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := fence.Refused(resp); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("the chunk server answered %s", resp.Status)
	}
	return nil
}

// A scheduler runs beside a lease-node member (its client URL below) and
// does the leader's work only through the Mastership's check, handing the
// master lease's token to what it changes.
func ExampleClient_Campaign() {
	node := "http://127.0.0.1:7001" // the member on this host
	c, err := client.New(client.Config{Endpoints: []string{node}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for {
		m, err := c.Campaign(context.Background(), node, client.CampaignOptions{})
		if err != nil {
			log.Fatal(err)
		}
		for {
			held, err := m.Current() // at the moment of acting, from the clock
			if err != nil {
				log.Printf("not leader any more: %v", err)
				break
			}
			schedule(held.Token) // storage refuses a token below the highest it saw
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func schedule(token int64) {}
