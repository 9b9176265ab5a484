package lease

import (
	"encoding/json"
	"time"
)

// record is the value stored at the leader key. Candidates do not compare
// its timestamps with their own clocks (clocks differ between machines);
// they time how long the key's ModRevision stays unchanged, and use only the
// TTL the leader declared.
type record struct {
	Holder string `json:"holder"`
	// TTLMillis is the lease duration the leader promised to honour.
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
	if r.TTLMillis <= 0 {
		return fallback
	}
	return time.Duration(r.TTLMillis) * time.Millisecond
}
