// Package browsertest tests the debug page (package debugpage) in a real
// headless Chromium driven through the Chrome DevTools Protocol
// (github.com/chromedp/chromedp). It is a nested module so that the root
// module does not depend on chromedp. The test needs a chromium binary on
// PATH (Debian: apt-get install chromium); it skips without one, except
// under CI (CI set), where it fails.
package browsertest
