package main

// Backend rate limits across replicas: on a postgres store, the replicas
// divide each backend's rateLimit among themselves (runtime.RateShare).
// This process announces itself in the store (store/postgres/replicas.go)
// and counts the live replicas at start and every third of the lease;
// each bucket then refills at its share of the rate. The sum is the
// configured rate once every replica has counted the same number; see
// runtime/ratelimit.go for how close it is in between.

import (
	"context"
	"time"

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/postgres"
)

// shareRates sets lim.Share and keeps it to the count of live replicas
// until the store closes, when the store is postgres and lim has rates.
func (o *ops) shareRates(lim *runtime.CallLimits) {
	db, ok := o.store.(*postgres.Store)
	if !ok || len(lim.Rates) == 0 {
		return
	}
	share := runtime.NewRateShare()
	lim.Share = share
	ctx, cancel := context.WithCancel(context.Background())
	count := func() {
		n, err := db.LiveReplicas(ctx)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				o.log.Warn("counting the replicas that share the backends' rate limits failed; keeping the last count", "replicas", share.Processes(), "err", err)
			}
		case n != share.Processes():
			share.Set(n)
			o.log.Info("backend rate limits shared among replicas", "replicas", max(n, 1))
		}
	}
	if err := db.Announce(ctx); err != nil {
		o.log.Warn("announcing this replica for the shared rate limits failed; it counts the others only", "err", err)
	}
	count()
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(max(db.LeaseTTL()/3, 100*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				count()
			}
		}
	}()
	closeStore := o.close
	o.close = func() error {
		cancel()
		<-done
		return closeStore()
	}
}
