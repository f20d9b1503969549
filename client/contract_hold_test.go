package client_test

import (
	"context"
	"testing"
	"time"

	"chunklease/client"
)

// TestContractMasterTokensGrow: the token a leader acts with, read by
// Mastership.Act at the moment of acting, is above the previous leader's
// (a campaign on the first member, resigned, then one on the second,
// which waits until the first's announced mastership ran out).
func TestContractMasterTokensGrow(t *testing.T) {
	c, endpoints := underTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	var last int64
	for _, ep := range endpoints[:2] {
		m, err := c.Campaign(ctx, ep, client.CampaignOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var token int64
		acted, err := m.Act(func(tok int64) error { token = tok; return nil })
		if err != nil || !acted.Held || token <= last || acted.Token != token {
			t.Fatalf("leader %s acted with token %d (%+v, %v); want the lease held and a token above the last leader's %d", ep, token, acted, err, last)
		}
		last = token
		if err := m.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Current(); err == nil {
			t.Fatalf("Current after Resign said the mastership holds")
		}
	}
}
