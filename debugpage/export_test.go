package debugpage

import "io/fs"

// Assets exposes the embedded files to the tests.
func Assets() fs.FS { return assets }
