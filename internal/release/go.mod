module github.com/steady-go/steady/internal/release

go 1.26.0

require golang.org/x/mod v0.43.0

require go.uber.org/goleak v1.3.0
