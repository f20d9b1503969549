package client_test

import (
	"context"
	"errors"
	"log"
	"os"
	"strings"
	"time"

	"chunklease/client"
)

// A chunk server holds its primary lease with a Session and attaches the
// fencing token to every write; it stops writing when Done closes.
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
	for i := 0; i < 10; i++ {
		select {
		case <-s.Done():
			log.Printf("no longer primary: %v", s.Err())
			return
		default:
		}
		write(s.Token()) // storage refuses tokens older than the newest it saw
	}
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		log.Printf("give back: %v (the lease runs out by itself)", err)
	}
}

// A scheduler runs beside a lease-node member (its client URL below) and
// does the leader's work only while that member is master.
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
		for lead := true; lead; {
			select {
			case <-m.Done():
				log.Printf("not leader any more: %v", m.Err())
				lead = false
			case <-time.After(100 * time.Millisecond):
				if time.Now().Before(m.Until()) {
					schedule()
				}
			}
		}
	}
}

func write(token int64) {}
func schedule()         {}
