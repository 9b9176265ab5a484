package lease

import (
	"encoding/json"
	"math"
	"time"
)

// record is the value stored at the leader key. Candidates do not compare
// its timestamps with their own clocks (clocks differ between machines);
// they time how long the key's ModRevision stays unchanged, and use only the
// TTL the leader declared.
type record struct {
	Holder string `json:"holder"`
	// TTLMillis is the lease duration the leader promised to honour, in
	// milliseconds rounded up (see ttlMillis).
	TTLMillis int64 `json:"ttlMillis"`
	// Renewed is the leader's clock at the renewal, for people reading it.
	Renewed time.Time `json:"renewed"`
}

func (r record) encode() ([]byte, error) { return json.Marshal(r) }

// decodeRecord parses a leader key's value. A value that is not a record (a
// foreign or corrupt key) decodes to a zero record, whose holder matches no
// candidate and whose TTL falls back to the reader's own.
func decodeRecord(b []byte) record {
	var r record
	if json.Unmarshal(b, &r) != nil {
		return record{}
	}
	return r
}

func (r record) ttl(fallback time.Duration) time.Duration {
	switch {
	case r.TTLMillis <= 0:
		return fallback
	case r.TTLMillis > math.MaxInt64/int64(time.Millisecond):
		return math.MaxInt64 // not a negative duration, which would expire at once
	}
	return time.Duration(r.TTLMillis) * time.Millisecond
}

// ttlMillis is d in whole milliseconds, rounded up: a candidate must not
// time the lease shorter than the leader keeps it, or it could take over
// while the leader still works (a TTL of 1.9ms recorded as 1ms was taken
// over before the leader stopped at 1.27ms).
func ttlMillis(d time.Duration) int64 {
	ms := d.Milliseconds()
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}
