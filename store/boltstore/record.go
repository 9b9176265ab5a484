package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/steady-go/steady/store/kv"
)

// The file holds three buckets:
//
//   - kvs: one record per live key, keyed by the key: its CreateRevision,
//     ModRevision and value.
//   - log: one record per retained write, keyed by its revision (8 bytes,
//     big-endian, so the bucket is in revision order): the key, its state
//     after the write and its state before. It is the history that watches
//     resume from and that pinned List pages are rebuilt from.
//   - meta: the state record: the format version, the store revision and
//     the history floor (the oldest revision the log keeps).
//
// Every record carries a CRC-32C of its bucket key and contents, so a
// damaged record is reported (ErrCorrupt) rather than served; bbolt itself
// checksums only its meta pages.
var (
	bucketKVs  = []byte("kvs")
	bucketLog  = []byte("log")
	bucketMeta = []byte("meta")
	keyState   = []byte("state")
)

// formatVersion is the version of the record layout in the state record.
const formatVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by the errors of a file whose contents are damaged:
// Open refuses such a file, and a record found damaged later is reported
// rather than served.
var ErrCorrupt = errors.New("boltstore: file is corrupt")

func sum(key, rest []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, rest)
}

// seal writes the checksum of key and rec[4:] into rec[:4].
func seal(key, rec []byte) []byte {
	binary.BigEndian.PutUint32(rec, sum(key, rec[4:]))
	return rec
}

func checkSum(bucket, key, rec []byte) error {
	if len(rec) < 4 || binary.BigEndian.Uint32(rec) != sum(key, rec[4:]) {
		return fmt.Errorf("%w: checksum mismatch in record %q of bucket %s", ErrCorrupt, key, bucket)
	}
	return nil
}

// state is the meta bucket's one record.
type state struct {
	rev   int64 // the store revision
	floor int64 // the oldest revision whose write the log keeps; rev+1 when none
}

func (s state) encode() []byte {
	rec := make([]byte, 4, 21)
	rec = append(rec, formatVersion)
	rec = binary.BigEndian.AppendUint64(rec, uint64(s.rev))
	rec = binary.BigEndian.AppendUint64(rec, uint64(s.floor))
	return seal(keyState, rec)
}

func decodeState(rec []byte) (state, error) {
	if err := checkSum(bucketMeta, keyState, rec); err != nil {
		return state{}, err
	}
	if len(rec) != 21 {
		return state{}, fmt.Errorf("%w: state record of %d bytes", ErrCorrupt, len(rec))
	}
	if rec[4] != formatVersion {
		return state{}, fmt.Errorf("boltstore: file format version %d, this package reads %d", rec[4], formatVersion)
	}
	s := state{rev: int64(binary.BigEndian.Uint64(rec[5:])), floor: int64(binary.BigEndian.Uint64(rec[13:]))}
	if s.rev < 0 || s.floor < 1 || s.floor > s.rev+1 {
		return state{}, fmt.Errorf("%w: state record has revision %d and history floor %d", ErrCorrupt, s.rev, s.floor)
	}
	return s, nil
}

// encodeKV returns the kvs record of a key.
func encodeKV(key []byte, create, mod int64, value []byte) []byte {
	rec := make([]byte, 4, 4+2*binary.MaxVarintLen64+len(value))
	rec = binary.AppendUvarint(rec, uint64(create))
	rec = binary.AppendUvarint(rec, uint64(mod))
	rec = append(rec, value...)
	return seal(key, rec)
}

// decodeKV decodes a kvs record. The Value aliases rec: the caller copies it
// before the transaction ends.
func decodeKV(key, rec []byte) (kv.KeyValue, error) {
	if err := checkSum(bucketKVs, key, rec); err != nil {
		return kv.KeyValue{}, err
	}
	d := decoder{b: rec[4:]}
	kvp := kv.KeyValue{Key: string(key), CreateRevision: d.int(), ModRevision: d.int()}
	kvp.Value = d.b
	if d.bad || kvp.CreateRevision < 1 || kvp.ModRevision < kvp.CreateRevision {
		return kv.KeyValue{}, fmt.Errorf("%w: malformed record of key %q", ErrCorrupt, key)
	}
	return kvp, nil
}

// revKey is the log key of revision rev.
func revKey(rev int64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(rev)) }

// encodeEvent returns the log record of a write at revision rev to key:
// after is its state after the write (ignored for a delete) and prev the
// state before (the zero KV for a create).
func encodeEvent(rev int64, del bool, key string, create int64, value []byte, prev kv.KeyValue) []byte {
	rec := make([]byte, 5, 5+5*binary.MaxVarintLen64+len(key)+len(value)+len(prev.Value))
	if del {
		rec[4] = 1
	}
	rec = binary.AppendUvarint(rec, uint64(len(key)))
	rec = append(rec, key...)
	rec = binary.AppendUvarint(rec, uint64(create))
	rec = binary.AppendUvarint(rec, uint64(len(value)))
	rec = append(rec, value...)
	rec = binary.AppendUvarint(rec, uint64(prev.CreateRevision))
	rec = binary.AppendUvarint(rec, uint64(prev.ModRevision))
	rec = append(rec, prev.Value...)
	return seal(revKey(rev), rec)
}

// eventKey returns the key a log record writes, without checking or
// decoding the rest; it aliases rec.
func eventKey(rec []byte) ([]byte, bool) {
	if len(rec) < 5 {
		return nil, false
	}
	d := decoder{b: rec[5:]}
	k := d.bytes()
	return k, !d.bad
}

// decodeEvent decodes the log record of revision rev. Its values alias rec.
func decodeEvent(rev int64, rec []byte) (kv.Event, error) {
	if err := checkSum(bucketLog, revKey(rev), rec); err != nil {
		return kv.Event{}, err
	}
	if len(rec) < 5 || rec[4] > 1 {
		return kv.Event{}, fmt.Errorf("%w: malformed history record of revision %d", ErrCorrupt, rev)
	}
	d := decoder{b: rec[5:]}
	key := string(d.bytes())
	ev := kv.Event{Type: kv.EventPut, Revision: rev}
	ev.KV = kv.KeyValue{Key: key, CreateRevision: d.int(), Value: d.bytes(), ModRevision: rev}
	ev.Prev.CreateRevision, ev.Prev.ModRevision = d.int(), d.int()
	ev.Prev.Value = d.b
	if ev.Prev.ModRevision != 0 {
		ev.Prev.Key = key
	}
	if rec[4] == 1 {
		ev.Type = kv.EventDelete
		ev.KV.CreateRevision, ev.KV.Value = 0, nil
	}
	if d.bad || key == "" || ev.Prev.ModRevision >= rev ||
		(ev.Type == kv.EventPut && (ev.KV.CreateRevision < 1 || ev.KV.CreateRevision > rev)) ||
		(ev.Type == kv.EventDelete && ev.Prev.ModRevision == 0) {
		return kv.Event{}, fmt.Errorf("%w: malformed history record of revision %d", ErrCorrupt, rev)
	}
	return ev, nil
}

// decoder reads uvarints and length-prefixed bytes; bad is set by the first
// malformed read, after which reads return zero values.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) int() int64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > 1<<62 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return int64(v)
}

func (d *decoder) bytes() []byte {
	n := d.int()
	if d.bad || n > int64(len(d.b)) {
		d.bad, d.b = true, nil
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}
