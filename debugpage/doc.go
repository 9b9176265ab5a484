// Package debugpage serves a live, read-only status page for Loops and
// caches, and the JSON it is built from: an http.Handler to mount on your
// own mux. It answers the operator's question "why is this object not
// converging, and when will it run again?" on one page.
//
//	page := debugpage.New()
//	page.AddLoop(loop)              // any *reconcile.Loop
//	page.AddCache("apps", appCache) // any *cache.Cache
//	mux.Handle("/debug/steady/", http.StripPrefix("/debug/steady", page))
//
// The page (GET /) shows, refreshed every two seconds:
//   - every Loop: workers busy and idle, leading or standby (with the term's
//     fence), and its queue by state: ready, processing, delayed, backing
//     off, held after an oscillation;
//   - every key that is not idle: its phase, why it waits and until when,
//     consecutive failures and when it last failed, last error, last
//     result and duration, its conditions, and the oscillation report with
//     the flipping fields (collapsed); stalled and oscillating keys first,
//     with a search box. Its Stalled label is the object's Stalled
//     condition when the object has one (never "Stalled" beside
//     Stalled=False); a row is at most two lines (long texts clipped, the
//     whole in the tooltip) and keys never wrap;
//   - the recent failures of every Loop (the last failure of the 20 keys
//     that failed last, with time, attempt and reconcile ID), which stay
//     after the keys went idle: failures that back off in milliseconds
//     are seen here;
//   - the recent events (WithEvents): type, reason, object, message, count;
//   - every cache: synced, revision, objects, and relists, drift repairs
//     and undecodable values where the cache counts them.
//
// The JSON endpoints, all GET:
//
//	/api/loops            []LoopView     every Loop's status
//	/api/keys?loop=&q=    []KeyView      non-idle keys, of one Loop or all, whose key contains q
//	/api/caches           []CacheView
//	/api/object?loop=&key=               the object, only with WithObjects
//	/api/events?kind=&name= EventsView   recent events, or one object's stored ones (WithEvents)
//
// It is safe by default: the handler never changes anything (any method
// but GET and HEAD gets 405), it serves no object bodies unless WithObjects
// enables them, and error texts are cut to MaxErrorBytes, the cut's mark included. The assets are
// embedded: the page fetches nothing from outside. It needs only the
// standard library and steady's own packages. Protect the mount point as you would /debug/pprof.
package debugpage
