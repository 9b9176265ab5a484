module github.com/steady-go/steady/debugpage/browsertest

go 1.26.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/steady-go/steady v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/time v0.16.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/steady-go/steady => ../..
