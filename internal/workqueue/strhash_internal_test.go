package workqueue

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStrHashDependsOnEveryByteAndTheLength(t *testing.T) {
	const seed = 0x9e3779b97f4a7c15
	seen := map[uint64]string{}
	for n := range 70 {
		base := strings.Repeat("\x00", n)
		h := strHash(base, seed)
		require.NotContains(t, seen, h, "%d zero bytes hash like %q", n, seen[h])
		seen[h] = base
		for i := range n {
			for _, c := range []byte{1, 0x80} {
				b := []byte(base)
				b[i] = c
				require.NotEqual(t, h, strHash(string(b), seed), "length %d, byte %d set to %#x", n, i, c)
			}
		}
	}
}

func TestStrHashDependsOnTheSeed(t *testing.T) {
	for _, k := range []string{"", "a", "obj-1", "ns/obj-12345", strings.Repeat("key", 20)} {
		require.NotEqual(t, strHash(k, 1), strHash(k, 2), "%q", k)
	}
}

// The table takes a key's home slot from the low bits of the hash folded to
// 32 bits, and compares the 32 bits before the key: for keys that differ in
// a digit or two, as object names do, both must look random.
func TestStrHashSpreadsObjectNamesLikeARandomFunction(t *testing.T) {
	const n, m = 100_000, 1 << 18
	for _, prefix := range []string{"obj-", "ns/obj-", "a-rather-long-namespace/and-a-long-object-name-"} {
		var t32 keyTable[string]
		t32.init()
		slots := make([]bool, m)
		full := map[uint32]bool{}
		homes := 0
		for i := range n {
			h := t32.hash(prefix + strconv.Itoa(i))
			if !slots[h&(m-1)] {
				slots[h&(m-1)] = true
				homes++
			}
			full[h] = true
		}
		want := m * (1 - math.Pow(1-1.0/m, n)) // distinct homes of a random function
		require.InDelta(t, want, float64(homes), want*0.01, "%q: distinct home slots", prefix)
		require.GreaterOrEqual(t, len(full), n-10, "%q: distinct 32-bit hashes", prefix)
	}
}

// Which keys collide must depend on the seed, so that keys chosen from
// outside (object names a tenant picks) cannot all fall in one slot: no
// byte pattern may cancel the seed out. Before: 16-byte keys whose first
// 8 bytes were one of the hash's constants all hashed to 0, whatever the
// seed.
func TestStrHashCollisionsCannotBeChosenWithoutTheSeed(t *testing.T) {
	for _, p := range []uint64{0xa0761d6478bd642f, 0xe7037ed1a0b428db} {
		var prefix [8]byte
		for i := range prefix {
			prefix[i] = byte(p >> (8 * i))
		}
		for _, n := range []int{8, 12, 16, 24, 40} {
			for _, seed := range []uint64{1, 0x9e3779b97f4a7c15} {
				hashes := map[uint64]bool{}
				for i := range 1000 {
					k := []byte(strings.Repeat("x", n))
					copy(k, prefix[:])
					copy(k[n-8:], prefix[:]) // the last 8 bytes too
					k[8%n] ^= byte(i)        // vary a byte the pattern leaves
					k[n/2+1] ^= byte(i >> 8)
					k[n-1] ^= byte(i * 7)
					hashes[strHash(string(k), seed)] = true
				}
				require.Greater(t, len(hashes), 200, "constant %#x, length %d, seed %#x: keys built from it collide", p, n, seed)
			}
		}
	}
}
