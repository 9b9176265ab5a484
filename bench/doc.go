// Package bench holds side-by-side benchmarks of steady against the
// libraries its users would otherwise pick, chiefly client-go's workqueue.
// It is measurement only: it has no API, nothing imports it, and it is a
// separate module so that client-go never enters steady's own dependency
// graph. Run it with
//
//	cd bench && go test -run '^$' -bench . -benchmem .
package bench
