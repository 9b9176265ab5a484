package ownership

import "testing"

// The package doc's figure: three managers owning interleaved fields of a
// Pod-sized object encode together, with a Codec, in about 4% of the
// object's JSON size (3.7% measured), where the self-contained form
// (Set.Encode) needs more than the JSON itself.
func TestThreeManagersEncodeInAboutFourPercentOfThePodsJSON(t *testing.T) {
	r := threeManagers(t)
	c := NewCodec(r.Object, podSchema)
	json := podJSONSize(t)
	pct := 100 * float64(encodedSize(c, r.Managed)) / float64(json)
	self := 0
	for _, e := range r.Managed {
		self += len(e.Set.Encode())
	}
	t.Logf("codec: %.1f%% of %d bytes of JSON; self-contained: %d bytes", pct, json, self)
	if pct > 5 {
		t.Errorf("three managers' sets take %.1f%% of the Pod's JSON, want about 4%%", pct)
	}
	if self <= json {
		t.Errorf("the self-contained form takes %d bytes, the doc says more than the JSON's %d", self, json)
	}
}
