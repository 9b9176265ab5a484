package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/steady-go/steady/store"
)

// What two replicas share, and what they do not. On etcd, the replicas share
// the desired state (the Groups, created by whichever process comes first),
// the Groups' status, and the election; the leader's writes carry its term's
// fence. The fleet, though, is simulated inside each process: it is each
// replica's own world, and a standby's stays empty while it waits. When a
// standby takes over, its Loop starts the term by reconciling every group
// from the stored state alone, finds none of the instances in its world,
// and rolls all of them out; the statuses the old leader wrote (Ready for
// the old leader's fleet) are corrected from the new leader's observation.
// A real deployment observes one shared fleet, and the new leader would find
// the instances running and write nothing; the demo shows the harder case:
// nothing handed over but the store.
//
// So convergence is judged by the leader only, against its own fleet, and
// the process runs until interrupted: a controller replica's job does not
// end when its fleet converges.

// watchReplica is watch for a replica on a Shared store. While this replica leads, it
// checks every 100ms that the fleet matches the store and prints progress,
// and a summary once per term when the faults have stopped and every group
// converged. While it is a standby it says who leads. It returns nil when
// ctx ends with this replica converged or standing by, and an error if,
// while leading, the fleet has not converged -duration after the later of
// the term's start and the end of the faults.
func watchReplica(ctx context.Context, o options, groups *store.Store[GroupSpec, GroupStatus], fleet *Fleet,
	e Elector, chaosDone <-chan struct{}, out *printer, snapshot func() counts) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var (
		reported  int       // the term whose convergence was reported; 0 none
		standing  bool      // the standby note was printed for this wait
		faultsEnd time.Time // when this watch first saw the faults stopped
		lastErr   string
	)
	for {
		select {
		case <-ctx.Done():
			if leading, _, terms := e.State(); leading && reported != terms {
				return fmt.Errorf("stopped before converging: %w", context.Cause(ctx))
			}
			return nil
		case <-t.C:
		}
		if faultsEnd.IsZero() && isClosed(chaosDone) {
			faultsEnd = time.Now()
		}
		leading, since, terms := e.State()
		if !leading {
			if !standing {
				// Only once another replica holds the key: at the start,
				// this one may be about to.
				if who := e.Leader(ctx); who != "" && who != e.Replica() {
					standing = true
					out.note("standby: replica %s leads; this one takes over when that lease lapses (TTL %v)", who, e.TTL())
				}
			}
			continue
		}
		standing = false
		c, err := checkStore(ctx, groups, fleet)
		if err != nil {
			if ctx.Err() == nil && err.Error() != lastErr {
				lastErr = err.Error()
				out.note("cannot read the groups (retrying): %v", err)
			}
			continue
		}
		lastErr = ""
		s := snapshot()
		if reported == terms {
			// Converged in this term: speak again only if it drifts.
			if c.converged != c.total {
				out.progress(c, s, false)
			}
			continue
		}
		if !faultsEnd.IsZero() && c.converged == c.total {
			out.progress(c, s, true)
			out.note("replica %s converged the fleet %.1fs into its term %d", e.Replica(), time.Since(since).Seconds(), terms)
			out.summary(c, s)
			reported = terms
			continue
		}
		out.progress(c, s, false)
		if !faultsEnd.IsZero() {
			from := since
			if faultsEnd.After(from) {
				from = faultsEnd
			}
			if time.Since(from) > o.duration {
				out.progress(c, s, true)
				return fmt.Errorf("not converged %v into the term and after the faults: %d of %d groups match the store; first: %s",
					o.duration, c.converged, c.total, c.firstBad)
			}
		}
	}
}
